"""The optimal central (epsilon, delta)-DP mechanism of a binary symmetric function of k bits: majority,
threshold:T, and, or, xor (001 §I-IV, Theorems 2-5).

A trusted curator sees the k bits x and releases one bit; neighbouring inputs differ in one bit (the
edges of the hypercube {0,1}^k, colored by f). **Why a function of the count c = |x| loses nothing:** for
any (epsilon, delta)-DP mechanism M (P(release 1 | x)), its average over the k! permutations pi of the
voters, M'(x) = mean_pi M(pi x), is (epsilon, delta)-DP too (each M o pi is, as pi maps edges to edges, and
001 eq. (1) is linear in the release probabilities, so a mixture keeps it), and it is as accurate: f is
symmetric and the uniform input is invariant, so the average accuracy is the same, and the worst case
min_x of a mean is no smaller than the min of the parts. M' depends on x only through c, so it suffices to
optimize over the count line 0 - 1 - ... - k (neighbours c ~ c + 1) with binomial weights C(k, c) 2^-k:
k + 1 values instead of 2^k.

* **One color change** (majority, threshold:T with 1 <= T <= k, and = threshold:k, or = threshold:1): the
  count line is 001's (n_B, n_R)-line with n_B = k + 1 - T (counts T..k, blue = the value f(k)) and
  n_R = T (counts 0..T-1), node j <-> count k + 1 - j (the boundary morphism x -> k + 1 - |x| of 001
  Theorem 3); Theorem 4 gives the optimal mechanism for each boundary value r = P(output f(0) | c = T).
  For a mechanism with that r, Theorem 2's mechanism dominates it everywhere, so the optimum of any
  accuracy rewarding the true color is a max over r. The average accuracy A(r) = sum_c C(k, c) 2^-k
  P(true color | c) is concave and piecewise affine in r (the step map is concave, increasing and
  piecewise affine): its maximum is at one of the iterates' kinks (the preimages of theta and of 1), found
  exactly by bisection over them (the endpoints r = 0, 1 and the balanced value also tried). When n_B = n_R (k = 2T - 1: majority of odd k) the color
  swap c -> k - c makes the balanced r = (1 - delta)/(1 + e^eps) optimal; the balanced mechanism is also
  optimal in the worst case over inputs (every blue-red edge has min P(true) <= (e^eps + delta)/(e^eps + 1),
  which it attains).
* **Parity** (xor): every edge changes color, so each edge c ~ c + 1 bounds t_c + e^eps t_(c+1) <=
  e^eps + delta (and with c, c + 1 swapped), t = P(true color). The constant t = (e^eps + delta)/(1 + e^eps)
  meets every bound with equality and is optimal both in the worst case (min(t_c, t_(c+1)) is at most that
  on any edge) and on average: the hypercube's matching x <-> x with bit 1 flipped pairs every input with a
  neighbour of the other color, and adding the two bounds of a pair gives t_x + t_x' <= 2 (e^eps +
  delta)/(1 + e^eps).
* **Constant** functions (threshold:0, threshold:T with T > k): the release is the constant, exact and
  independent of every voter.

Other binary symmetric functions (several but not all color changes on the count line) are refused.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from mpdp.protocols.colorings.coloring_steps import ColoringStep
from mpdp.protocols.colorings.line_mechanisms import (
    LineMechanism,
    balanced_boundary_value,
    line_mechanism,
)
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import BooleanFunction, parse_function

__all__ = ["CRITERIA", "MAX_CENTRAL_VOTERS", "CentralMechanism", "central_majority_mechanism", "central_mechanism"]

#: Largest k of :func:`central_mechanism`: O(k) memory, about 2 s at the limit when the average-optimal
#: boundary value is searched over the kinks (~40 evaluations), 0.5 s for the balanced one (odd-k majority,
#: the worst case, xor).
MAX_CENTRAL_VOTERS = 1_000_000

#: How the boundary value is chosen when none is given.
CRITERIA = ("average", "worst-case")

_BINARY = "a binary symmetric function (majority, and, or, threshold:T, xor)"


@dataclass(frozen=True, slots=True, eq=False)
class CentralMechanism:
    """The curator's release rule for a binary symmetric function f of k bits (module docstring).

    Attributes:
        function: f's name; voters: k; epsilon, delta: per-voter privacy level (neighbours differ in one
            bit).
        values: int64 array (k + 1,), ``values[c]`` = f of any input with c ones (0 or 1).
        line: the optimal mechanism on the boundary line (node j <-> count k + 1 - j) for one color
            change; None for parity and constant functions.
        release_one: float64 array (k + 1,), ``release_one[c]`` = P(output 1 | c ones). This is what a
            curator samples from.
    """

    function: str
    voters: int
    epsilon: float
    delta: float
    values: NDArray[np.int64] = field(repr=False)
    line: LineMechanism | None = field(repr=False)
    release_one: NDArray[np.float64] = field(repr=False)

    @property
    def truthful(self) -> NDArray[np.float64]:
        """float64 (k + 1,): P(output = f(c) | c) for each count c."""
        return np.where(self.values == 1, self.release_one, 1.0 - self.release_one)

    def average_accuracy(self) -> float:
        """sum_c C(k, c) 2^-k P(output = f(c) | c): accuracy averaged over all 2^k inputs (uniform).

        Clamped to [0, 1]: the binomial weights sum to 1 only up to float rounding."""
        weighted = float(binom.pmf(np.arange(self.voters + 1), self.voters, 0.5) @ self.truthful)
        return min(max(weighted, 0.0), 1.0)

    def worst_case_accuracy(self) -> float:
        """min over inputs of P(output = f(x) | x)."""
        return float(self.truthful.min())


def _frozen(values: NDArray[np.float64]) -> NDArray[np.float64]:
    values.setflags(write=False)
    return values


def _line_release(line: LineMechanism, upper: int) -> NDArray[np.float64]:
    """P(output 1 | c) from the line's red probabilities (node j = k + 1 - c <-> index k - c); blue is the
    upper counts' value ``upper``."""
    red = line.red_probability[::-1]
    return _frozen(1.0 - red if upper == 1 else red.copy())


