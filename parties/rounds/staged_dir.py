"""A directory whose files are written whole or not at all (:func:`staged_dir`).

``mpdp keys`` writes a session's roster and key files into a hidden folder beside the directory and moves them
in at the end, so a command stopped half-way (Ctrl-C, SIGTERM, SIGHUP, an error) leaves the directory as it was
and no file behind, and ``--force`` replaces the earlier files whole (no key of an earlier session stays among
the new ones). The folder is ``.NAME.partial-XXXXXXXX`` in the directory's parent (the same file system: each
move is one rename), mode 0700, owned by this process (:func:`mpdp.broker.scratch.owned_temporary_directory`):
one left by a process killed with SIGKILL is removed by the next run into the same directory.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from pathlib import Path

from mpdp.broker.scratch import owned_temporary_directory
from mpdp.protocols.errors import ParameterError

__all__ = ["staged_dir"]


@contextlib.contextmanager
def staged_dir(path: Path | str, name: str, force: bool, owned: Callable[[str], bool]) -> Iterator[Path]:
    """Yield an empty folder to write a directory's new files into; when the block ends they replace ``path``'s.

    On a normal exit the entries ``owned`` accepts (and any the new files name) are moved out of ``path`` and the
    new ones moved in, one rename each, undone if a signal or error comes in between; then the old ones are
    deleted. When the block raises (a stop signal too), ``path`` is left as it was, the directories made for it
    are removed, and so are the new files.

    Args:
        path: the directory (created if missing, with its missing parents).
        name: the option that gave it (``"--out"``), for the errors.
        force: replace ``path``'s earlier files (other entries are kept); without it a ``path`` that holds
            anything is refused.
        owned: whether an entry of ``path``, by its name, is one of the earlier files.

    Raises:
        ParameterError: an empty path, a file, a directory that holds anything without ``force`` (names up to
            three entries), or one this process cannot create or write in (names the operating system's reason).
    """
    text = os.fspath(path)
    if not text.strip():
        raise ParameterError(name, text, "a directory path (not empty)")
    target = Path(os.path.abspath(text))
    if target.exists() and not target.is_dir():
        raise ParameterError(name, text, "a directory (it is created if missing), not a file")
    held = sorted(os.listdir(target)) if target.is_dir() else []
    if held and not force:
        shown = ", ".join(held[:3]) + (f" and {len(held) - 3} more" if len(held) > 3 else "")
        raise ParameterError(name, text, f"a new or empty directory (it holds {shown})", hint="give a new "
                             "directory, or " + ("--force" if name.startswith("--") else "force=True")
                             + " to replace its earlier files")
    made = _make(target, name, text)
    try:
        with contextlib.ExitStack() as stack:
            try:
                scratch = stack.enter_context(owned_temporary_directory(f".{target.name}.partial-", target.parent))
            except OSError as exc:
                raise ParameterError(name, text, f"a directory whose parent this process may write in "
                                                 f"({exc.strerror})") from None
            (scratch / "new").mkdir()
            (scratch / "old").mkdir()
            yield scratch / "new"
            _move_in(scratch / "new", target, scratch / "old", owned)
    except BaseException:
        for folder in reversed(made):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise


def _make(target: Path, name: str, text: str) -> list[Path]:
    """Create ``target`` and its missing parents; returns those made, outermost first (ParameterError: one
    cannot be made, or ``target`` cannot be written in; the ones made are removed again)."""
    missing = []
    folder = target
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    made: list[Path] = []
    try:
        for folder in reversed(missing):
            folder.mkdir()
            made.append(folder)
    except OSError as exc:
        for folder in reversed(made):
            folder.rmdir()
        raise ParameterError(name, text, f"a directory this process may create ({exc.strerror})") from None
    if not os.access(target, os.W_OK | os.X_OK):
        raise ParameterError(name, text, "a directory this process may write in")
    return made


def _move_in(new: Path, target: Path, old: Path, owned: Callable[[str], bool]) -> None:
    """Move ``target``'s entries that ``owned`` accepts or ``new`` also holds to ``old``, then ``new``'s entries
    into ``target``; a signal or error on the way undoes the moves made (``target`` as it was), then is raised."""
    incoming = sorted(os.listdir(new))
    outgoing = [entry for entry in sorted(os.listdir(target)) if owned(entry) or entry in incoming]
    moves = [(target / e, old / e) for e in outgoing] + [(new / e, target / e) for e in incoming]
    done: list[tuple[Path, Path]] = []
    try:
        for source, destination in moves:
            os.replace(source, destination)
            done.append((source, destination))
    except BaseException:
        for source, destination in reversed(done):
            os.replace(destination, source)
        raise
