"""Calibration plans (000 §4): budgets, noise and variances, each checked against an independent computation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mpdp.analysis.privacy.calibration import gaussian_composition_delta
from mpdp.analysis.privacy.calibration_plan import calibration_plan
from mpdp.analysis.privacy.composition import optimal_epsilon
from mpdp.analysis.privacy.geometric import GeometricMechanism
from mpdp.protocols.errors import ParameterError


def test_geometric_on_the_pure_budget_spends_exactly_the_target() -> None:
    """The House: 16 counting queries, total (1, 1e-6). k geometric queries compose like Theorem 3.3."""
    plan = calibration_plan(1.0, 1e-6, 16)
    eps0 = plan.budgets["exact_pure"].epsilon0
    assert plan.budgets["exact_pure"].delta0 == 0.0 and plan.budgets["exact_pure"].delta_slack == 1e-6
    assert GeometricMechanism(eps0).privacy_loss(16).delta_for_epsilon(1.0) == pytest.approx(1e-6, rel=1e-9)
    assert optimal_epsilon(eps0, 16, 1e-6) <= 1.0
    assert eps0 > 1.0 / 16  # better than basic composition
    assert "corollary_4_1" not in plan.budgets  # total epsilon > 0.9


@pytest.mark.parametrize("epsilon, delta, k", [(0.5, 1e-5, 100), (0.9, 1e-3, 10), (0.1, 1e-8, 1000), (0.3, 1e-6, 50)])
def test_exact_budget_is_larger_than_the_corollary(epsilon: float, delta: float, k: int) -> None:
    plan = calibration_plan(epsilon, delta, k)
    ratio = plan.budgets["exact"].epsilon0 / plan.budgets["corollary_4_1"].epsilon0
    assert 1.7 <= ratio <= 2.1  # 1.70 .. 2.08 at these corners (docs/mathematics.md quotes them)


def test_noise_variances_from_independent_formulas() -> None:
    plan = calibration_plan(0.5, 1e-5, 100, sensitivity=1.0)
    rows = {(n.mechanism, n.budget): n for n in plan.noise}
    eps0 = plan.budgets["exact_pure"].epsilon0
    laplace = rows["laplace", "exact_pure"]
    assert laplace.value == pytest.approx(1 / eps0, rel=1e-14) and laplace.variance == pytest.approx(2 / eps0**2)
    # geometric: sum z^2 P(z) over a truncated support
    z = np.arange(-200_000, 200_001)
    pmf = np.exp(GeometricMechanism(eps0).log_pmf(z))
    assert rows["geometric", "exact_pure"].variance == pytest.approx(float(np.sum(z**2 * pmf)), rel=1e-9)
    # staircase is the optimal eps0-DP noise for the variance: at most Laplace, at least geometric here
    assert rows["geometric", "exact_pure"].variance <= rows["staircase", "exact_pure"].variance <= laplace.variance
    sigma = rows["gaussian", "gaussian_exact"].value
    assert gaussian_composition_delta(sigma, 100, 0.5) == pytest.approx(1e-5, rel=1e-6)
    b = plan.budgets["corollary_4_1"]
    assert rows["gaussian", "corollary_4_1"].value == pytest.approx(math.sqrt(2 * math.log(2 / b.delta0)) / b.epsilon0)


def test_sensitivity_scales_and_drops_the_geometric() -> None:
    one, five = calibration_plan(2.0, 1e-6, 10), calibration_plan(2.0, 1e-6, 10, sensitivity=5.0)
    scaled = {(n.mechanism, n.budget): n.variance for n in five.noise}
    for n in one.noise:
        if n.mechanism != "geometric":
            assert scaled[n.mechanism, n.budget] == pytest.approx(25 * n.variance, rel=1e-9)
    assert all(n.mechanism != "geometric" for n in five.noise)


@pytest.mark.parametrize("kwargs, name", [({"epsilon": 0.0}, "epsilon"), ({"delta": 1.0}, "delta"), ({"k": 0}, "k"),
                                          ({"sensitivity": -1.0}, "sensitivity")])
def test_refused(kwargs: dict[str, float], name: str) -> None:
    args = {"epsilon": 0.5, "delta": 1e-5, "k": 10, "sensitivity": 1.0} | kwargs
    with pytest.raises(ParameterError, match=name):
        calibration_plan(args["epsilon"], args["delta"], int(args["k"]), args["sensitivity"])
