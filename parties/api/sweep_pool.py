"""The worker processes of ``mpdp.sweep(jobs=N)`` and ``mpdp sweep --jobs N``: a process pool over the points
that stops its workers at once on an error or a Ctrl-C.

Points run in forkserver processes (no fork of a process that may hold threads), each ignoring SIGINT: a
terminal's Ctrl-C reaches this process, which terminates the workers instead of waiting for the points
under way (20 s for the House's worst-case points).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
import signal
import tempfile
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from contextlib import contextmanager
from multiprocessing.context import BaseContext

__all__ = ["point_pool"]

#: Longest temporary directory (bytes) under which the forkserver's socket path (``/pymp-XXXXXXXX/listener-
#: XXXXXXXX``, 33 bytes) fits the 107 bytes of an AF_UNIX path with room to spare.
_SOCKET_DIR_MAX = 60


def _terminate(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool``'s workers now and release it (``ProcessPoolExecutor.terminate_workers`` of Python
    3.14, by hand before it): a dataset point runs for seconds to minutes, and a Ctrl-C waited for the
    points under way (20 s for the House's worst-case points)."""
    for proc in list((pool._processes or {}).values()):
        proc.terminate()
    pool.shutdown(wait=True, cancel_futures=True)


def _forkserver() -> BaseContext:
    """multiprocessing's forkserver context, its socket in a short directory: the socket lives in a
    ``pymp-*`` directory under the temporary directory and an AF_UNIX path holds at most 107 bytes (a TMPDIR
    of 70 characters failed with ``OSError: AF_UNIX path too long``). That directory, made here under /tmp
    when the temporary directory is too long, is multiprocessing's own: removed when this process exits."""
    if len(os.fsencode(tempfile.gettempdir())) > _SOCKET_DIR_MAX and os.access("/tmp", os.W_OK):
        saved = tempfile.tempdir
        tempfile.tempdir = "/tmp"
        try:
            multiprocessing.util.get_temp_dir()  # made now and kept for this process (its _config)
        finally:
            tempfile.tempdir = saved
    return multiprocessing.get_context("forkserver")


@contextmanager
def point_pool(jobs: int) -> Iterator[Executor | None]:
    """Where a sweep's points run: ``jobs`` worker processes (jobs > 1), or here (None, jobs = 1).

    Args:
        jobs: an integer >= 1 (checked by the caller).
    """
    if jobs == 1:
        yield None
        return
    pool = ProcessPoolExecutor(jobs, mp_context=_forkserver(),
                               initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:
        yield pool
    except BaseException:  # Ctrl-C, SIGTERM, an error: the points still running are not waited for
        _terminate(pool)
        raise
    pool.shutdown()
