"""A calibration plan (000 §4): per-query budgets for k queries under a total (epsilon, delta), and the
noise each mechanism then needs, with its variance.

Budgets (:class:`mpdp.analysis.privacy.calibration.PerQueryBudget`):

* ``corollary_4_1``: 000 Corollary 4.1 with the corrected delta_tilde = delta/2 (only for eps <= 0.9);
* ``exact``: the largest eps_0 by the exact optimum of Theorem 3.3 with delta_0 = delta / (2k);
* ``exact_pure``: the same with delta_0 = 0, the whole delta as slack: the budget of the pure mechanisms.
  The geometric mechanism composes exactly like Theorem 3.3 (000 Theorem 4.4), so for it this budget is
  tight: k geometric queries at eps_0 are (epsilon, delta)-DP and no better.

Noise (sensitivity Delta): Laplace ``b = Delta / eps_0`` (variance 2 b^2), staircase (Geng-Viswanath, its
optimal gamma), geometric (integer queries, Delta = 1: variance ``2 e^-eps_0 / (1 - e^-eps_0)^2``), and
Gaussian: per query ``sigma = Delta sqrt(2 log(2/delta_0)) / eps_0`` on a budget with delta_0 > 0, or the
exact k-fold Gaussian composition (Balle-Wang, one Gaussian of sensitivity sqrt(k) Delta).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mpdp.analysis.privacy.calibration import (
    PerQueryBudget,
    StaircaseNoise,
    corollary_4_1,
    gaussian_sigma,
    gaussian_sigma_exact,
    laplace_scale,
    per_query_budget_exact,
)
from mpdp.analysis.privacy.geometric import GeometricMechanism
from mpdp.protocols.errors import ParameterError

__all__ = ["CalibrationPlan", "NoiseChoice", "calibration_plan"]

#: Corollary 4.1 holds for a total epsilon up to this value.
COROLLARY_MAX_EPSILON = 0.9


@dataclass(frozen=True, slots=True)
class NoiseChoice:
    """One mechanism calibrated on one budget.

    Attributes:
        mechanism: ``laplace``, ``staircase``, ``geometric`` or ``gaussian``.
        budget: the budget's name (``corollary_4_1``, ``exact``, ``exact_pure``) or ``gaussian_exact``
            (the exact k-fold Gaussian composition, no per-query budget).
        parameter: what the noise is set by (``scale b``, ``gamma``, ``sigma``, ``ratio e^-eps0``).
        value: that parameter's value.
        variance: the noise variance per query (units of the query squared).
    """

    mechanism: str
    budget: str
    parameter: str
    value: float
    variance: float


@dataclass(frozen=True, slots=True)
class CalibrationPlan:
    """Per-query budgets and calibrated noise for k queries under a total (epsilon, delta).

    Attributes:
        epsilon, delta, k, sensitivity: the request.
        budgets: name -> budget (``corollary_4_1`` only when epsilon <= 0.9).
        noise: one :class:`NoiseChoice` per (mechanism, budget) that applies.
    """

    epsilon: float
    delta: float
    k: int
    sensitivity: float
    budgets: dict[str, PerQueryBudget]
    noise: tuple[NoiseChoice, ...]

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready document (plain floats, ints and strings)."""
        return {
            "epsilon": self.epsilon, "delta": self.delta, "k": self.k, "sensitivity": self.sensitivity,
            "budgets": {name: {"epsilon0": b.epsilon0, "delta0": b.delta0, "delta_slack": b.delta_slack}
                        for name, b in self.budgets.items()},
            "noise": [{"mechanism": n.mechanism, "budget": n.budget, "parameter": n.parameter, "value": n.value,
                       "variance": n.variance} for n in self.noise],
        }


def _pure_noise(budget: str, eps0: float, sensitivity: float) -> list[NoiseChoice]:
    scale = laplace_scale(eps0, sensitivity)
    stair = StaircaseNoise(eps0, sensitivity)
    rows = [NoiseChoice("laplace", budget, "scale b", scale, 2.0 * scale**2),
            NoiseChoice("staircase", budget, "gamma", float(stair.gamma or 0.0), stair.variance)]
    if sensitivity == 1.0:
        rows.append(NoiseChoice("geometric", budget, "ratio e^-eps0", math.exp(-eps0),
                                GeometricMechanism(eps0).variance))
    return rows


def calibration_plan(epsilon: float, delta: float, k: int, sensitivity: float = 1.0) -> CalibrationPlan:
    """Budgets and noise for k queries of sensitivity ``sensitivity`` under a total (epsilon, delta).

    Args:
        epsilon: total, finite > 0. delta: total, in (0, 1). k: number of queries, >= 1.
        sensitivity: Delta > 0 (the geometric mechanism is listed only for Delta = 1, integer queries).

    Raises:
        ParameterError: a value outside its domain (named).
    """
    if not (float(sensitivity) > 0 and math.isfinite(float(sensitivity))):
        raise ParameterError("sensitivity", sensitivity, "a finite number > 0")
    budgets: dict[str, PerQueryBudget] = {}
    if float(epsilon) <= COROLLARY_MAX_EPSILON:
        budgets["corollary_4_1"] = corollary_4_1(epsilon, delta, k)
    budgets["exact"] = per_query_budget_exact(epsilon, delta, k)
    budgets["exact_pure"] = per_query_budget_exact(epsilon, delta, k, delta0=0.0)
    noise: list[NoiseChoice] = []
    for name in ("corollary_4_1", "exact_pure"):
        if name in budgets:
            noise.extend(_pure_noise(name, budgets[name].epsilon0, sensitivity))
    for name in ("corollary_4_1", "exact"):
        if name in budgets:
            sigma = gaussian_sigma(budgets[name].epsilon0, budgets[name].delta0, sensitivity)
            noise.append(NoiseChoice("gaussian", name, "sigma", sigma, sigma**2))
    sigma = gaussian_sigma_exact(epsilon, delta, k, sensitivity)
    noise.append(NoiseChoice("gaussian", "gaussian_exact", "sigma", sigma, sigma**2))
    return CalibrationPlan(float(epsilon), float(delta), k, float(sensitivity), budgets, tuple(noise))