def _step_kinks(step: ColoringStep, depth: int) -> NDArray[np.float64]:
    """The t in [0, 1] where some iterate step^n(t), 1 <= n <= depth, has a kink: step^n is affine between
    the points whose orbit reaches theta (the regime switch) or 1 (the cap) within n steps, i.e. the
    preimages step^-m(theta) and step^-m(1), m < depth. step^-1(y) = max((y - delta)/a, a y - a + 1 - delta)
    (the inverse of the min of two increasing affine maps); below theta the first, so (y + s) grows by a
    per preimage; above step(theta) the second, (1 - y + s) shrinks by a (s = delta/(a - 1)): both chains in
    closed form. epsilon = 0: steps of delta; epsilon = inf or the identity step: no interior kink."""
    eps, delta, theta = step.epsilon, step.delta, step.theta
    if math.isinf(eps) or step.is_identity:
        return np.array([theta])
    m = np.arange(depth, dtype=np.float64)
    if eps == 0.0:  # step(t) = min(1, t + delta)
        return np.concatenate([theta - m * delta, 1.0 - (m + 1.0) * delta])
    s = step.shift
    exponent = np.minimum(m, 745.0 / eps) * eps  # m epsilon, capped before it overflows (epsilon up to 1e308)
    shrink = np.exp(-exponent)
    # (y + s) a^-m - s as y a^-m + s (a^-m - 1), expm1: s = delta / (a - 1) is large at small epsilon
    drop = s * np.expm1(-exponent)
    below = theta * shrink + drop  # step^-m(theta)
    if delta == 0.0:
        return np.concatenate([below, [1.0]])  # 1 is only its own preimage
    grown = np.minimum(exponent, 700.0)
    above = 1.0 - (delta * np.exp(grown) + s * np.expm1(grown))  # step^-(m+1)(1) while >= step(theta)
    above = above[above >= float(step(theta))]
    last = float(above[-1]) if above.size else 1.0
    # one more preimage, max of the two inverses ((1 - last) a: capped, past e^700 it is < 0 anyway)
    first = max((last - delta) * math.exp(-eps), 1.0 - delta - (1.0 - last) * math.exp(min(eps, 700.0)))
    more = max(depth - above.size - 1, 0)
    rest = first * shrink[:more] + drop[:more]  # below step(theta): (y + s) / a each
    return np.concatenate([below, above, [first], rest])


