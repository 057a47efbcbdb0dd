"""The optimal central (epsilon, delta)-DP mechanism for the majority of k voters (001 §I, Theorems 3-5).

The hypercube {0,1}^k of voting outcomes with the majority coloring has the (n_B, n_R)-line as its
boundary graph, n_B = k - floor(k/2) (counts c > k/2, blue = majority YES = output 1) and
n_R = floor(k/2) + 1; the boundary morphism is x -> node k + 1 - |x|. By Theorem 3 the optimal
boundary-homogeneous mechanism is a function of the count, computed on 2(n+1) nodes for k = 2n + 1 instead
of 2^k vertices (the paper's question: no loss of optimality).

Which boundary value: for a mechanism M with R_{n_B} = r, Theorem 2's mechanism with the same r dominates M
everywhere, so the optimum for any accuracy that rewards the true color is max over r. The average
accuracy A(r) = sum_c C(k, c) 2^-k P(true color | c) is concave in r (step is concave and increasing), and
for odd k the color swap x -> 1 - x makes the balanced r = (1 - delta)/(1 + e^eps) optimal; it is also
optimal in the worst case over inputs for every k.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import minimize_scalar
from scipy.stats import binom

from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.line_mechanisms import (
    LineMechanism,
    balanced_boundary_value,
    line_mechanism,
)

__all__ = ["CRITERIA", "MAX_MAJORITY_VOTERS", "MajorityMechanism", "central_majority_mechanism"]

#: Largest k of :func:`central_majority_mechanism`: O(k) memory, about 6 s at the limit for even k
#: (the average-optimal boundary value is a 1-D search), 0.5 s for odd k.
MAX_MAJORITY_VOTERS = 1_000_000

#: How the boundary value is chosen when none is given.
CRITERIA = ("average", "worst-case")


@dataclass(frozen=True, slots=True, eq=False)
class MajorityMechanism:
    """The curator's release rule for the majority of k voters.

    Attributes:
        voters: k; epsilon, delta: per-voter privacy level (neighbours differ in one vote).
        line: the optimal mechanism on the boundary graph (node j <-> count k + 1 - j).
        release_one: float64 array (k + 1,), ``release_one[c]`` = P(output 1 = "majority YES" | c YES
            votes). This is what a curator samples from.
    """

    voters: int
    epsilon: float
    delta: float
    line: LineMechanism = field(repr=False)
    release_one: NDArray[np.float64] = field(repr=False)

    @property
    def truthful(self) -> NDArray[np.float64]:
        """float64 (k + 1,): P(output = majority(c) | c) for each count c."""
        majority = 2 * np.arange(self.voters + 1) > self.voters
        return np.where(majority, self.release_one, 1.0 - self.release_one)

    def average_accuracy(self) -> float:
        """sum_c C(k, c) 2^-k P(true majority | c): accuracy averaged over all 2^k inputs (uniform).

        Clamped to [0, 1]: the binomial weights sum to 1 only up to float rounding."""
        weighted = float(binom.pmf(np.arange(self.voters + 1), self.voters, 0.5) @ self.truthful)
        return min(max(weighted, 0.0), 1.0)

    def worst_case_accuracy(self) -> float:
        """min over inputs of P(true majority | x)."""
        return float(self.truthful.min())


def _release_one(line: LineMechanism) -> NDArray[np.float64]:
    release = 1.0 - line.red_probability[::-1]  # node j = k + 1 - c  <->  index k - c
    release.setflags(write=False)
    return release


def _from_line(voters: int, line: LineMechanism) -> MajorityMechanism:
    return MajorityMechanism(voters, line.epsilon, line.delta, line, _release_one(line))


def central_majority_mechanism(voters: int, epsilon: float, delta: float,
                               red_at_boundary: float | None = None,
                               criterion: str = "average") -> MajorityMechanism:
    """The optimal central (epsilon, delta)-DP mechanism for the majority of ``voters`` bits.

    Args:
        voters: 1 <= k <= MAX_MAJORITY_VOTERS (O(k) time and memory; 10^5 voters in under 1 s).
        epsilon, delta: per-voter privacy level.
        red_at_boundary: P(output 0 | c = floor(k/2) + 1); default: chosen by ``criterion``.
        criterion: ``"average"`` (maximize the average accuracy; balanced for odd k) or
            ``"worst-case"`` (the balanced mechanism).

    Raises:
        ParameterError: k < 1, an unknown criterion, or a bad epsilon/delta/boundary value.
        SizeLimitError: k > MAX_MAJORITY_VOTERS.
    """
    if not isinstance(voters, (int, np.integer)) or voters < 1:
        raise ParameterError("voters", voters, "an integer >= 1")
    if voters > MAX_MAJORITY_VOTERS:
        raise SizeLimitError("voters", int(voters), MAX_MAJORITY_VOTERS,
                             "fewer voters; ColoringStep(epsilon, delta).iterate gives the release "
                             "probability of one count in closed form (001 Theorem 4)")
    if criterion not in CRITERIA:
        raise ParameterError("criterion", criterion, "one of " + ", ".join(CRITERIA))
    k = int(voters)
    n_blue, n_red = k - k // 2, k // 2 + 1
    if red_at_boundary is not None:
        return _from_line(k, line_mechanism(n_blue, n_red, red_at_boundary, epsilon, delta))
    balanced = balanced_boundary_value(epsilon, delta)
    if criterion == "worst-case" or k % 2 == 1:
        if balanced == 0.0 < epsilon:
            # (1 - delta)/(1 + e^eps) underflows (eps > ~745): the balanced mechanism rounds to the
            # eps = inf one in float64 (next to the boundary 1 - theta rounds to 1), while a boundary
            # value of exactly 0 would freeze the red side at 0 (a different, worst mechanism)
            line = line_mechanism(n_blue, n_red, 0.0, math.inf, delta)
            return MajorityMechanism(k, float(epsilon), line.delta, line, _release_one(line))
        return _from_line(k, line_mechanism(n_blue, n_red, balanced, epsilon, delta))

    weights = binom.pmf(np.arange(k + 1), k, 0.5)[::-1]  # in node order (node j <-> count k + 1 - j)
    blue = np.arange(k + 1) < n_blue

    def loss(r: float) -> float:
        red = line_mechanism(n_blue, n_red, r, epsilon, delta).red_probability
        return -float(weights @ np.where(blue, 1.0 - red, red))

    best = minimize_scalar(loss, bounds=(0.0, 1.0), method="bounded", options={"xatol": 1e-12})
    r = float(best.x) if best.fun < loss(balanced) else balanced
    return _from_line(k, line_mechanism(n_blue, n_red, r, epsilon, delta))
