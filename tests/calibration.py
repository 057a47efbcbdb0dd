"""How much slower than an idle machine this one runs now, so that the tests' waits scale with it.

A wait in a test bounds how long some work may take; on a shared machine (a CI runner, a loaded laptop,
``under-load``) the same work takes several times as long, and a bound taken from an idle machine's speed
fails a test that nothing is wrong with. :func:`slowdown` is the wall time of a fixed CPU-bound loop over the
CPU time it used (the share of a core this process got; measured once per test session), or the 1-minute load
average per core when that is larger (read at each call: the load changes during a long session, and a test's
several processes share what the machine's other jobs leave, which one process's loop does not see, e.g.
under the kernel's per-session autogroups); at least 1. ``MPDP_TEST_SLOWDOWN`` sets it instead (a number >= 1).
tests/conftest.py stretches pytest-timeout's timeouts by it and prints it in the session header. A wait for
something that must NOT happen in time (a round that must time out) needs no scaling.
"""

from __future__ import annotations

import functools
import os
import time

__all__ = ["scaled", "scaled_arg", "slowdown"]

#: Iterations of the measured loop: about 0.17 s of CPU on a core of the project's 2-core machine.
LOOP = 2_000_000


def _loop_ratio() -> float:
    """Wall time over this thread's CPU time while it counts to :data:`LOOP` (1.0: a core of its own)."""
    wall, cpu = time.perf_counter(), time.thread_time()
    total = 0
    for i in range(LOOP):
        total += i
    return (time.perf_counter() - wall) / max(time.thread_time() - cpu, 1e-3)


@functools.cache
def _forced_or_measured() -> tuple[bool, float]:
    """(True, ``MPDP_TEST_SLOWDOWN``) when it is set, else (False, :func:`_loop_ratio`), once per session."""
    forced = os.environ.get("MPDP_TEST_SLOWDOWN", "").strip()
    if not forced:
        return False, _loop_ratio()
    try:
        value = float(forced)
    except ValueError:
        value = float("nan")
    if not value >= 1.0:
        raise ValueError(f"MPDP_TEST_SLOWDOWN={forced!r}: expected a number >= 1 (the machine's slowdown)")
    return True, value


def slowdown() -> float:
    """The factor (>= 1.0) by which this machine is slower than an idle one for the tests, now.

    Raises ValueError when ``MPDP_TEST_SLOWDOWN`` is set to anything but a number >= 1."""
    forced, value = _forced_or_measured()
    if forced:
        return value
    return max(1.0, value, os.getloadavg()[0] / (os.cpu_count() or 1))


def scaled(seconds: float) -> float:
    """``seconds`` (an idle machine's generous bound, in seconds) stretched by :func:`slowdown`."""
    return seconds * slowdown()


def scaled_arg(seconds: float) -> str:
    """:func:`scaled` as a command-line value (``--round-timeout``, ...): rounded to 0.1 s and written as the
    CLI writes it back in its messages (``{:g}``), so a test can look for the same text."""
    return f"{round(scaled(seconds), 1):g}"
