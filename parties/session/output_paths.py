"""Where a run or a command writes, checked before any work so a bad path is one line naming it, never a traceback.

* :func:`output_file` / :func:`plot_file` -- a file to write (the caller then writes exactly that path);
  :func:`plot_suffixes` -- the suffixes matplotlib can write.
* :func:`output_dir` -- a directory to write into (created if missing).
* :func:`run_files` / :func:`fresh_output_dir` -- one run per directory: an earlier run's files, or another
  kind of run's result document (:data:`RUN_RESULTS`), are refused (or, with ``force``, deleted).

The ``name`` of each is the option or keyword the user gave the path with (``"--out"``, ``"out"``), for the error.

Within :func:`reading` (every ``mpdp`` command runs in one, :func:`mpdp.parties.cli.args.command_output`), a file
to write that is one of the command's inputs is refused: ``mpdp export RUN --out RUN/transcripts.sqlite`` would
replace the run's transcript store with its CSV, ``mpdp accuracy --config a.toml --json a.toml`` the config it read.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from pathlib import Path

from mpdp.protocols.errors import ParameterError

__all__ = ["READ_IN_FOLDERS", "RUN_RESULTS", "fresh_output_dir", "output_dir", "output_file", "plot_file",
           "plot_suffixes", "reading", "run_files"]

#: The result document each kind of run writes into its folder, and the kind (``mpdp report`` reads it).
RUN_RESULTS = {"results.json": "simulate", "sweep.json": "sweep", "decisions.json": "deployment"}

#: The files mpdp reads in a folder it is given (a run's ``--out``: its store and result document; a key folder's
#: roster): inputs when the folder is one.
READ_IN_FOLDERS = ("transcripts.sqlite", "transcripts.sqlite-wal", "transcripts.sqlite-shm", *RUN_RESULTS,
                   "roster.json")

#: The files the running command reads (set by :func:`reading`): (the file, the input path it was given as).
_inputs: ContextVar[tuple[tuple[Path, str], ...]] = ContextVar("mpdp_command_inputs", default=())


@contextlib.contextmanager
def reading(paths: Iterable[str | os.PathLike[str]]) -> Iterator[None]:
    """Within the block, :func:`output_file` and :func:`fresh_output_dir` refuse to write a file that is one of
    ``paths`` (the command's inputs), or one of :data:`READ_IN_FOLDERS` in an input that is a folder: the same
    file by :func:`os.path.samefile` (through links, and a relative path or not). Paths that do not exist (a
    dataset's name, a number) are no files and are left out."""
    files: list[tuple[Path, str]] = []
    for given in paths:  # os.path's tests: False for a text no file can have (too long, a NUL), not an error
        path = Path(given)
        if os.path.isdir(path):
            files.extend((path / name, os.fspath(given)) for name in READ_IN_FOLDERS if os.path.isfile(path / name))
        elif os.path.isfile(path):
            files.append((path, os.fspath(given)))
    token = _inputs.set(tuple(files))
    try:
        yield
    finally:
        _inputs.reset(token)


def _not_an_input(target: Path, name: str, text: str) -> None:
    """ParameterError when ``target`` is one of the files of :func:`reading` (it names the input)."""
    for source, given in _inputs.get():
        with contextlib.suppress(OSError):  # a file gone since, or none yet: not the same file
            if os.path.samefile(target, source):
                where = "" if os.fspath(source) == given else f", in the folder {given} given as an input"
                raise ParameterError(name, text, "a file other than the command's inputs",
                                     hint=f"it is the input {source}{where}; writing it would destroy it")


def plot_suffixes() -> tuple[str, ...]:
    """The file suffixes matplotlib can write (``"png"``, ``"pdf"``, ``"svg"``, ...), sorted, no dot."""
    from matplotlib.backend_bases import FigureCanvasBase

    return tuple(sorted(FigureCanvasBase.get_supported_filetypes()))


def _writable_dir(directory: Path) -> bool:
    return directory.is_dir() and os.access(directory, os.W_OK | os.X_OK)


def output_file(path: str | os.PathLike[str], name: str, suffixes: Iterable[str] | None = None) -> Path:
    """Check, before any work, that the command can write the file ``path``; return it as a Path.

    The command must then write exactly this path (no suffix added) and print it. Pass the option's
    text as given (argparse ``type=str``): ``Path("")`` is ``"."``, so an empty path would not be seen.

    Args:
        path: the file to write (created or overwritten).
        name: the option (``"--plot"``), for the error message.
        suffixes: the allowed suffixes without the dot, case-insensitive (None: any).

    Raises:
        ParameterError: an empty path, a directory, a suffix not in ``suffixes`` (or none), a missing
            parent directory, or one the process cannot write in (also a file it cannot overwrite).
    """
    text = os.fspath(path)
    if not text.strip():
        raise ParameterError(name, text, "a file path (not empty)")
    target = Path(text)
    if target.is_dir():
        raise ParameterError(name, text, "a file path, not a directory")
    _not_an_input(target, name, text)
    if suffixes is not None:
        allowed = tuple(suffixes)
        if target.suffix[1:].lower() not in allowed:
            raise ParameterError(name, text, "a file name ending in one of ." + ", .".join(allowed))
    parent = target.parent
    if not parent.is_dir():
        raise ParameterError(name, text, f"a file in an existing directory ({parent} does not exist)")
    if not _writable_dir(parent) or (target.exists() and not os.access(target, os.W_OK)):
        raise ParameterError(name, text, "a path this process may write")
    if not target.exists():  # permissions can lie (root, read-only or virtual file systems): try it
        try:
            target.touch()
            target.unlink()
        except OSError as exc:
            raise ParameterError(name, text, f"a path this process may write ({exc.strerror})") from None
    return target


def plot_file(path: str | os.PathLike[str], name: str = "--plot") -> Path:
    """:func:`output_file` for a matplotlib figure: the suffix must be one of :func:`plot_suffixes`."""
    return output_file(path, name, plot_suffixes())


def output_dir(path: str | os.PathLike[str], name: str) -> Path:
    """Check that the directory ``path`` exists or can be created, and is writable; create it.

    Pass the option's text as given (argparse ``type=str``): ``Path("")`` is ``"."``, so the empty
    string would no longer be seen.

    Raises:
        ParameterError: an empty path, an existing non-directory, or a directory that cannot be
            created or written in (names the path and the operating system's reason).
    """
    text = os.fspath(path)
    if not text.strip():
        raise ParameterError(name, text, "a directory path (not empty)")
    directory = Path(text)
    if directory.exists() and not directory.is_dir():
        raise ParameterError(name, text, "a directory (it is created if missing), not a file")
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ParameterError(name, text, f"a directory this process may create ({exc.strerror})") from None
    if not _writable_dir(directory):
        raise ParameterError(name, text, "a directory this process may write in")
    return directory


def run_files(*names: str) -> tuple[str, ...]:
    """The files a run writes under ``names``, with SQLite's ``-wal`` and ``-shm`` beside each ``.sqlite``."""
    return tuple(f"{n}{tail}" for n in names for tail in (("", "-wal", "-shm") if n.endswith(".sqlite") else ("",)))


def fresh_output_dir(path: str | os.PathLike[str], name: str, files: Sequence[str], force: bool,
                     writes: Sequence[str] | None = None) -> Path:
    """:func:`output_dir` for one run: a directory that holds none of ``files`` from an earlier run, and no
    other kind of run's result document (:data:`RUN_RESULTS` but those in ``writes``).

    One ``--out`` holds one run, so that its results, plot, transcript and report describe the same
    session. With ``force`` the files found are deleted (other files are left alone).

    Args:
        files: the files refused (the command's own, of an earlier run). writes: every file the command
            writes (default: ``files``); a result document of another kind of run is refused as well.

    Raises:
        ParameterError: as :func:`output_dir`; or such files already there and no ``force`` (names them).
    """
    directory = output_dir(path, name)
    own = set(files if writes is None else writes)
    for f in sorted(own | set(files)):
        _not_an_input(directory / f, name, os.fspath(path))
    candidates = [*files, *(f for f in RUN_RESULTS if f not in own and f not in files)]
    found = [f for f in candidates if (directory / f).exists()]
    if found and not force:
        kinds = sorted({RUN_RESULTS[f] for f in found if f in RUN_RESULTS and f not in own})
        other = f"; another kind of run: {', '.join(kinds)}" if kinds else ""
        raise ParameterError(name, os.fspath(path), f"a directory without an earlier run (it holds {', '.join(found)}{other})",
                             hint="give a new directory, or " + ("--force" if name.startswith("--") else "force=True")
                             + " to replace that run's files")
    for f in found:
        (directory / f).unlink()
    return directory
