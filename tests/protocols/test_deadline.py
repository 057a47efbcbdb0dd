"""A call in a worker process killed at its deadline (mpdp.protocols.numerics.deadline), with real processes."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest

from mpdp.protocols.errors import SolverError
from mpdp.protocols.numerics import deadline
from mpdp.protocols.numerics.deadline import call_before
from tests.calibration import scaled, slowdown


def test_the_answer_comes_from_another_process() -> None:
    assert call_before(divmod, (17, 5), 30.0) == (3, 2)
    assert call_before(os.getpid, (), 30.0) != os.getpid()


def test_a_call_past_its_deadline_is_killed() -> None:
    call_before(os.getpid, (), 30.0)  # a worker is up: what is timed is the call itself
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="0.3 s time limit"):
        call_before(time.sleep, (60.0,), 0.3)
    assert time.monotonic() - start < 10.0  # not the 60 s sleep: a kill on a loaded machine
    assert call_before(divmod, (7, 2), 30.0) == (3, 1)  # a new worker replaces the killed one


def test_the_callee_s_exception_is_raised_here() -> None:
    with pytest.raises(ValueError, match="math domain error"):
        call_before(math.sqrt, (-1.0,), 30.0)


def test_a_child_that_dies_is_named() -> None:
    with pytest.raises(ChildProcessError, match="exit code 3"):
        call_before(os._exit, (3,), 30.0)


def test_a_solver_error_crosses_processes_whole() -> None:
    error = pickle.loads(pickle.dumps(SolverError(13, "Time limit reached")))
    assert isinstance(error, SolverError)
    assert (error.status, error.solver_message) == (13, "Time limit reached")
    assert str(error) == "linear program not solved (HiGHS status 13): Time limit reached"


def test_a_daemonic_process_can_call() -> None:
    """A session's worker is daemonic: multiprocessing would let it start no child; a subprocess it can."""
    worker = multiprocessing.get_context("forkserver").Process(target=call_before, args=(divmod, (17, 5), 30.0),
                                                               daemon=True)
    worker.start()
    worker.join(60.0)
    assert worker.exitcode == 0  # an AssertionError ("daemonic processes are not allowed") would give 1


# A caller that starts a worker (and prints its pid), then asks it for a long LP: HiGHS's interior point as
# worst_case runs it (~5 s at a third of this size on this 2-core machine under load; no time limit).
_CALLER = textwrap.dedent("""
    import os
    from mpdp.protocols.numerics.deadline import call_before
    print(call_before(os.getpid, (), 120.0), flush=True)
    import numpy as np, scipy.sparse as sp
    from scipy.optimize import linprog
    n, m, rng = 6000, 4000, np.random.default_rng(0)
    a_ub = sp.csr_matrix((rng.random(120_000), (rng.integers(0, m, 120_000), rng.integers(0, n, 120_000))), (m, n))
    call_before(linprog, (-rng.random(n), a_ub, np.ones(m), None, None, (0, 1), "highs-ipm"), 120.0)
""")


def _cpu_seconds(process: psutil.Process, interval: float) -> float:
    """CPU seconds ``process`` used in the next ``interval`` seconds."""
    before = sum(process.cpu_times()[:2])
    time.sleep(interval)
    return sum(process.cpu_times()[:2]) - before


def _gone(process: psutil.Process) -> bool:
    try:
        return process.status() == psutil.STATUS_ZOMBIE  # ended, not reaped by its new parent yet
    except psutil.NoSuchProcess:
        return True


def test_a_worker_busy_in_an_lp_ends_when_its_caller_is_killed() -> None:
    with subprocess.Popen([sys.executable, "-c", _CALLER], stdout=subprocess.PIPE, text=True) as caller:
        assert caller.stdout is not None
        worker = psutil.Process(int(caller.stdout.readline()))
        try:
            deadline = time.monotonic() + scaled(30.0)  # the caller builds the LP and sends it
            # busy in HiGHS (an idle worker waits on its stdin): a sixth of its fair share of the machine, which
            # on one core beside 8 burners is a ninth of a core (a fixed 0.05 s per 0.3 s was never reached)
            while _cpu_seconds(worker, 0.3) < 0.05 / slowdown():
                assert time.monotonic() < deadline, "the worker never got busy"
            caller.send_signal(signal.SIGKILL)  # no atexit, no closed stdin: only the worker's watchdog
            caller.wait()
            killed = time.monotonic()
            while not _gone(worker) and time.monotonic() - killed < scaled(5.0):
                time.sleep(0.05)
            assert _gone(worker) and time.monotonic() - killed < scaled(2.0)
        finally:
            caller.kill()
            if not _gone(worker):  # left running by a failure (no longer our child once the caller died)
                worker.kill()


def test_a_worker_whose_caller_stopped_listening_ends_quietly() -> None:
    """A stopped sweep terminates its pool worker mid-LP: the deadline worker's answer meets a closed pipe.
    It ends (code 1) without the BrokenPipeError traceback it printed after the sweep's 'interrupted'."""
    with subprocess.Popen([sys.executable, "-c", f"from mpdp.protocols.numerics.deadline import serve; serve({os.getpid()})"],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE) as worker:
        assert worker.stdin is not None and worker.stdout is not None and worker.stderr is not None
        assert pickle.load(worker.stdout) == (True, None)  # ready
        pickle.dump((time.sleep, (0.5,)), worker.stdin)
        worker.stdin.flush()
        worker.stdout.close()  # the caller is gone before the answer
        assert worker.wait(10) == 1
        assert b"Traceback" not in worker.stderr.read()


def _start_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, before: str) -> None:
    """New workers start through a shell script that runs ``before`` and then the real interpreter."""
    script = tmp_path / "python"
    script.write_text(f"#!/bin/sh\n{before}\nexec {sys.executable} \"$@\"\n")
    script.chmod(0o755)
    monkeypatch.setattr(deadline.sys, "executable", str(script))
    monkeypatch.setattr(deadline, "_idle", [])  # no idle worker of an earlier test: a new one starts


def test_a_slow_start_is_waited_for_and_a_stuck_one_is_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker's start has no fixed bound (300 s, an idle machine's figure, once): one that keeps using CPU
    time, however slowly, is waited for; one that uses none for the stall period is stuck and named so."""
    monkeypatch.setattr(deadline, "_STARTUP_STALL", 1.0)
    # Busy in the shell itself (its own CPU time, which the stall check reads): counting, not only forking
    # `date`, whose time is its children's (on a loaded machine the shell alone then used no tick in a second).
    _start_with(tmp_path, monkeypatch, "end=$(($(date +%s) + 3)); while [ $(date +%s) -lt $end ]; do "
                                       "i=0; while [ $i -lt 20000 ]; do i=$((i + 1)); done; done")
    started = time.monotonic()
    assert call_before(divmod, (7, 2), 30.0) == (3, 1)  # busy for 2-3 s (`date +%s` whole seconds) before Python
    took = time.monotonic() - started
    deadline._idle.pop().close()  # before the assertion: a failed one left the worker running into the next test
    assert took > 2.0  # at least two stall periods
    _start_with(tmp_path, monkeypatch, "exec sleep 60")
    with pytest.raises(ChildProcessError, match="no CPU time for 1 s while starting"):
        call_before(divmod, (7, 2), 30.0)
    assert time.monotonic() - started < 30.0
