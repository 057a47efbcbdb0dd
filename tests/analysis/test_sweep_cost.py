"""A sweep's up-front cost: stated before any point runs, refused for an exact rule too large (sum at
k = 20,000) without building its (k + 1) x (k + 1) tables, counting a dataset's rounds."""

from __future__ import annotations

import importlib
import tracemalloc

import numpy as np
import pytest

from mpdp.analysis.sweeps.dataset_sweep import plan_dataset_sweep
from mpdp.analysis.sweeps.sweep import plan_sweep
from mpdp.analysis.sweeps.sweep_cost import DATASET_INPUT_RULES, sweep_cost, symmetric_rule_cost
from mpdp.analysis.theory.monte_carlo_cost import MEMORY_BYTES, PURE_DRAW_SECONDS, REPETITION_SECONDS, SETUP_SECONDS
from mpdp.protocols.decision.engine_cost import (
    BAND_ENTRY_BYTES,
    BAND_ENTRY_SECONDS,
    BAND_OUTPUT_STEP_SECONDS,
    BAND_ROW_SECONDS,
    EXACT_CALL_SECONDS,
    EXACT_STEP_SECONDS,
)
from mpdp.protocols.decision.factors import lazy_imports, likelihood_nonzeros
from mpdp.protocols.decision.worst_case import symmetric_lp_cost
from mpdp.protocols.errors import CostLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.numerics.cost import IMPORT_SECONDS, import_seconds
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

#: 5 members, 3 rounds; member 4 takes no part in round 2 (participant counts 5, 4, 5).
TOY = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0], [0, -1, 1]], dtype=np.int8)


@pytest.mark.parametrize("rule", ["average", "worst-case"])
def test_sum_at_20000_parties_is_refused_before_its_tables_are_built(rule) -> None:
    """The exact rule of sum at k = 20,000 (the symmetric engine's limit) multiplies (k + 1)^2 tables:
    refused with its estimate, having allocated far less than one 3.2 GB float64 (k + 1)^2 matrix."""
    tracemalloc.start()
    try:
        with pytest.raises(CostLimitError,
                           match=r"exact rule of sum \(20,000 parties, 20,001 outputs\) .* over the 60 s time limit"):
            plan_sweep([1.0], parties=20_000, function="sum", rule=rule, observer="central")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 50e6  # one (k + 1)^2 float64 matrix is 3.2e9 bytes


def _exact(n: int, function: str = "majority", observer: int | None = None) -> float:
    cost = symmetric_rule_cost([RandomizedResponse(1.0)] * n, parse_function(function), observer)
    assert cost is not None
    return cost.seconds


def test_the_exact_rule_grows_with_the_outputs_and_a_party_has_two_views() -> None:
    # one pure group of 20,000: banded, so its products and its build run over the band's nonzeros (~2,000 a
    # row at epsilon 1), not 20,001^2 dense entries; times 2 or 20,001 outputs (sparse products)
    group = RandomizedResponse(1.0)
    nonzeros = likelihood_nonzeros(20_000, group)
    assert 1_900 * 20_001 < nonzeros < 2_100 * 20_001
    # the first import of what the group's likelihood loads lazily counts once, in a process that has not paid it
    first_import = import_seconds(lazy_imports(20_000, group))
    band = BAND_ENTRY_SECONDS * nonzeros + BAND_ROW_SECONDS * 20_001
    assert _exact(20_000) == pytest.approx(EXACT_CALL_SECONDS + first_import + band
                                           + nonzeros * (EXACT_STEP_SECONDS + 2 * BAND_OUTPUT_STEP_SECONDS))
    assert _exact(20_000) < 60 < _exact(20_000, "sum")  # majority at 20,000 runs, sum does not
    importlib.import_module("scipy.signal")  # paid: the views below compare the work alone
    assert _exact(101, observer=0) == pytest.approx(2 * _exact(100))  # a party: 100 others, two own bits
    total = symmetric_rule_cost([group] * 20_000, parse_function("sum"))
    # no dense (k + 1)^2 likelihood: its band, BAND_ENTRY_BYTES a nonzero, besides sum's four (k + 1)^2 tables
    assert total is not None and total.memory_bytes == pytest.approx(4 * 8 * 20_001**2 + BAND_ENTRY_BYTES * nonzeros)
    assert symmetric_rule_cost([group] * 3, parse_function("table:0,1,0,0,0,0,0,1")) is None


