"""Privacy regions in the hypothesis-testing plane (000, Section 2).

Testing H0: b = 0 against H1: b = 1 from a mechanism's output, a (randomized) test has a false alarm
probability ``alpha = P0(reject H0)`` and a missed detection probability ``beta = P1(accept H0)``.
The privacy region of a mechanism is the set of all achievable ``(alpha, beta)``; it is convex and
symmetric under ``(alpha, beta) -> (1 - alpha, 1 - beta)``, so it is determined by its convex,
decreasing lower boundary f::

    R = {(alpha, beta) in [0,1]^2 : f(alpha) <= beta <= 1 - f(1 - alpha)}

* (eps, delta)-DP region (000, Theorem 2.1 / Figure 1)::

      R(eps, delta) : alpha + e^eps beta >= 1 - delta,  e^eps alpha + beta >= 1 - delta  (and symmetric)

  so ``f(alpha) = max(0, 1 - delta - e^eps alpha, e^-eps (1 - delta - alpha))``.
* A mechanism is (eps, delta)-DP iff its region lies inside R(eps, delta) (000, Theorem 2.4).
* A finite channel: the Neyman-Pearson tests reject H0 on the outputs of largest likelihood ratio
  ``P1(y)/P0(y)`` first; the vertices of f are the cumulative sums in that order.
* The k-fold composition: the intersection of Theorem 3.3, :func:`composition_region`.

A region is stored by the vertices of f: ``false_alarm`` increasing from 0, ``missed_detection``
decreasing to 0. Slopes ``e^eps`` are capped at ``e^690`` (a difference only at alpha < 1e-299).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import overload

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.composition import theorem_3_3_corners
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = ["PrivacyRegion", "composition_region", "dp_region", "intersection"]

_MAX_LOG_SLOPE = 690.0


@dataclass(frozen=True, slots=True, eq=False)
class PrivacyRegion:
    """A privacy region, by the vertices of its lower boundary f (see the module docstring).

    Attributes:
        false_alarm: float64 (n,), increasing, first entry 0.
        missed_detection: float64 (n,), non-increasing, last entry 0; ``f(false_alarm[j])``.
    """

    false_alarm: NDArray[np.float64]
    missed_detection: NDArray[np.float64]

    @overload
    def lower_boundary(self, alpha: float) -> np.float64: ...
    @overload
    def lower_boundary(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]: ...
    def lower_boundary(self, alpha: NDArray[np.float64] | float) -> NDArray[np.float64] | np.float64:
        """f(alpha): the smallest missed detection at false alarm alpha (float64, shape of alpha)."""
        return np.interp(alpha, self.false_alarm, self.missed_detection, right=0.0)

    def contains(self, alpha: NDArray[np.float64] | float, beta: NDArray[np.float64] | float, atol: float = 1e-12) -> NDArray[np.bool_]:
        """Whether each (alpha, beta) lies in the region (bool array of the broadcast shape)."""
        alpha = np.asarray(alpha, dtype=np.float64)
        beta = np.asarray(beta, dtype=np.float64)
        low = self.lower_boundary(alpha)
        high = 1.0 - self.lower_boundary(1.0 - alpha)
        return (beta >= low - atol) & (beta <= high + atol)

    def is_subset_of(self, other: PrivacyRegion, atol: float = 1e-12) -> bool:
        """``self`` inside ``other``: f_self >= f_other at every vertex of both (both are convex)."""
        alpha = np.union1d(self.false_alarm, other.false_alarm)
        return bool(np.all(self.lower_boundary(alpha) >= other.lower_boundary(alpha) - atol))

    def area(self) -> float:
        """The area of the region: ``1 - 2 * integral_0^1 f`` (0 for perfect privacy)."""
        alpha = np.append(self.false_alarm, 1.0) if self.false_alarm[-1] < 1.0 else self.false_alarm
        beta = self.lower_boundary(alpha)
        return float(1.0 - 2.0 * np.sum(np.diff(alpha) * (beta[1:] + beta[:-1]) / 2.0))

    @classmethod
    def from_lines(cls, intercepts: NDArray[np.float64], slopes: NDArray[np.float64]) -> PrivacyRegion:
        """The region whose lower boundary is ``f(alpha) = max(0, max_j c_j - s_j alpha)`` on [0, 1].

        Args:
            intercepts: float64 (n,), c_j <= 1.
            slopes: float64 (n,), s_j >= 0 (finite).
        """
        c = np.append(np.asarray(intercepts, dtype=np.float64), 0.0)
        s = np.append(np.asarray(slopes, dtype=np.float64), 0.0)
        order = np.lexsort((-c, -s))  # steepest first; for equal slopes the highest line first
        c, s = c[order], s[order]
        first = np.ones(c.size, dtype=bool)
        first[1:] = s[1:] != s[:-1]
        c, s = c[first], s[first]

        def cross(i: int, j: int) -> float:  # alpha where lines i and j meet (s_i > s_j)
            return float((c[i] - c[j]) / (s[i] - s[j]))

        hull: list[int] = []  # upper envelope over the real line, slopes -s increasing
        for j in range(c.size):
            while len(hull) >= 2 and cross(hull[-2], j) <= cross(hull[-2], hull[-1]):
                hull.pop()
            hull.append(j)
        breaks = np.array([cross(a, b) for a, b in zip(hull[:-1], hull[1:], strict=True)])
        at_zero = int(np.sum(breaks <= 0.0))  # the hull line active at alpha = 0
        inside = np.flatnonzero((breaks > 0.0) & (breaks <= 1.0))
        alpha = np.append(0.0, breaks[inside])
        active = np.append(at_zero, inside + 1)  # the line to the right of each vertex
        hull_arr = np.array(hull)[active]
        beta = np.maximum(c[hull_arr] - s[hull_arr] * alpha, 0.0)
        return cls(alpha, beta)

    def lines(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """The supporting lines of f: ``(intercepts, slopes)`` of its segments, float64 (n-1,)."""
        da = np.diff(self.false_alarm)
        db = np.diff(self.missed_detection)
        ok = da > 0
        slopes = -db[ok] / da[ok]
        return self.missed_detection[:-1][ok] + slopes * self.false_alarm[:-1][ok], slopes

    def intersect(self, other: PrivacyRegion) -> PrivacyRegion:
        """The intersection of two regions (the max of the lower boundaries)."""
        return intersection([self, other])

    @classmethod
    def from_channel(cls, p0: NDArray[np.float64], p1: NDArray[np.float64]) -> PrivacyRegion:
        """The privacy region of a finite channel from its likelihood ratios (Neyman-Pearson).

        Args:
            p0, p1: float64 (m,), the output distributions under H0 (b = 0) and H1 (b = 1); each
                non-negative, summing to 1 (to 1e-9).

        Raises:
            ParameterError: shapes differ, negative entries, or sums not 1.
        """
        p0 = np.asarray(p0, dtype=np.float64).ravel()
        p1 = np.asarray(p1, dtype=np.float64).ravel()
        if p0.shape != p1.shape:
            raise ParameterError("p1", p1.shape, f"the shape of p0, {p0.shape}")
        for name, p in (("p0", p0), ("p1", p1)):
            if (p < 0).any() or not np.all(np.isfinite(p)) or abs(p.sum() - 1.0) > 1e-9:
                raise ParameterError(name, p, "a probability vector (non-negative, summing to 1)")
        with np.errstate(divide="ignore", invalid="ignore"):
            log_ratio = np.log(p1) - np.log(p0)  # inf where p0 = 0 < p1
        log_ratio = np.where(np.isnan(log_ratio), -np.inf, log_ratio)  # both zero: never useful
        order = np.argsort(-log_ratio, kind="stable")
        alpha = np.append(0.0, np.cumsum(p0[order]))
        alpha = np.minimum(alpha / alpha[-1], 1.0)
        beta = np.append(np.cumsum(p1[order][::-1])[::-1], 0.0)  # P1 of the outputs not rejected
        start = int(np.flatnonzero(alpha == 0.0)[-1])
        alpha, beta = alpha[start:], beta[start:]
        step = np.append(True, np.diff(alpha) > 0)
        return cls(alpha[step], np.minimum(beta[step], 1.0))


def _dp_lines(epsilon: NDArray[np.float64], delta: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The two non-trivial supporting lines of each R(eps, delta)."""
    e = np.minimum(np.asarray(epsilon, dtype=np.float64), _MAX_LOG_SLOPE)
    keep = 1.0 - np.asarray(delta, dtype=np.float64)
    return np.concatenate([keep, keep * np.exp(-e)]), np.concatenate([np.exp(e), np.exp(-e)])


