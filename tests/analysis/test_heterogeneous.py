"""Heterogeneous composition: exact engines against enumeration, certified bounds around the exact."""

import itertools
import json
import math
import pathlib

import numpy as np
import pytest

from mpdp.analysis.privacy.composition import optimal_epsilon, theorem_3_4_bound
from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous, discretized_bounds
from mpdp.protocols.errors import ParameterError

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "composition.json").read_text())["cases"]
HETEROGENEOUS = [c for c in VECTORS if c["kind"] == "heterogeneous"]


@pytest.mark.parametrize("case", HETEROGENEOUS, ids=[c["name"] for c in HETEROGENEOUS])
def test_reference_vectors(case: dict) -> None:
    r = compose_heterogeneous(case["epsilon"], case["delta"], case["delta_slack"])
    assert r.method == "exact"
    assert r.epsilon_tilde == pytest.approx(case["epsilon_tilde_optimal"], rel=1e-9)
    assert r.delta_total == pytest.approx(case["delta_total"], rel=1e-9)
    assert r.bounds["theorem_3_4"] == pytest.approx(case["theorem_3_4"], rel=1e-9)
    assert r.bounds["basic"] == pytest.approx(case["basic"], rel=1e-9)


def _brute_delta(epsilons: list[float], eps_tilde: float) -> float:
    total = 0.0
    for y in itertools.product((0, 1), repeat=len(epsilons)):  # y_l = 1: answer l flipped
        log_p0 = sum(-math.log1p(math.exp(-e)) if f == 0 else -math.log1p(math.exp(e)) for e, f in zip(epsilons, y))
        loss = sum(e if f == 0 else -e for e, f in zip(epsilons, y))
        total += max(math.exp(log_p0) * (1 - math.exp(eps_tilde - loss)), 0.0)
    return total


def _brute_optimum(epsilons: list[float], slack: float) -> float:
    lo, hi = 0.0, sum(epsilons)
    if _brute_delta(epsilons, 0.0) <= slack:
        return 0.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if _brute_delta(epsilons, mid) <= slack else (mid, hi)
    return hi


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_against_enumeration(seed: int) -> None:
    eps = list(np.random.default_rng(seed).uniform(0.05, 1.5, 8))
    r = compose_heterogeneous(eps, 0.0, 1e-3)
    assert r.method == "exact"
    assert r.epsilon_tilde == pytest.approx(_brute_optimum(eps, 1e-3), rel=1e-9)


def test_bounds_bracket_the_exact_optimum() -> None:
    eps = list(np.random.default_rng(5).uniform(0.05, 0.6, 14))  # 2^14 grid: exact is tractable
    exact = compose_heterogeneous(eps, 0.0, 1e-6)
    forced = compose_heterogeneous(eps, 0.0, 1e-6, max_support=10)
    assert exact.method == "exact" and forced.method == "bounds"
    assert forced.lower <= exact.epsilon_tilde <= forced.upper
    assert forced.epsilon_tilde == forced.upper
    assert forced.gap < 1e-3
    coarse_lower, coarse_upper, h = discretized_bounds(np.array(eps), 1e-6, resolution=0.01)
    assert h == 0.01 and coarse_lower <= exact.epsilon_tilde <= coarse_upper


def test_many_distinct_values_report_bounds_and_gap() -> None:
    eps = np.random.default_rng(3).uniform(0.05, 0.5, 200)
    r = compose_heterogeneous(eps, 1e-7, 1e-6)
    assert r.method == "bounds"
    assert 0 < r.lower <= r.upper <= r.bounds["theorem_3_4"]
    assert r.as_dict()["gap"] == pytest.approx(r.upper - r.lower)
    assert "lattice" in r.detail


def test_commensurate_values_are_exact_on_a_lattice() -> None:
    eps = [0.1] * 500 + [0.2] * 300 + [0.3] * 200  # product grid 3e7: too big; lattice h = 0.1
    r = compose_heterogeneous(eps, 0.0, 1e-6)
    assert r.method == "exact" and "lattice" in r.detail
    bounds = compose_heterogeneous(eps, 0.0, 1e-6, max_support=1)  # the same path
    assert bounds.epsilon_tilde == r.epsilon_tilde
    lower, upper, _ = discretized_bounds(np.array(eps), 1e-6, resolution=0.0123)
    assert lower <= r.epsilon_tilde <= upper


def test_all_equal_list_matches_homogeneous_and_grid_engines_agree() -> None:
    assert compose_heterogeneous([0.3] * 40, 0.0, 1e-5).epsilon_tilde == pytest.approx(optimal_epsilon(0.3, 40, 1e-5), rel=1e-12)
    eps = [0.1] * 3 + [0.25] * 4 + [0.4] * 2
    grid = compose_heterogeneous(eps, 0.0, 1e-4)
    lattice = compose_heterogeneous(eps, 0.0, 1e-4, max_support=1)  # h = 0.05 lattice
    assert lattice.epsilon_tilde == pytest.approx(grid.epsilon_tilde, rel=1e-9)


def test_edge_cases_and_deltas() -> None:
    r = compose_heterogeneous([0.0, 0.0], [0.01, 0.02], 0.5)
    assert r.epsilon_tilde == 0.0
    assert r.delta_total == pytest.approx(1 - 0.99 * 0.98 * 0.5)
    assert compose_heterogeneous([0.1, 0.2], 0.0, 0.0).epsilon_tilde == pytest.approx(0.3)
    assert compose_heterogeneous([0.1, math.inf], 0.0, 0.1).epsilon_tilde == math.inf
    assert compose_heterogeneous([0.1, 50.0, 1000.0], 0.0, 1e-300).epsilon_tilde <= 1050.1
    assert compose_heterogeneous([0.1, 0.2], 0.0, 1e-3).bounds["drv10"] is None
    assert compose_heterogeneous([1.0, 0.2], 0.0, 1e-3).bounds["eq_7"] is None
    with pytest.raises(ParameterError):
        compose_heterogeneous([0.1, 0.2], [0.1, 0.2, 0.3], 0.1)
    with pytest.raises(ParameterError):
        compose_heterogeneous([], 0.0, 0.1)
    with pytest.raises(ParameterError):
        compose_heterogeneous([0.1, -1.0], 0.0, 0.1)


def test_heterogeneous_closed_form_is_homogeneous_theorem_for_equal_values() -> None:
    eps = np.full(30, 0.1)
    e = 0.1
    expected = 30 * e * math.tanh(e / 2) + e * math.sqrt(2 * 30 * math.log(math.e + math.sqrt(30 * e * e) / 0.05))
    assert theorem_3_4_bound(eps, 0.05) == pytest.approx(expected, rel=1e-12)
