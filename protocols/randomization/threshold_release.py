"""A central release rule R(s) in exact integers: what secure computation can draw without floats.

The optimal central mechanism of 001 for majority releases 1 with probability R(s) at count s, R monotone
non-decreasing. Inside a secure computation there are no floats: with L random bits u uniform on
{0, ..., 2^L - 1} and the public integer table N(s) = round(R(s) 2^L), the release ``u < N(s)`` has
probability exactly R'(s) = N(s) / 2^L, with |R'(s) - R(s)| <= 2^-(L+1). Rounding is monotone, so R' is
monotone too, and equivalently the release is 1 iff s >= #{c : N(c) <= u} (public thresholds; 001 §I).

Privacy of the rounded rule. R is (epsilon, delta)-DP between neighbouring counts: for both outputs o,
P(o | s') <= e^eps P(o | s) + delta for |s - s'| = 1. Each probability moves by at most eta = 2^-(L+1), so
P'(o | s') <= e^eps P'(o | s) + delta + (1 + e^eps) eta: the rounded rule is (epsilon, delta_L)-DP with
delta_L = delta + (1 + e^eps) 2^-(L+1) (:func:`rounding_delta_bound`); :meth:`ReleaseTable.realized_delta`
computes the exact smallest delta of R' (never above the bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError

__all__ = ["DEFAULT_RANDOM_BITS", "GeometricTable", "ReleaseTable", "geometric_table", "release_table",
           "rounding_delta_bound"]

#: L, the number of secret random bits of u by default: the released probabilities are R to within
#: 2^-41 (< 5e-13), and delta grows by at most (1 + e^eps) 2^-41.
DEFAULT_RANDOM_BITS = 40

_MAX_RANDOM_BITS = 60


@dataclass(frozen=True, slots=True, eq=False)
class ReleaseTable:
    """The integer table of a monotone release rule.

    Attributes:
        random_bits: L, the bits of the secret uniform u.
        scaled: int64 array (k + 1,), N(s) = round(R(s) 2^L), non-decreasing, in [0, 2^L].
    """

    random_bits: int
    scaled: NDArray[np.int64] = field(repr=False)

    @property
    def released_probability(self) -> NDArray[np.float64]:
        """float64 (k + 1,): R'(s) = N(s) / 2^L, the exact probability that ``u < N(s)``."""
        return self.scaled.astype(np.float64) / float(2**self.random_bits)

    def thresholds(self, u: int) -> int:
        """#{c : N(c) <= u}: the least count whose release is 1 for this u (k + 1 if none).

        Raises:
            ParameterError: u outside 0..2^L - 1.
        """
        if not 0 <= u < 2**self.random_bits:
            raise ParameterError("u", u, f"an integer in 0..2^{self.random_bits} - 1")
        return int(np.count_nonzero(self.scaled <= u))

    def realized_delta(self, epsilon: float) -> float:
        """The smallest delta for which R' is (epsilon, delta)-DP between neighbouring counts.

        max over |s - s'| = 1 and both outputs o of P'(o | s') - e^eps P'(o | s), at least 0.

        Raises:
            ParameterError: epsilon negative or NaN.
        """
        if not epsilon >= 0.0:
            raise ParameterError("epsilon", epsilon, "a number >= 0")
        one = self.released_probability
        worst = 0.0
        for p in (one, 1.0 - one):
            gaps = np.concatenate([p[1:] - math.exp(epsilon) * p[:-1], p[:-1] - math.exp(epsilon) * p[1:]])
            worst = max(worst, float(gaps.max(initial=0.0)))
        return worst


def rounding_delta_bound(epsilon: float, delta: float, random_bits: int) -> float:
    """delta + (1 + e^eps) 2^-(L+1): the delta of a rounded (epsilon, delta)-DP release rule (module doc).

    Raises:
        ParameterError: epsilon < 0, delta outside [0, 1], or L outside 1..60.
    """
    if not epsilon >= 0.0:
        raise ParameterError("epsilon", epsilon, "a number >= 0")
    if not 0.0 <= delta <= 1.0:
        raise ParameterError("delta", delta, "a number in [0, 1]")
    _check_bits(random_bits)
    return delta + (1.0 + math.exp(epsilon)) * 2.0 ** -(random_bits + 1)


