"""Child processes of a main script read from standard input (``python - < script.py``): started without
re-running it.

A spawned or forkserver child re-imports the parent's main module from its ``__file__``
(``multiprocessing.spawn.get_preparation_data``: ``init_main_from_path``) before it runs its target. ``python -``
sets ``__file__`` to ``"<stdin>"``, a file that does not exist: every worker of a run failed with
``FileNotFoundError: ... '<stdin>'`` and exited before reporting any cause. Without a ``__file__`` (``python -c``,
an interactive session, a notebook) multiprocessing leaves the main module alone, and so it may here: the
children's targets (party workers, validators, sweep points) are mpdp's own functions, which need nothing of
the main module.
"""

from __future__ import annotations

import contextlib
import multiprocessing.process
import os
import sys
import threading
from collections.abc import Iterator
from types import ModuleType

__all__ = ["main_file_hidden"]

_lock = threading.Lock()
_users = 0  # blocks under way (threads may start children at once: the first hides, the last restores)
_hidden: tuple[ModuleType, str] | None = None  # (the main module, its __file__) while hidden


def _missing_main_file() -> tuple[ModuleType, str] | None:
    """(the main module, its ``__file__``) when that names no file that a child could run, else None."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str):
        return None
    origin = getattr(multiprocessing.process, "ORIGINAL_DIR", None) or ""  # where multiprocessing resolves it from
    full = os.path.join(origin, path)
    return None if os.path.isfile(full) else (main, path)


@contextlib.contextmanager
def main_file_hidden() -> Iterator[None]:
    """Within the block, a main module whose ``__file__`` names no file (``<stdin>``) has none: the children
    started meanwhile leave the main module alone, as for ``python -c``. A main script that exists is left as
    it is (its children re-import it: :func:`mpdp.parties.api.guards.check_main_guard` refuses one that
    would start the run again)."""
    global _users, _hidden
    with _lock:
        if _users == 0:
            _hidden = _missing_main_file()
            if _hidden is not None:
                del _hidden[0].__file__
        _users += 1
    try:
        yield
    finally:
        with _lock:
            _users -= 1
            if _users == 0 and _hidden is not None:
                _hidden[0].__file__ = _hidden[1]
                _hidden = None
