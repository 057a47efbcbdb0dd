"""A call in a worker process killed at its deadline (mpdp.protocols.deadline), with real processes."""

from __future__ import annotations

import math
import multiprocessing
import os
import pickle
import time

import pytest

from mpdp.protocols.deadline import call_before
from mpdp.protocols.errors import SolverError


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