def _average_optimal_boundary(k: int, n_blue: int, n_red: int, epsilon: float, delta: float,
                              balanced: float) -> float:
    """The boundary value maximizing the average accuracy, exactly: A(r) = sum over blue nodes of
    step^d(1 - r) plus over red nodes of step^j(r), binomially weighted, is concave and piecewise affine in
    r (each iterate is), so a maximum is at a kink of some term or an endpoint (:func:`_step_kinks` at r and
    1 - r); along the sorted kinks A is unimodal, and a bisection on the sign of its differences finds the
    best one in O(log k) evaluations of O(k). (A bounded 1-D search stopped ~2e-9 short of the maximum on
    a plateau: its tolerance is sqrt(machine epsilon) relative.)"""
    weights = binom.pmf(np.arange(k + 1), k, 0.5)[::-1]  # in node order (node j <-> count k + 1 - j)
    blue = np.arange(k + 1) < n_blue

    def accuracy(r: float) -> float:
        red = line_mechanism(n_blue, n_red, r, epsilon, delta).red_probability
        return float(weights @ np.where(blue, 1.0 - red, red))

    kinks = _step_kinks(ColoringStep(epsilon, delta), max(n_blue, n_red))
    # and the floats next to 0 and 1: where theta underflows (epsilon > ~709) the kink theta rounds to 0, and
    # an orbit from exactly 0 (or 1 - r = 0) stays there while one from the next float jumps to 1
    ends = [0.0, float(np.nextafter(0.0, 1.0)), float(np.nextafter(1.0, 0.0)), 1.0]
    points = np.unique(np.concatenate([kinks, 1.0 - kinks, ends, [balanced]]))
    points = points[(points >= 0.0) & (points <= 1.0)]
    points = points[np.concatenate([[True], np.diff(points) > 1e-14 * points[1:]])]  # no float twins of a kink
    lo, hi = 0, points.size - 1
    while lo < hi:  # the last point not above its successor: the maximum of a unimodal sequence
        mid = (lo + hi) // 2
        if accuracy(float(points[mid + 1])) >= accuracy(float(points[mid])):
            lo = mid + 1
        else:
            hi = mid
    # the bisection's point and its neighbours (rounding near a plateau); on a tie to rounding (1e-15) the
    # exact ends or the balanced value first (epsilon = delta = 0: every r ties, and 0 or 1 is the answer)
    near = [0.0, 1.0, balanced] + [float(r) for r in points[max(lo - 2, 0): lo + 3]]
    values = [accuracy(r) for r in near]
    return next(r for r, v in zip(near, values, strict=True) if v >= max(values) - 1e-15)


def _one_change(f: BooleanFunction, k: int, values: NDArray[np.int64], threshold: int, epsilon: float,
                delta: float, red_at_boundary: float | None, criterion: str) -> CentralMechanism:
    """The (n_B, n_R)-line mechanism of a function with one color change: f(c) = f(k) iff c >= threshold."""
    n_blue, n_red = k + 1 - threshold, threshold
    upper = int(values[k])
    if red_at_boundary is not None:
        line = line_mechanism(n_blue, n_red, red_at_boundary, epsilon, delta)
        return CentralMechanism(f.name, k, line.epsilon, line.delta, values, line, _line_release(line, upper))
    balanced = balanced_boundary_value(epsilon, delta)
    if criterion == "worst-case" or n_blue == n_red:
        if balanced == 0.0 < epsilon:
            # (1 - delta)/(1 + e^eps) underflows (eps > ~745): the balanced mechanism rounds to the
            # eps = inf one in float64 (next to the boundary 1 - theta rounds to 1), while a boundary
            # value of exactly 0 would freeze the red side at 0 (a different, worst mechanism)
            line = line_mechanism(n_blue, n_red, 0.0, math.inf, delta)
            return CentralMechanism(f.name, k, float(epsilon), line.delta, values, line, _line_release(line, upper))
        r = balanced
    else:
        r = _average_optimal_boundary(k, n_blue, n_red, epsilon, delta, balanced)
    line = line_mechanism(n_blue, n_red, r, epsilon, delta)
    return CentralMechanism(f.name, k, line.epsilon, line.delta, values, line, _line_release(line, upper))


