"""Temporary folders of child brokers that a killed run does not leave behind for ever.

A folder made by :func:`owned_temporary_directory` records its owner (``owner.pid``: the process id and
the host name) and is removed on exit, as :class:`tempfile.TemporaryDirectory` does. A run killed by
SIGKILL skips that cleanup; so, before making a new folder, the folders of the same prefix whose owner
process is gone are removed (:func:`remove_stale`). A folder is kept when its owner is alive (or its id
was reused by another process: kept, never a guess), when it names another host (another container's
processes are not visible here), and when it has no readable owner file (an older mpdp's, or one being
made this instant).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["OWNER_FILE", "owned_temporary_directory", "remove_stale"]

#: The file in each folder that names its owner: ``PID HOSTNAME``.
OWNER_FILE = "owner.pid"


@contextlib.contextmanager
def owned_temporary_directory(prefix: str, root: Path | None = None) -> Iterator[Path]:
    """A fresh folder ``<root>/<prefix>XXXXXXXX`` (mode 0700) owned by this process, removed on exit; the stale
    folders of ``prefix`` there are removed first (:func:`remove_stale`).

    Args:
        prefix: the folder's name prefix. root: where it is made (default: :func:`tempfile.gettempdir`).

    Raises:
        OSError: ``root`` is not writable.
    """
    remove_stale(prefix, root)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=root) as tmp:
        Path(tmp, OWNER_FILE).write_text(f"{os.getpid()} {socket.gethostname()}\n", encoding="utf-8")
        yield Path(tmp)


def remove_stale(prefix: str, root: Path | None = None) -> list[Path]:
    """Remove the folders ``root/<prefix>*`` whose owner process (on this host) is gone.

    Args:
        prefix: the folders' name prefix. root: where they are (default: :func:`tempfile.gettempdir`).

    Returns:
        The folders removed (a folder another user owns may stay: errors are ignored).
    """
    base = Path(tempfile.gettempdir()) if root is None else root
    removed = []
    for folder in sorted(base.glob(f"{glob.escape(prefix)}*")):
        owner = _owner(folder)
        if owner is not None and owner[1] == socket.gethostname() and not _alive(owner[0]):
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def _owner(folder: Path) -> tuple[int, str] | None:
    """(pid, host) from ``folder``'s owner file, or None (no such file, unreadable or malformed)."""
    try:
        pid, host = (folder / OWNER_FILE).read_text(encoding="utf-8").split()
        return int(pid), host
    except (OSError, ValueError, UnicodeDecodeError):
        return None


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host (another user's too)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return pid > 0