def release_table(release_one: NDArray[np.float64], random_bits: int = DEFAULT_RANDOM_BITS) -> ReleaseTable:
    """The integer table N(s) = round(R(s) 2^L) of a monotone release probability R.

    Args:
        release_one: float64 (k + 1,), R(s) = P(release 1 | count s), non-decreasing in s, in [0, 1]
            (e.g. ``CentralMechanism.release_one`` of majority, 001 Theorems 3-5).
        random_bits: L in 1..60.

    Raises:
        ParameterError: R empty, outside [0, 1], decreasing, or L outside 1..60.
    """
    _check_bits(random_bits)
    r = np.asarray(release_one, dtype=np.float64)
    if r.ndim != 1 or r.size == 0 or not bool(np.all((r >= 0.0) & (r <= 1.0))):
        raise ParameterError("release_one", r, "a non-empty 1-D array of probabilities")
    if bool(np.any(np.diff(r) < -1e-12)):
        raise ParameterError("release_one", r, "a non-decreasing release probability R(s)")
    scaled = np.maximum.accumulate(np.rint(r * 2.0**random_bits).astype(np.int64))
    scaled.setflags(write=False)
    return ReleaseTable(int(random_bits), scaled)


def _check_bits(random_bits: int) -> None:
    if not isinstance(random_bits, (int, np.integer)) or not 1 <= random_bits <= _MAX_RANDOM_BITS:
        raise ParameterError("random_bits", random_bits, f"an integer in 1..{_MAX_RANDOM_BITS}")


@dataclass(frozen=True, slots=True, eq=False)
class GeometricTable:
    """The two-sided geometric mechanism of 000 (§4.2) for a count in exact integers, clamped to 0..n.

    A geometric G with P(G >= j) = alpha^j (alpha = e^-eps) is drawn from one uniform u on 0..2^L - 1 as
    G = #{j >= 1 : u < t_j} with the public non-increasing thresholds t_j = round(alpha^j 2^L), j = 1..J (J the
    last j with t_j >= 1): P(G >= j) = t_j / 2^L exactly. The release is clamp(s + G1 - G2, 0, n) with two
    independent such G (the difference of two geometrics is the two-sided geometric noise
    P(Z = z) = (1 - alpha)/(1 + alpha) alpha^|z|; clamping is post-processing). Each P(G >= j) is within
    2^-(L+1) of alpha^j and the tail beyond J is below 2^-(L+1).

    Attributes:
        epsilon: > 0; random_bits: L; thresholds: int64 (J,), t_1 >= ... >= t_J >= 1 (J >= 0).
    """

    epsilon: float
    random_bits: int
    thresholds: NDArray[np.int64] = field(repr=False)

    def noise_pmf(self) -> NDArray[np.float64]:
        """float64 (2J + 1,): P(G1 - G2 = z) for z = -J..J, exactly as drawn from the table."""
        upper = np.concatenate([[2**self.random_bits], self.thresholds, [0]]).astype(np.float64)
        g = (upper[:-1] - upper[1:]) / float(2**self.random_bits)  # P(G = 0..J)
        return np.convolve(g, g[::-1])

    def release_pmf(self, count: int, voters: int) -> NDArray[np.float64]:
        """float64 (voters + 1,): P(release = y | count) for y = 0..voters, exactly as drawn.

        Raises:
            ParameterError: count outside 0..voters.
        """
        if not 0 <= count <= voters:
            raise ParameterError("count", count, f"an integer in 0..{voters}")
        noise = self.noise_pmf()
        span = (noise.size - 1) // 2
        released = np.clip(np.arange(-span, span + 1) + count, 0, voters)
        pmf: NDArray[np.float64] = np.bincount(released, weights=noise, minlength=voters + 1).astype(np.float64)
        return pmf


def geometric_table(epsilon: float, random_bits: int = DEFAULT_RANDOM_BITS) -> GeometricTable:
    """The integer table of the two-sided geometric mechanism (:class:`GeometricTable`).

    Raises:
        ParameterError: epsilon not > 0 and finite, or L outside 1..60.
    """
    _check_bits(random_bits)
    if not 0.0 < epsilon < math.inf:
        raise ParameterError("epsilon", epsilon, "a finite number > 0 for the geometric mechanism")
    thresholds = []
    j = 1
    while (t := round(math.exp(-epsilon * j) * 2.0**random_bits)) >= 1:
        thresholds.append(t)
        j += 1
    table = np.array(thresholds, dtype=np.int64)
    table.setflags(write=False)
    return GeometricTable(float(epsilon), int(random_bits), table)