def central_mechanism(function: str | BooleanFunction, voters: int, epsilon: float, delta: float,
                      red_at_boundary: float | None = None, criterion: str = "average") -> CentralMechanism:
    """The optimal central (epsilon, delta)-DP mechanism of a binary symmetric ``function`` of ``voters``
    bits (module docstring: 001 Theorems 2-5 on the count line; parity's constant optimum).

    Args:
        function: a name of :func:`mpdp.protocols.functions.parse_function` (majority, and, or,
            threshold:T, xor) or a :class:`~mpdp.protocols.functions.BooleanFunction` that is symmetric
            with 2 outputs at this k.
        voters: 1 <= k <= MAX_CENTRAL_VOTERS (O(k) time and memory; 10^5 voters in under 1 s).
        epsilon, delta: per-voter privacy level.
        red_at_boundary: one color change only: P(output f(0) | c = T), T the first count with f(c) = f(k)
            (majority: P(output 0 | c = floor(k/2) + 1)); default: chosen by ``criterion``.
        criterion: ``"average"`` (maximize the average accuracy over uniform inputs) or ``"worst-case"``
            (the balanced mechanism); both give the same mechanism for xor.

    Returns:
        the :class:`CentralMechanism` (``release_one`` float64 (k + 1,)).

    Raises:
        ParameterError: k < 1; a function that is not symmetric with 2 outputs (e.g. ``sum``), or with
            several but not all color changes on the count line; an unknown criterion; a boundary value
            for xor or a constant function; a bad epsilon/delta/boundary value.
        SizeLimitError: k > MAX_CENTRAL_VOTERS.
    """
    if isinstance(voters, bool) or not isinstance(voters, (int, np.integer)) or voters < 1:
        raise ParameterError("voters", voters, "an integer >= 1")
    if voters > MAX_CENTRAL_VOTERS:
        raise SizeLimitError("voters", int(voters), MAX_CENTRAL_VOTERS,
                             "fewer voters; ColoringStep(epsilon, delta).iterate gives the release "
                             "probability of one count in closed form (001 Theorem 4)")
    if criterion not in CRITERIA:
        raise ParameterError("criterion", criterion, "one of " + ", ".join(CRITERIA))
    k = int(voters)
    f = parse_function(function) if isinstance(function, str) else function
    counted = f.count_values(k)
    if counted is None or f.output_size(k) != 2:
        raise ParameterError("function", f.name, _BINARY)
    values = counted.astype(np.int64)
    values.setflags(write=False)
    changes = np.flatnonzero(np.diff(values))
    if changes.size == 1:
        return _one_change(f, k, values, int(changes[0]) + 1, epsilon, delta, red_at_boundary, criterion)
    if changes.size not in (0, k):
        raise ParameterError("function", f.name, f"{_BINARY}: one color change on the count line, or one "
                             f"at every count (parity); this one changes {changes.size} times")
    if red_at_boundary is not None:
        raise ParameterError("red_at_boundary", red_at_boundary,
                             f"None for {f.name} at k = {k} (no single boundary: its optimum is fixed)")
    step = ColoringStep(epsilon, delta)  # validates epsilon and delta
    if changes.size == 0:  # constant: release it, exactly and independently of every voter
        release = values.astype(np.float64)
    else:  # parity: P(true color) = 1 - theta = (a + delta)/(a + 1) on every count
        release = np.where(values == 1, 1.0 - step.theta, step.theta)
    return CentralMechanism(f.name, k, step.epsilon, step.delta, values, None, _frozen(release))


def central_majority_mechanism(voters: int, epsilon: float, delta: float,
                               red_at_boundary: float | None = None,
                               criterion: str = "average") -> CentralMechanism:
    """The optimal central (epsilon, delta)-DP mechanism for the majority of ``voters`` bits:
    ``central_mechanism("majority", ...)`` (its line has n_B = k - floor(k/2), n_R = floor(k/2) + 1).

    Args:
        voters, epsilon, delta, criterion: as :func:`central_mechanism`.
        red_at_boundary: P(output 0 | c = floor(k/2) + 1); default: chosen by ``criterion`` (average:
            balanced for odd k).

    Raises:
        ParameterError, SizeLimitError: as :func:`central_mechanism`.
    """
    return central_mechanism("majority", voters, epsilon, delta, red_at_boundary, criterion)
