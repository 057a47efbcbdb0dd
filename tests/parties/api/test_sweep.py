"""``mpdp.sweep``'s ``jobs`` and ``time_limit``: what ``mpdp sweep --jobs`` and ``--time-limit`` do, with the
same checks, and its refusals spelt as keywords."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

import mpdp
from mpdp.analysis.sweeps.grid import grid_of
from mpdp.analysis.sweeps.sweep import plan_sweep
from mpdp.parties.api import sweep_pool
from mpdp.parties.api.sweep_pool import POOL_START_SECONDS, point_pool, point_processes
from mpdp.parties.api.sweeps import sweep_estimate, sweep_processes
from mpdp.protocols.errors import CostLimitError, ParameterError
from mpdp.protocols.numerics import cost
from mpdp.protocols.numerics.cost import format_bytes, format_seconds

GRID = dict(parties=7, rule="worst-case", samples=2000, seed=5)


def test_worker_processes_give_the_same_points_bit_for_bit() -> None:
    """One SeedSequence child per point: the points are the same whatever the number of processes (a pool
    of 2 by hand: ``jobs=2`` runs points this small here, :func:`test_small_work_runs_here_whatever_jobs`)."""
    one = mpdp.sweep("0.5:1.5:2", **GRID)
    with point_pool(2) as pool:
        two = plan_sweep(grid_of("0.5:1.5:2"), **GRID).run(pool)
    assert two.to_dict()["points"] == one.document["points"] and len(one.rows()) == 4


def test_small_work_runs_here_whatever_jobs(monkeypatch: pytest.MonkeyPatch) -> None:
    """``jobs=1000`` over 20 points of about 3 s (one core) started 20 processes on 2 cores (34 s against 5.5 s
    with ``jobs=1``): the processes are capped at the cores, and none start when their start-up would cost
    more than they save; the estimate says the same."""
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)

    def no_pool(*args: object, **kwargs: object) -> None:
        raise AssertionError("a process pool was started")

    monkeypatch.setattr(sweep_pool, "ProcessPoolExecutor", no_pool)
    plan = plan_sweep(grid_of("0.1:2:5"), parties=101, samples=200)
    work = plan.estimate().seconds
    assert len(plan.tasks) == 20 and work < 2 * POOL_START_SECONDS  # 2 processes would not pay
    assert sweep_processes(plan, 1000) == (1, f"the points' work, about {format_seconds(work)} on one core, does "
                                              f"not pay for a pool's start-up, about {format_seconds(POOL_START_SECONDS)}")
    assert sweep_estimate(plan, jobs=1000).seconds == work
    r = mpdp.sweep("0.1:2:5", parties=101, samples=200, jobs=1000)
    assert r.rows() == mpdp.sweep("0.1:2:5", parties=101, samples=200).rows()


def test_processes_are_capped_at_points_and_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)
    assert point_processes(1000, 20, 100.0) == (2, "capped at the 2 usable cores")
    assert point_processes(2, 20, 100.0) == (2, "")
    assert point_processes(1, 20, 100.0) == (1, "")
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 8)
    assert point_processes(1000, 3, 100.0) == (3, "capped at the 3 points")
    assert point_processes(1000, 1, 100.0) == (1, "capped at the 1 point")
    # a pool of n pays when work / n + start < work: with start 3 s, n = 2 from 6 s on, n = 3 from 4.5 s on
    assert point_processes(2, 20, 2 * POOL_START_SECONDS)[0] == 1
    assert point_processes(2, 20, 2 * POOL_START_SECONDS + 0.1)[0] == 2
    assert point_processes(3, 20, 1.5 * POOL_START_SECONDS + 0.1)[0] == 3


def test_the_memory_is_a_points_peak_times_the_processes_that_hold_one_at_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Two worker processes may each hold a point at its peak together: a sweep is refused when the sum does
    not fit, naming jobs=1, and runs with jobs=1 (memory limit set between one and two points' peak)."""
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)
    plan = plan_sweep(grid_of("0.1:2:40"), parties=101, samples=200)
    work, peak = plan.estimate().seconds, plan.estimate().memory_bytes
    assert work > 2 * POOL_START_SECONDS, work  # 2 processes pay for their pool
    assert sweep_processes(plan, 2)[0] == 2
    assert sweep_estimate(plan, jobs=2).memory_bytes == 2 * peak
    assert sweep_estimate(plan, jobs=1).memory_bytes == peak
    monkeypatch.setattr(cost, "memory_limit", lambda: int(1.5 * peak))
    error = sweep_estimate(plan, jobs=2).refusal(None)
    assert error is not None and error.alternative == (
        f"jobs=1 (each of the 2 processes may hold {format_bytes(peak)} at once), or fewer samples")
    assert sweep_estimate(plan, jobs=1).refusal(None) is None
    assert sweep_estimate(plan, jobs=2, executor=True).refusal(None, memory_here=False) is None


