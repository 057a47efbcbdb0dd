"""The geometric mechanism for counting queries (000, Section 4.2).

For an integer query of sensitivity 1 it adds two-sided geometric noise::

    P(Z = z) = (e^eps - 1)/(e^eps + 1) * e^{-eps |z|},   z in Z

On neighbouring databases with outputs c and c + 1 the likelihood ratio of an output y is e^eps for
``y <= c`` and e^-eps for ``y >= c + 1`` (the tail sums are ``e^eps/(1+e^eps)`` and ``1/(1+e^eps)``),
so its privacy region is R(eps, 0) and its k-fold composition on queries that differ has exactly the
region of Theorem 3.3 (000, Theorem 4.4): no eps-DP mechanism degrades less under composition, so none
is more useful in this sense. :func:`geometric_privacy_loss` derives the loss from the tail sums;
the tests check it against a truncated channel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.composition import check_k, randomized_response_loss
from mpdp.analysis.privacy.privacy_loss import PrivacyLossDistribution
from mpdp.analysis.privacy.privacy_region import PrivacyRegion, dp_region, intersection
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import check_epsilon

__all__ = ["GeometricMechanism"]


@dataclass(frozen=True, slots=True)
class GeometricMechanism:
    """Two-sided geometric noise of parameter epsilon (eps-DP for sensitivity-1 integer queries).

    Args:
        epsilon: > 0 (inf adds no noise).

    Raises:
        ParameterError: epsilon = 0 (infinite noise), negative or NaN.
    """

    epsilon: float

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        if eps == 0.0:
            raise ParameterError("epsilon", eps, "a number > 0 (epsilon = 0 needs infinite noise)")
        object.__setattr__(self, "epsilon", eps)

    def log_pmf(self, z: NDArray[np.integer[Any]]) -> NDArray[np.float64]:
        """``log P(Z = z)`` for integer z (float64, shape of z)."""
        magnitude: NDArray[np.float64] = np.abs(np.asarray(z, dtype=np.float64))
        if math.isinf(self.epsilon):
            with np.errstate(divide="ignore"):
                return np.where(magnitude == 0, 0.0, -np.inf)
        eps = self.epsilon
        log_norm = math.log(-math.expm1(-eps)) - math.log1p(math.exp(-eps))  # (e^eps-1)/(e^eps+1)
        return log_norm - eps * magnitude

    @property
    def variance(self) -> float:
        """Var Z = 2 e^-eps / (1 - e^-eps)^2 (0 at eps = inf)."""
        if math.isinf(self.epsilon):
            return 0.0
        return 2.0 * math.exp(-self.epsilon) / math.expm1(-self.epsilon) ** 2

    def sample(self, values: NDArray[np.integer[Any]], rng: np.random.Generator) -> NDArray[np.int64]:
        """Add independent noise to each integer value: ``values + G1 - G2``, G geometric on {0, 1, ..}
        with ratio e^-eps. int64 array of the shape of ``values``."""
        exact = np.asarray(values, dtype=np.int64)
        if math.isinf(self.epsilon):
            return exact.copy()
        p = -math.expm1(-self.epsilon)  # success probability 1 - e^-eps
        return exact + rng.geometric(p, exact.shape) - rng.geometric(p, exact.shape)

    def privacy_loss(self, k: int = 1) -> PrivacyLossDistribution:
        """The privacy loss of k queries whose answers differ by 1 on the neighbours.

        One query: loss +eps on ``y <= c``, with probability ``P(Z <= 0) = P(0) / (1 - e^-eps) =
        e^eps/(1+e^eps)``, and -eps otherwise; k queries: the randomized-response binomial of
        Theorem 3.3 (:func:`mpdp.analysis.privacy.composition.randomized_response_loss`)."""
        if math.isinf(self.epsilon):
            return PrivacyLossDistribution(np.array([math.inf]), np.zeros(1))
        return randomized_response_loss(np.array([self.epsilon]), np.array([check_k(k)]))

    def privacy_region(self, k: int = 1) -> PrivacyRegion:
        """The privacy region of k composed queries: Theorem 3.3's region (000 Theorem 4.4)."""
        corners, deltas = self.privacy_loss(k).corner_deltas()
        return intersection([dp_region(float(e), float(d)) for e, d in zip(corners, deltas, strict=True)])
