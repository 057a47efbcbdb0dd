"""Small worst-case LPs are solved in this process; only those the cost model says may outlive their limit
go to the deadline worker (mpdp.protocols.decision.worst_case.solves_in_process)."""

from __future__ import annotations

import numpy as np
import psutil
import pytest

from mpdp.protocols import RandomizedResponse, parse_function
from mpdp.protocols.decision import worst_case
from mpdp.protocols.decision.engines import build_problem
from mpdp.protocols.decision.worst_case import LP_SECONDS, lp_size, solve_worst_case, solves_in_process


def _view(epsilons: list[float], function: str = "majority"):
    mechs = [RandomizedResponse(e) for e in epsilons]
    return build_problem(mechs, parse_function(function), np.eye(2)).views[0]


def test_a_three_party_lp_starts_no_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[float] = []
    real = worst_case.call_before
    monkeypatch.setattr(worst_case, "call_before", lambda fn, args, seconds: calls.append(seconds) or real(fn, args, seconds))
    view = _view([0.5, 0.5, 0.5])
    before = {c.pid for c in psutil.Process().children(recursive=True)}
    in_process = solve_worst_case(view, time_limit=60.0)
    assert calls == []  # the deadline worker was not asked
    assert {c.pid for c in psutil.Process().children(recursive=True)} <= before  # and none started
    # the worker path (forced: nothing counts as small) gives the same rule and value
    monkeypatch.setattr(worst_case, "IN_PROCESS_SECONDS", 0.0)
    in_worker = solve_worst_case(view, time_limit=60.0)
    assert calls == [60.0]
    np.testing.assert_array_equal(in_process.table, in_worker.table)
    assert in_process.value == in_worker.value == pytest.approx(0.56490253635, abs=1e-10)
    assert in_process.upper_bound == in_worker.upper_bound


def test_the_estimate_decides_where_the_lp_runs() -> None:
    small = lp_size(_view([0.5, 0.5, 0.5]))
    assert LP_SECONDS(*small) < 1e-3
    assert solves_in_process(small, 60.0) and solves_in_process(small, None)
    assert not solves_in_process(small, LP_SECONDS(*small))  # at its limit: it may outlive it
    large = lp_size(_view([0.1 * (i + 1) for i in range(9)]))  # nine distinct parties: 2^9 input classes
    assert LP_SECONDS(*large) > 0.05
    assert not solves_in_process(large, 60.0) and solves_in_process(large, None)
