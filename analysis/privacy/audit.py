"""Empirical privacy audit of a randomized-response release: a certified lower bound on epsilon.

A party releases K symbols (its K-fold release of one bit; K = 1 a single release) on neighbouring inputs
b = 0 and b = 1, N times each. Every Neyman-Pearson test of 000 Section 2 is a threshold test on the
likelihood ratio of the output, so the audit scores each K-symbol output with the configured mechanism's
log-likelihood ratio (in units of epsilon; a revealing symbol 0 / 3 of the four-output mechanism, weight 2K,
outweighs any count of ordinary ones, whose other K - 1 symbols move the score by at most K - 1)::

    score = sum_j w(y_j),  w = (-1, +1) (two symbols)  or  (-2K, -1, +1, 2K) (four symbols)

and takes the rejection sets ``S+_t = {score >= t}`` and ``S-_t = {score <= t}`` for every score value t
the alphabet allows (m tests, fixed before the data). For each set, one-sided Clopper-Pearson bounds at
level ``alpha / (2 m)`` (Bonferroni) give ``P1_lo(S+) <= P1(S+)`` and ``P0(S+) <= P0_hi(S+)`` (and the
mirror image for S-), all at once with probability >= 1 - alpha. An (eps, delta)-DP release has
``P1(S) <= e^eps P0(S) + delta`` for every S (000 Theorem 2.1), so with that probability::

    eps >= eps_lb = max_S log((P1_lo(S) - delta) / P0_hi(S))        (and the mirror image)

For K releases the guarantee is the exact K-fold composition, 000 Theorem 3.3: the region is the
intersection of ``R(eps_i, delta_i)`` over its corners, and a *violation* is a test whose bounds leave one
of them: ``P1_lo(S) > e^eps_i P0_hi(S) + delta_i``. For K = 1 that is ``eps_lb > eps``. For a correct
party the chance of a violation is at most alpha (each CP bound holds, so no corner can be crossed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta as beta_distribution

from mpdp.analysis.privacy.composition import check_k, theorem_3_3_corners
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = ["AuditEstimate", "audit_counts", "audit_estimate", "expected_lower_bound", "one_sided_clopper_pearson",
           "release_scores", "score_offset"]


def one_sided_clopper_pearson(successes: NDArray[np.int64], trials: int,
                              level: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Exact one-sided Clopper-Pearson bounds ``(lower, upper)`` for binomial proportions, each holding
    with probability >= 1 - ``level`` (the two-sided 1 - 2 level interval of :func:`mpdp.analysis.clopper_pearson`).

    Args:
        successes: int array, any shape, entries in [0, trials].
        trials: n >= 1.
        level: in (0, 0.5].

    Returns:
        float64 arrays of the shape of ``successes``: lower = Beta(level; x, n - x + 1) (0 at x = 0),
        upper = Beta(1 - level; x + 1, n - x) (1 at x = n).

    Raises:
        ParameterError: trials < 1, a count outside [0, trials], level outside (0, 0.5].
    """
    x = np.asarray(successes, dtype=np.float64)
    if trials < 1:
        raise ParameterError("trials", trials, "an integer >= 1")
    if x.size and (x.min() < 0 or x.max() > trials):
        raise ParameterError("successes", x, f"counts in [0, {trials}]")
    if not 0.0 < level <= 0.5:
        raise ParameterError("level", level, "a level in (0, 0.5]")
    with np.errstate(invalid="ignore", divide="ignore"):
        lower = np.where(x > 0, beta_distribution.ppf(level, np.maximum(x, 1), trials - x + 1), 0.0)
        upper = np.where(x < trials, beta_distribution.ppf(1.0 - level, x + 1, np.maximum(trials - x, 1)), 1.0)
    return lower.astype(np.float64), upper.astype(np.float64)


def score_offset(releases: int, four_output: bool) -> int:
    """The largest |score| of a K-symbol output (:func:`release_scores`): K (two symbols) or 2 K^2 (four)."""
    return 2 * releases * releases if four_output else releases


def release_scores(symbols: NDArray[np.uint8], four_output: bool) -> NDArray[np.int64]:
    """The likelihood-ratio score of each K-symbol output (see the module docstring).

    Args:
        symbols: uint8 (n, K): row i is one K-fold release, symbols in 0..1 (two) or 0..3 (four).
        four_output: the configured mechanism's alphabet.

    Returns:
        int64 (n,), in [-score_offset, score_offset].

    Raises:
        ParameterError: not 2-D, or a symbol outside the alphabet.
    """
    y = np.asarray(symbols)
    if y.ndim != 2:
        raise ParameterError("symbols", y.shape, "a 2-D array (samples, releases)")
    k = y.shape[1]
    weights = np.array([-2 * k, -1, 1, 2 * k] if four_output else [-1, 1], dtype=np.int64)
    if y.size and int(y.max()) >= weights.size:
        raise ParameterError("symbols", int(y.max()), f"symbols in 0..{weights.size - 1}")
    scores: NDArray[np.int64] = weights[y.astype(np.intp)].sum(axis=1)
    return scores


