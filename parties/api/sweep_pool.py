"""The worker processes of ``mpdp.sweep(jobs=N)`` and ``mpdp sweep --jobs N``: a process pool over the points
that stops its workers at once on an error or a Ctrl-C.

How many (:func:`point_processes`): at most ``jobs``, the points, and the cores this process may use (more
processes than cores only share them, each paying its start-up); none (the points run here) when the pool's
start-up (:data:`POOL_START_SECONDS`) would cost more than the processes save.

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

from mpdp.parties.session.main_module import main_file_hidden
from mpdp.protocols.numerics.cost import format_seconds, noun, usable_cores

__all__ = ["POOL_START_SECONDS", "most_processes", "point_pool", "point_processes"]

#: Wall-clock seconds before a pool's processes run points: each started from the forkserver and importing the
#: sweep engine (``import mpdp.analysis.sweeps.sweep``: 1.1-1.2 CPU-s, load 9). Measured on the 2-core machine at
#: load 7-8, as the sweep's estimate is calibrated (2026-12-03, ``mpdp sweep --epsilon 0.1:2:5 --parties 101``:
#: its points 1.7-2.2 s here, 3.8-4.3 s on a pool of 2: 2.7-3.5 s of start-up).
POOL_START_SECONDS = 3.0

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


def most_processes(points: int) -> int:
    """The most worker processes that could run ``points`` points at once: one per point, at most one per
    usable core (:func:`~mpdp.protocols.numerics.cost.usable_cores`)."""
    return min(points, usable_cores())


def point_processes(jobs: int, points: int, work_seconds: float) -> tuple[int, str]:
    """How many worker processes run a sweep's points for ``jobs`` asked: ``min(jobs, points, usable cores)``,
    or 1 (here, no pool) when the pool would not be faster: ``work_seconds / n + POOL_START_SECONDS`` not below
    ``work_seconds``.

    Args:
        jobs: processes asked for (>= 1); points: the sweep's points (>= 1); work_seconds: the points' estimated
            seconds on one core.

    Returns:
        (processes, why): why is "" when the processes are ``jobs``, else the reason in words (``capped at the 2
        usable cores``; for 1: ``the points' work, about 3 s on one core, does not pay for ...``).
    """
    count = min(jobs, most_processes(points))
    why = ("" if count == jobs else f"capped at the {points:,} {noun(points, 'point')}" if count == points
           else f"capped at the {count} usable {noun(count, 'core')}")
    if count > 1 and work_seconds / count + POOL_START_SECONDS >= work_seconds:
        return 1, (f"the points' work, about {format_seconds(work_seconds)} on one core, does not pay for a "
                   f"pool's start-up, about {format_seconds(POOL_START_SECONDS)}")
    return count, why


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
    with main_file_hidden():  # the processes start as points are submitted; "<stdin>" is not re-run in them
        try:
            yield pool
        except BaseException:  # Ctrl-C, SIGTERM, an error: the points still running are not waited for
            _terminate(pool)
            raise
        pool.shutdown()