def test_a_dataset_point_builds_a_rule_per_participant_count_and_measures_every_round() -> None:
    plan = plan_dataset_sweep([1.0], TOY, ["a", "b", "c"], dataset="toy", rule="average", samples=1000)
    per_draw = REPETITION_SECONDS + PURE_DRAW_SECONDS
    # the rule of 5 (once) and its accuracy on rounds a and c, the rule of 4 and its accuracy on round b
    expected = (SETUP_SECONDS + 3 * 1000 * per_draw + (1 + 2 * DATASET_INPUT_RULES) * _exact(5)
                + (1 + DATASET_INPUT_RULES) * _exact(4))
    estimate = plan.estimate()
    assert estimate.seconds == pytest.approx(expected) and estimate.memory_bytes == MEMORY_BYTES
    assert estimate.size == "1 point x 3 rounds x 1,000 samples"
    # the same points measured on uniform inputs of k = 5: one rule, one accuracy, one set of draws
    uniform = sweep_cost(plan.plan.tasks)
    assert uniform.seconds == pytest.approx(SETUP_SECONDS + 1000 * per_draw + 2 * _exact(5))


def test_a_worst_case_point_adds_its_lp() -> None:
    average = plan_sweep([1.0], parties=30, function="sum", rule="average", observer="central").estimate()
    worst = plan_sweep([1.0], parties=30, function="sum", rule="worst-case", observer="central").estimate()
    lp = symmetric_lp_cost([RandomizedResponse(1.0)] * 30, parse_function("sum"))
    assert lp is not None and worst.seconds == pytest.approx(average.seconds + lp.seconds)



def test_a_long_grid_costs_its_points_summed_and_is_estimated_at_once(monkeypatch) -> None:
    """A point's cost does not depend on its epsilon: 20,000 epsilons x 2 rules x 2 observers cost 20,000
    times the four points at the first epsilon (each estimated alone), from one exact-rule estimate per
    (rule, observer), not one per point (80 s for 400,000 points on this machine before)."""
    for module in IMPORT_SECONDS:  # paid (first imports count once a sweep: test_sweep_grid)
        importlib.import_module(module)
    grid = np.geomspace(0.1, 2.0, 20_000)
    plan = plan_sweep(grid, parties=101, function="majority", samples=1000)
    assert len(plan.tasks) == 80_000
    one = sum(plan_sweep(grid[:1], parties=101, rule=r, observer=o, samples=1000).estimate().seconds
              for r in ("average", "worst-case") for o in ("central", "party"))
    calls = []

    def counted(*args, **kwargs):
        calls.append(1)
        return symmetric_rule_cost(*args, **kwargs)

    monkeypatch.setattr("mpdp.analysis.sweeps.sweep_cost.symmetric_rule_cost", counted)
    estimate = plan.estimate()
    assert estimate.seconds == pytest.approx(20_000 * one) and estimate.size == "80,000 points x 1,000 samples"
    assert len(calls) == 4


def test_a_sweep_above_the_old_cap_is_planned_by_its_estimate_and_a_million_parties_refused_by_it() -> None:
    """No party count is refused for itself (the cap of 20,000 is gone, issue 23): a majority point of 25,000
    parties is planned, its estimate two exact rules (the rule, its accuracy) and its draws; at 10^6 parties the
    exact rule's estimate (its band: ~300 GB) refuses the sweep before any point runs, naming that estimate."""
    plan = plan_sweep([1.0], parties=25_000, function="majority", rule="average", observer="central", samples=10)
    exact = symmetric_rule_cost([RandomizedResponse(1.0)] * 25_000, parse_function("majority"), first_imports=False)
    assert exact is not None and exact.seconds < 60
    expected = SETUP_SECONDS + 10 * (REPETITION_SECONDS + PURE_DRAW_SECONDS) + 2 * exact.seconds
    assert plan.estimate().seconds == pytest.approx(expected + import_seconds(lazy_imports(25_000, RandomizedResponse(1.0))))
    with pytest.raises(CostLimitError, match=r"the exact rule of majority \(1,000,000 parties, 2 outputs\) would "
                                             r"take about .* GB, over .* of memory"):
        plan_sweep([1.0], parties=1_000_000, function="majority", rule="average", observer="central")