@dataclass(frozen=True, slots=True)
class AuditEstimate:
    """What the data certifies (see the module docstring).

    Attributes:
        epsilon, delta, releases: the configured per-release (epsilon, delta) and K.
        samples: N, outputs per input (N for b = 0 and N for b = 1).
        alpha: the family-wise level; tests: m, the number of rejection sets (Bonferroni).
        epsilon_lower_bound: max over the sets of log((P_lo - delta_K) / P_hi), clipped below at 0, with
            delta_K = 1 - (1 - delta)^K (finite: P_hi > 0 always); compare with ``epsilon_composed``.
        epsilon_composed: K epsilon, the tight epsilon of the K-fold composition at delta_K (000 Theorem 3.3, i = 0).
        violation: some set's bounds leave the Theorem 3.3 region (at family-wise level alpha).
        false_alarm, missed_detection: float64 (m/2,), the measured (P0(S+_t), 1 - P1(S+_t)) of each set S+_t.
        false_alarm_bounds, missed_detection_bounds: float64 (2, m/2), their one-sided CP bounds (low, high).
    """

    epsilon: float
    delta: float
    releases: int
    samples: int
    alpha: float
    tests: int
    epsilon_lower_bound: float
    epsilon_composed: float
    violation: bool
    false_alarm: NDArray[np.float64]
    missed_detection: NDArray[np.float64]
    false_alarm_bounds: NDArray[np.float64]
    missed_detection_bounds: NDArray[np.float64]


def audit_counts(scores0: NDArray[np.int64], scores1: NDArray[np.int64],
                 offset: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The histograms of the scores under b = 0 and b = 1 over ``-offset..offset`` (int64 (2 offset + 1,) each).

    Raises:
        ParameterError: the two samples differ in size, or a score outside the range.
    """
    s0, s1 = np.asarray(scores0, dtype=np.int64), np.asarray(scores1, dtype=np.int64)
    if s0.size != s1.size or s0.size == 0:
        raise ParameterError("scores1", s1.size, f"as many outputs as under b = 0 ({s0.size}), at least one")
    for s in (s0, s1):
        if np.abs(s).max() > offset:
            raise ParameterError("scores", int(np.abs(s).max()), f"scores in [-{offset}, {offset}]")
    size = 2 * offset + 1
    return np.bincount(s0 + offset, minlength=size), np.bincount(s1 + offset, minlength=size)


def audit_estimate(counts0: NDArray[np.int64], counts1: NDArray[np.int64], *, epsilon: float, delta: float,
                   releases: int, alpha: float = 0.05) -> AuditEstimate:
    """Certify a lower bound on epsilon and test the configured guarantee from score histograms.

    Args:
        counts0, counts1: int64 (V,), how often each score value (in increasing order) was seen under
            b = 0 and b = 1; equal totals N (from :func:`audit_counts`).
        epsilon, delta: the configured per-release level (nats; delta in [0, 1)).
        releases: K >= 1, releases per output.
        alpha: family-wise level in (0, 1) (default 0.05).

    Raises:
        ParameterError: a value outside its domain, or histograms of different shapes or totals.
    """
    epsilon, delta, releases = check_epsilon(epsilon), check_delta(delta), check_k(releases)
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    c0, c1 = np.asarray(counts0, dtype=np.int64), np.asarray(counts1, dtype=np.int64)
    n = int(c0.sum())
    if c0.shape != c1.shape or c0.ndim != 1 or n < 1 or int(c1.sum()) != n:
        raise ParameterError("counts1", c1.shape, f"a histogram like counts0 {c0.shape} with the same total {n}")
    tests = 2 * c0.size
    level = alpha / (2 * tests)
    at_least0, at_least1 = np.cumsum(c0[::-1])[::-1], np.cumsum(c1[::-1])[::-1]  # S+_t = {score >= t}
    at_most0, at_most1 = np.cumsum(c0), np.cumsum(c1)  # S-_t = {score <= t}
    lo1, hi1 = one_sided_clopper_pearson(at_least1, n, level)
    lo0, hi0 = one_sided_clopper_pearson(at_least0, n, level)
    mlo0, mhi0 = one_sided_clopper_pearson(at_most0, n, level)
    mlo1, mhi1 = one_sided_clopper_pearson(at_most1, n, level)
    # (P_lo, P_hi) pairs: the favoured input's lower bound, the other's upper bound
    favoured = np.concatenate([lo1, mlo0])
    other = np.concatenate([hi0, mhi1])
    eps_i, delta_i = theorem_3_3_corners(epsilon, delta, releases)
    delta_k = float(delta_i[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        margins = favoured - delta_k
        logs = np.where(margins > 0, np.log(np.maximum(margins, 1e-300)) - np.log(other), -np.inf)
        slopes = np.exp(np.minimum(eps_i, 700.0))
        crossed = favoured[:, None] > slopes[None, :] * other[:, None] + delta_i[None, :] + 1e-15
    return AuditEstimate(
        epsilon=epsilon, delta=delta, releases=releases, samples=n, alpha=alpha, tests=tests,
        epsilon_lower_bound=max(0.0, float(logs.max())), epsilon_composed=releases * epsilon,
        violation=bool(crossed.any()),
        false_alarm=at_least0 / n, missed_detection=1.0 - at_least1 / n,
        false_alarm_bounds=np.stack([lo0, hi0]), missed_detection_bounds=np.stack([1.0 - hi1, 1.0 - lo1]),
    )


def expected_lower_bound(p1: float, p0: float, samples: int, tests: int, alpha: float, delta: float = 0.0) -> float:
    """The lower bound :func:`audit_estimate` gives for one set S when the counts are exactly their means
    ``p1 N`` and ``p0 N`` (rounded): ``log((CP_lo(p1 N) - delta) / CP_hi(p0 N))`` at level alpha / (2 tests).
    For pure randomized response at K = 1 (p1 = e^eps / (1 + e^eps), p0 = 1 - p1) the closed form the audit
    approaches: within O(1 / sqrt(N)) of epsilon."""
    level = alpha / (2 * tests)
    lo, _ = one_sided_clopper_pearson(np.array([round(p1 * samples)]), samples, level)
    _, hi = one_sided_clopper_pearson(np.array([round(p0 * samples)]), samples, level)
    return math.log((float(lo[0]) - delta) / float(hi[0]))