@pytest.mark.parametrize(("options", "line"), [
    ({"jobs": 0}, "jobs=0 is not allowed: an integer >= 1"),
    ({"jobs": 2.0}, "jobs=2.0 is not allowed: an integer >= 1 (a float; write 2)"),
    ({"jobs": True}, "jobs=True is not allowed: an integer >= 1"),
    ({"time_limit": 0}, "time_limit=0 is not allowed: a number of seconds > 0"),
    ({"time_limit": float("inf")}, "time_limit=inf is not allowed: a number of seconds > 0"),
    ({"jobs": 2, "executor": "x"}, "jobs=2 is not allowed: 1 with an executor (the executor sets the parallelism)"),
    ({"jobs": 2, "live": True}, "jobs=2 is not allowed: 1 with live=True: live points run one after another over "
                                "one broker (each session's parties already use every core)"),
])
def test_bad_jobs_and_time_limits_are_refused_by_keyword(options, line) -> None:
    with pytest.raises(ParameterError) as caught:
        mpdp.sweep("1", parties=5, samples=10, **options)
    assert str(caught.value) == line


def test_a_sweep_over_its_time_limit_is_refused_with_its_estimate_divided_by_jobs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The limit is the plan's one-core estimate (one per setting x the grid's length) over the processes that
    run it, plus their start-up; the refusal names the keywords an API caller writes, not the command line's
    options, and ``jobs=N`` only while more jobs would run more processes."""
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)
    options = dict(parties=7, rule="average", observer="central", samples=20_000)
    seconds = plan_sweep([0.5, 1.0], **options).estimate().seconds  # two points
    with pytest.raises(CostLimitError) as caught:
        mpdp.sweep([0.5, 1.0], time_limit=seconds / 1.5, **options)
    text = str(caught.value)
    assert text.endswith("fewer points or samples, jobs=N, or time_limit=SECONDS") and "--" not in text, text
    assert caught.value.estimate.seconds == pytest.approx(seconds)
    with pytest.raises(CostLimitError) as caught:  # small work: run here, so no faster with jobs=2
        mpdp.sweep([0.5, 1.0], time_limit=seconds / 1.5, jobs=2, **options)
    assert str(caught.value).endswith("fewer points or samples, or time_limit=SECONDS")
    large = plan_sweep(grid_of("0.1:2:100"), parties=101)  # 400 points, about 50 s on one core: a pool pays
    hours = large.estimate().seconds
    assert sweep_estimate(large, jobs=1000).seconds == pytest.approx(hours / 2 + POOL_START_SECONDS)
    assert "jobs=N" not in str(sweep_estimate(large, jobs=2).refusal(1.0))
    assert len(mpdp.sweep([0.5, 1.0], time_limit=seconds * 1.5, jobs=2, **options).rows()) == 2
    with ThreadPoolExecutor(2) as pool:  # an executor's width is unknown: counted as one core
        with pytest.raises(CostLimitError):
            mpdp.sweep([0.5, 1.0], time_limit=seconds / 1.5, executor=pool, **options)
    assert len(mpdp.sweep([0.5, 1.0], time_limit=None, samples=10, **{k: v for k, v in options.items()
                                                                        if k != "samples"}).rows()) == 2


def test_the_default_time_limit_is_the_commands() -> None:
    with pytest.raises(CostLimitError, match=re.escape("over the 30 min time limit")):
        mpdp.sweep("0.1:2:100000", parties=101)


def test_a_worst_case_lp_over_its_fixed_limit_says_which_limit() -> None:
    """``sweep(..., time_limit=1)`` was refused "over the 60 s time limit" though the caller said 1 s: a point's
    LP runs under the fixed default limit, which the refusal now names as such."""
    with pytest.raises(ParameterError) as caught:
        mpdp.sweep("0.1:2:20", parties=20_000, time_limit=1)
    text = str(caught.value)
    assert text.startswith("the worst-case LP (40,003 variables over 20,001 input classes) would take about ")
    assert text.endswith(", over the 60 s time limit of one point's LP (fixed: time_limit=SECONDS bounds the whole "
                         "sweep's estimate, not one LP): the worst-case rule of majority for 20,000 parties: use "
                         "rule='average' (exact at any size), or fewer parties")