def dp_region(epsilon: float, delta: float) -> PrivacyRegion:
    """R(epsilon, delta) of 000 (Figure 1): vertices (0, 1-delta), (a, a) with a = (1-delta)/(1+e^eps),
    (1-delta, 0).

    Raises:
        ParameterError: epsilon < 0 or NaN, delta outside [0, 1].
    """
    epsilon = check_epsilon(epsilon)
    if not 0.0 <= float(delta) <= 1.0:
        raise ParameterError("delta", delta, "a number in [0, 1]")
    return PrivacyRegion.from_lines(*_dp_lines(np.array([epsilon]), np.array([float(delta)])))


def intersection(regions: Sequence[PrivacyRegion]) -> PrivacyRegion:
    """The intersection of privacy regions (a region again: the max of the lower boundaries)."""
    if not regions:
        raise ParameterError("regions", regions, "at least one privacy region")
    parts = [r.lines() for r in regions]
    return PrivacyRegion.from_lines(np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]))


def composition_region(epsilon: float, delta: float, k: int) -> PrivacyRegion:
    """The privacy region of the k-fold composition of (epsilon, delta)-DP mechanisms, 000 Theorem 3.3::

        R = intersection over i = 0..floor(k/2) of R((k - 2i) eps, 1 - (1-delta)^k (1 - delta_i))

    exactly the region of the k-fold four-output randomized response. O(k log k).
    """
    eps_i, delta_i = theorem_3_3_corners(epsilon, check_delta(delta), k)
    return PrivacyRegion.from_lines(*_dp_lines(eps_i, delta_i))

