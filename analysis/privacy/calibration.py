"""Noise calibration under k-fold composition (000, Section 4).

* Corollary 4.1: for a target (eps, delta) after k queries with ``eps <= 0.9``, answering each query
  ``(eps_0, delta_0)``-DP with ``eps_0 = eps / sqrt(4k log(e + eps/delta))`` and ``delta_0 = delta/(2k)``
  suffices (eq. 7 with ``delta_tilde = delta/2``; see :data:`COROLLARY_4_1_SLACK_FRACTION`).
  :func:`per_query_budget_exact` gives the largest eps_0 by the exact optimum of Theorem 3.3 instead.
* Laplace: ``Lap(b)`` with ``b = Delta/eps_0`` is eps_0-DP, variance ``2 b^2``.
* Staircase (Geng and Viswanath 2012, cited in 000 §4): the optimal eps_0-DP noise for the squared
  error; density ``a(gamma)`` on ``[0, gamma Delta)``, ``e^-eps a(gamma)`` on ``[gamma Delta, Delta)``, repeated
  with decay ``e^-eps`` per period Delta, symmetric. Optimal ``gamma* = -b/(1-b) + (b - 2b^2 + 2b^4 - b^5)^{1/3}
  / (2^{1/3} (1-b)^2)``, ``b = e^-eps``.
* Gaussian via the corollary: ``sigma^2 = 2 Delta^2 log(2/delta_0) / eps_0^2`` per query (000 §4).
* Gaussian, direct composition (000 §4, proved in its Appendix B): ``sigma^2 = 8 k Delta^2 log(e + eps/delta)
  / eps^2`` for eps <= 1. The exact k-fold Gaussian is one Gaussian of sensitivity ``sqrt(k) Delta``
  (Balle and Wang 2018, Theorem 8): ``delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)``,
  ``mu = sqrt(k) Delta / sigma`` -- :func:`gaussian_composition_delta`, :func:`gaussian_sigma_exact`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import brentq
from scipy.special import log_ndtr

from mpdp.analysis.privacy.composition import check_k, optimal_epsilon
from mpdp.analysis.privacy.privacy_loss import log1mexp
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import check_epsilon

__all__ = [
    "COROLLARY_4_1_SLACK_FRACTION",
    "PerQueryBudget",
    "StaircaseNoise",
    "corollary_4_1",
    "gaussian_composition_delta",
    "gaussian_composition_sigma",
    "gaussian_sigma",
    "gaussian_sigma_exact",
    "laplace_scale",
    "per_query_budget_exact",
]

#: delta_tilde = delta * this in Corollary 4.1. Our copy of 000 prints delta/sqrt(2), which with
#: k delta_0 = delta/2 totals 1.207 delta > delta; delta/2 makes the corollary hold (tests check both).
COROLLARY_4_1_SLACK_FRACTION = 0.5


def _positive(value: float, name: str) -> float:
    x = float(value)
    if not (x > 0.0 and math.isfinite(x)):
        raise ParameterError(name, value, "a finite number > 0")
    return x


def _open_unit(value: float, name: str) -> float:
    x = float(value)
    if not 0.0 < x < 1.0:
        raise ParameterError(name, value, "a number in (0, 1)")
    return x


@dataclass(frozen=True, slots=True)
class PerQueryBudget:
    """Per-query privacy for a target (epsilon, delta) after k queries.

    Attributes:
        epsilon0, delta0: each query's (eps_0, delta_0).
        delta_slack: the delta_tilde the composition spends.
        k: number of queries.
        method: ``"corollary_4_1"`` or ``"exact"`` (Theorem 3.3 inverted).
    """

    epsilon0: float
    delta0: float
    delta_slack: float
    k: int
    method: str


def corollary_4_1(epsilon: float, delta: float, k: int) -> PerQueryBudget:
    """000 Corollary 4.1: ``eps_0 = eps / sqrt(4k log(e + eps/delta))``, ``delta_0 = delta / (2k)``.

    Raises:
        ParameterError: epsilon outside (0, 0.9], delta outside (0, 1), k < 1.
    """
    epsilon = _positive(epsilon, "epsilon")
    if epsilon > 0.9:
        raise ParameterError("epsilon", epsilon, "at most 0.9 (the regime of Corollary 4.1)",
                             hint="use per_query_budget_exact for larger epsilon")
    delta = _open_unit(delta, "delta")
    k = check_k(k)
    log_term = float(np.logaddexp(1.0, math.log(epsilon) - math.log(delta)))  # log(e + eps/delta)
    return PerQueryBudget(epsilon / math.sqrt(4.0 * k * log_term), delta / (2.0 * k),
                          COROLLARY_4_1_SLACK_FRACTION * delta, k, "corollary_4_1")


def per_query_budget_exact(epsilon: float, delta: float, k: int, delta0: float | None = None) -> PerQueryBudget:
    """The largest eps_0 such that k queries, each (eps_0, delta_0)-DP, compose to (eps, delta)-DP by the
    exact optimum of 000 Theorem 3.3 (delta_tilde solves ``1-(1-delta_0)^k (1-delta_tilde) = delta``).

    Args:
        epsilon, delta: the total target, finite eps > 0 and delta in (0, 1). k: number of queries.
        delta0: each query's delta_0, with ``(1 - delta_0)^k > 1 - delta``; None for ``delta / (2k)``.
            0 is the budget of pure mechanisms (Laplace, staircase, geometric), for which the whole
            delta is slack; the geometric mechanism composes exactly like Theorem 3.3, so for it the
            budget is tight.

    Raises:
        ParameterError: epsilon not finite > 0, delta outside (0, 1), k < 1, delta0 that leaves no slack.
    """
    epsilon = _positive(epsilon, "epsilon")
    delta = _open_unit(delta, "delta")
    k = check_k(k)
    delta0 = delta / (2.0 * k) if delta0 is None else float(delta0)
    if not 0.0 <= delta0 < 1.0 or k * math.log1p(-delta0) <= math.log1p(-delta):
        raise ParameterError("delta0", delta0, f"in [0, 1) with (1 - delta0)^{k} > 1 - delta = {1 - delta:g}")
    slack = -math.expm1(math.log1p(-delta) - k * math.log1p(-delta0))
    if k == 1 or optimal_epsilon(epsilon, k, slack) <= epsilon:
        eps0 = epsilon
    else:  # optimal_epsilon is increasing in eps_0, and equals k eps_0 <= eps at eps_0 = eps/k
        eps0 = brentq(lambda e: optimal_epsilon(e, k, slack) - epsilon, epsilon / k, epsilon, xtol=1e-14, rtol=1e-12)
        eps0 = float(eps0) if optimal_epsilon(eps0, k, slack) <= epsilon else float(eps0) * (1 - 1e-12)
    return PerQueryBudget(eps0, delta0, slack, k, "exact")


def laplace_scale(epsilon0: float, sensitivity: float = 1.0) -> float:
    """Scale ``b = Delta / eps_0`` of the eps_0-DP Laplace mechanism (variance ``2 b^2``)."""
    return _positive(sensitivity, "sensitivity") / _positive(epsilon0, "epsilon0")


@dataclass(frozen=True, slots=True)
class StaircaseNoise:
    """The staircase mechanism of Geng and Viswanath (2012) for eps-DP with sensitivity Delta.

    Args:
        epsilon: > 0, finite. sensitivity: Delta > 0. gamma: in [0, 1]; None picks the optimal gamma*.
    """

    epsilon: float
    sensitivity: float = 1.0
    gamma: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _positive(self.epsilon, "epsilon"))
        object.__setattr__(self, "sensitivity", _positive(self.sensitivity, "sensitivity"))
        if self.gamma is None:
            b = math.exp(-self.epsilon)
            root = (b - 2 * b**2 + 2 * b**4 - b**5) ** (1.0 / 3.0)
            object.__setattr__(self, "gamma", -b / (1 - b) + root / (2 ** (1.0 / 3.0) * (1 - b) ** 2))
        elif not 0.0 <= float(self.gamma) <= 1.0:
            raise ParameterError("gamma", self.gamma, "a number in [0, 1]")

    def _shape(self) -> tuple[float, float, float]:
        """(b = e^-eps, gamma, Delta), gamma as resolved by ``__post_init__``."""
        assert self.gamma is not None  # __post_init__ replaces None by gamma*
        return math.exp(-self.epsilon), float(self.gamma), self.sensitivity

    @property
    def variance(self) -> float:
        """``2 int_0^inf x^2 f(x) dx`` in closed form (geometric sums over the periods)."""
        b, g, d = self._shape()
        s0, s1, s2 = 1 / (1 - b), b / (1 - b) ** 2, b * (1 + b) / (1 - b) ** 3
        height = (1 - b) / (2 * d * (g + b * (1 - g)))
        inner = 3 * s2 * (g + b * (1 - g)) + 3 * s1 * (g**2 + b * (1 - g**2)) + s0 * (g**3 + b * (1 - g**3))
        return 2 * height * d**3 / 3 * inner

    def sample(self, size: int, rng: np.random.Generator) -> NDArray[np.float64]:
        """``size`` i.i.d. draws (float64), with the period, the step and the position drawn in turn."""
        b, g, d = self._shape()
        sign = rng.choice([-1.0, 1.0], size=size)
        period = rng.geometric(1 - b, size=size) - 1
        first = rng.random(size) < g / (g + b * (1 - g))
        offset = np.where(first, g * rng.random(size), g + (1 - g) * rng.random(size))
        return np.asarray(sign * (period + offset) * d, dtype=np.float64)


def gaussian_sigma(epsilon0: float, delta0: float, sensitivity: float = 1.0) -> float:
    """Per-query Gaussian noise ``sigma = Delta sqrt(2 log(2/delta_0)) / eps_0`` (000 §4)."""
    return (_positive(sensitivity, "sensitivity") * math.sqrt(2.0 * math.log(2.0 / _open_unit(delta0, "delta0")))
            / _positive(epsilon0, "epsilon0"))


def gaussian_composition_sigma(epsilon: float, delta: float, k: int, sensitivity: float = 1.0) -> float:
    """000's direct Gaussian composition: ``sigma^2 = 8 k Delta^2 log(e + eps/delta) / eps^2`` (eps <= 1)."""
    epsilon = _positive(epsilon, "epsilon")
    if epsilon > 1.0:
        raise ParameterError("epsilon", epsilon, "at most 1 (the regime of the theorem)", hint="use gaussian_sigma_exact")
    log_term = float(np.logaddexp(1.0, math.log(epsilon) - math.log(_open_unit(delta, "delta"))))
    return _positive(sensitivity, "sensitivity") * math.sqrt(8.0 * check_k(k) * log_term) / epsilon


