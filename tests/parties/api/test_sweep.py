"""``mpdp.sweep``'s ``jobs`` and ``time_limit``: what ``mpdp sweep --jobs`` and ``--time-limit`` do, with the
same checks, and its refusals spelt as keywords."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

import mpdp
from mpdp.analysis.sweeps.sweep import plan_sweep
from mpdp.protocols.errors import CostLimitError, ParameterError

GRID = dict(parties=7, rule="worst-case", samples=2000, seed=5)


def test_jobs_run_worker_processes_and_give_the_same_points_bit_for_bit() -> None:
    """One SeedSequence child per point: the points are the same whatever the number of processes."""
    one = mpdp.sweep("0.5:1.5:2", **GRID)
    two = mpdp.sweep("0.5:1.5:2", jobs=2, **GRID)
    assert two.rows() == one.rows() and len(one.rows()) == 4


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


def test_a_sweep_over_its_time_limit_is_refused_with_its_estimate_divided_by_jobs() -> None:
    """The limit is the plan's one-core estimate (one per setting x the grid's length) over min(jobs, points);
    the refusal names the keywords an API caller writes, not the command line's options."""
    options = dict(parties=7, rule="average", observer="central", samples=20_000)
    seconds = plan_sweep([0.5, 1.0], **options).estimate().seconds  # two points
    with pytest.raises(CostLimitError) as caught:
        mpdp.sweep([0.5, 1.0], time_limit=seconds / 1.5, **options)
    text = str(caught.value)
    assert text.endswith("fewer points or samples, jobs=N, or time_limit=SECONDS") and "--" not in text, text
    assert caught.value.estimate.seconds == pytest.approx(seconds)
    r = mpdp.sweep([0.5, 1.0], time_limit=seconds / 1.5, jobs=2, **options)  # halved: under the limit
    assert len(r.rows()) == 2
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
