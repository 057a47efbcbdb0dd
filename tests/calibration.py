"""How much slower than an idle machine this one runs now, so that the tests' waits scale with it.

A wait in a test bounds how long some work may take; on a shared machine (a CI runner, a loaded laptop,
``under-load``) the same work takes several times as long, and a bound taken from an idle machine's speed
fails a test that nothing is wrong with. :func:`slowdown` is measured once per test session: the wall time of
a fixed CPU-bound loop over the CPU time it used (the share of a core this process gets right now), or the
1-minute load average per core when that is larger (a test's several processes share what the machine's
other jobs leave, which one process's loop does not see, e.g. under the kernel's per-session autogroups); at
least 1. A wait for something that must NOT happen in time (a round that must time out) needs no scaling. ``MPDP_TEST_SLOWDOWN`` sets it instead (a number >= 1). tests/conftest.py
stretches pytest-timeout's timeouts by it and prints it in the session header.
"""

from __future__ import annotations

import functools
import os
import time

__all__ = ["slowdown", "scaled"]

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
def slowdown() -> float:
    """The factor (>= 1.0) by which this machine is slower than an idle one for this session's tests.

    Raises ValueError when ``MPDP_TEST_SLOWDOWN`` is set to anything but a number >= 1."""
    forced = os.environ.get("MPDP_TEST_SLOWDOWN", "").strip()
    if forced:
        try:
            value = float(forced)
        except ValueError:
            value = float("nan")
        if not value >= 1.0:
            raise ValueError(f"MPDP_TEST_SLOWDOWN={forced!r}: expected a number >= 1 (the machine's slowdown)")
        return value
    per_core = os.getloadavg()[0] / (os.cpu_count() or 1)
    return max(1.0, _loop_ratio(), per_core)


def scaled(seconds: float) -> float:
    """``seconds`` (an idle machine's generous bound, in seconds) stretched by :func:`slowdown`."""
    return seconds * slowdown()