def gaussian_composition_delta(sigma: float, k: int, epsilon: float, sensitivity: float = 1.0) -> float:
    """Exact delta(eps) of k Gaussian mechanisms of noise sigma (Balle-Wang; log space)."""
    mu = math.sqrt(check_k(k)) * _positive(sensitivity, "sensitivity") / _positive(sigma, "sigma")
    epsilon = check_epsilon(epsilon)
    if math.isinf(epsilon):
        return 0.0
    first = float(log_ndtr(mu / 2 - epsilon / mu))
    second = epsilon + float(log_ndtr(-mu / 2 - epsilon / mu))
    return float(np.exp(first + log1mexp(second - first)))


def gaussian_sigma_exact(epsilon: float, delta: float, k: int, sensitivity: float = 1.0) -> float:
    """The smallest sigma with k-fold Gaussian composition (eps, delta)-DP (exact, by root finding)."""
    epsilon = _positive(epsilon, "epsilon")
    delta = _open_unit(delta, "delta")
    log_delta = math.log(delta)

    def gap(log_sigma: float) -> float:
        return math.log(max(gaussian_composition_delta(math.exp(log_sigma), k, epsilon, sensitivity), 1e-320)) - log_delta

    low, high = math.log(sensitivity) - 20.0, math.log(sensitivity) + 20.0 + 0.5 * math.log(k)
    return math.exp(brentq(gap, low, high, xtol=1e-13))

