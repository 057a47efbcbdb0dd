"""The optimal average-case rule as a threshold on per-group counts: majority-like f at 10^5 parties.

For a *monotone* binary symmetric f (``f(x) = 1`` iff ``|x| >= sigma``: majority, AND, OR, "at least m"
votes; or the complement, handled by swapping labels) and parties that form one or two groups of equal pure
randomized response (p_g = e^eps_g / (1 + e^eps_g), q_g = 1 - p_g), the central observer's optimal
average-case rule (002 eq. (5)) depends on the transcript only through the reported-one counts t_g, and:

* the posterior of the number of ones in group g given t_g is ``S_g(t_g) = Bin(t_g, p_g) + Bin(n_g - t_g,
  q_g)`` (Bayes with the uniform prior, 002 eq. (1); the kernel of :mod:`mpdp.protocols.decision.factors`);
* the expected gain of answering y is ``w(0, y) + (w(1, y) - w(0, y)) U(t)`` with
  ``U(t) = P(S_1(t_1) + S_2(t_2) >= sigma)``, so the rule answers 1 iff ``d0 + (d1 - d0) U(t) > 0``
  (``d0 = w01 - w00 <= 0 <= d1 = w11 - w10`` for any measure that rewards the right answer); U increases
  in every t_g (p_g >= q_g), so the rule is a threshold ``t_2 >= boundary[t_1]`` with a non-increasing
  boundary (one group: a single threshold tau). Exact ties answer 0, the smallest y, as the other engines.

The work is on counts, never per transcript:

* one group of n: ``R_m(j) = P(Bin(j, p) + Bin(n - j, q) >= m)`` at single points in O(n)
  (:func:`threshold_tail`: the threshold tau by bisection, the worst case at the inputs sigma and sigma - 1)
  and on the window of counts where Bin(n, 1/2) has mass by the recurrence
  ``R_m(j + 1) - R_m(j) = (p - q) P(Bin(j, p) + Bin(n - 1 - j, q) = m - 1)``: the symmetry of randomized
  response (the channel is its own transpose: ``C(N, s) P(S(s) = t) = C(N, t) P(S(t) = s)``) turns those
  point probabilities into ONE convolution of two binomial pmfs (log-space pmfs, Loader's form,
  :func:`mpdp.protocols.numerics.binomial.log_binomial_pmf`; a direct convolution of positive numbers, exact to a
  relative ~1e-15, with exponential tilting for the far tails the binomial ratio multiplies up). ~0.1 s CPU
  at n = 10^5 (every pmf evaluated only on the window that holds all but e^-60 of its mass, O(sqrt(n))),
  where the per-transcript posterior costs O(n^2) per transcript.
* two groups of any sizes the cost model allows (:func:`count_threshold_cost`; the smaller one as the tails
  ``P(S_2(t_2) >= c)`` of its banded likelihood; the larger one as the banded likelihood of
  :func:`mpdp.protocols.decision.factors.banded_count_likelihood`): the boundary by a monotone staircase walk
  (n_1 + n_2 evaluations); the average accuracy through ``W2[tau, c] = P(T_2 >= tau, S_2 >= c)`` (uniform
  prior) on the window of counts with mass; the worst case on the anti-diagonals ``|a| = sigma`` and
  ``|a| = sigma - 1`` only (P(answer 1 | a) increases in every a_g, so the least favourable input of each
  side has the smallest / largest count). 1.5 s CPU at 5,000 + 5,000.

  The two-group worst case is often 0 to double precision, and rightly so (issue 23): the rule weighs
  each report by its group's epsilon, so at the input with every bit of the low-epsilon group and one of
  the high-epsilon group 1 (``|a| = sigma``, f = 1) the high-epsilon group's counts say "0" and the rule
  almost never answers 1. Exactly computed (log-space binomial sums, tests/protocols/test_count_threshold.py)
  for majority, epsilon 0.5 x n and 1.5 x n: 3.06e-9 at n = 100, 1.3e-16 at 200, 1.6e-38 at 500, the
  minimum over inputs at (n, 1) (brute force over every input at small n); the engine's accuracies are
  absolute to ~1e-15 (the bands drop entries below 1e-30 of their row's peak), so below that it reports 0.

Every result is certified against an independent computation: the recurrence must end at the point value
:func:`threshold_tail` and the prior average of ``U`` must equal ``P(Bin(k, 1/2) >= sigma)`` (to 1e-12,
1e-11 at 10^5), or
:class:`mpdp.protocols.errors.CertificateError` is raised.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.special import betainc, expit

from mpdp.protocols.decision.factors import (
    band_uses_filter,
    banded_count_likelihood,
    banded_rows,
    group_members,
)
from mpdp.protocols.errors import CertificateError, ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.binomial import log_binomial_pmf
from mpdp.protocols.numerics.blocks import BLOCK_ITEMS, block_slices
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT, CostEstimate, PowerLaw, import_seconds, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, truth_and_flip
from mpdp.protocols.rules.rules import check_symbols

__all__ = ["COUNT_BYTES", "COUNT_SECONDS", "PAIR_BYTES", "PAIR_SECONDS", "CountThresholdRule",
           "count_engine_cost", "count_threshold_applies", "count_threshold_cost", "count_threshold_rule",
           "threshold_tail", "threshold_tails"]

#: CPU seconds of the one-group engine from k: the pmfs and the convolution are on O(sqrt(k)) windows, the
#: O(k) part is grouping the parties (numpy on their mechanisms' ids). Measured with its call in
#: ``mpdp.accuracy`` (``benchmarks/bench_engine_cost.py``, load ~10, 2026-12-02): 0.026 s at 10^4, 0.070 s
#: at 10^5, 0.46 s at 10^6 (before the groups were arrays and the imports lazy: 2-3 s at 10^6, load ~20).
COUNT_SECONDS = PowerLaw(8.7e-5, (0.62,))
#: Peak bytes of the one-group engine besides the interpreter (~100 MB): 26 MB growth (136 MB peak RSS)
#: measured at 10^6 with the parties as arrays (70 MB before), so the model's 80 bytes a party is high.
COUNT_BYTES = PowerLaw(80.0, (1.0,))
_BASE_BYTES = 1.0e8
#: CPU seconds of the two-group engine from (n_1 + n_2, the larger n): every row of both bands, each
#: ~16 sqrt(n) wide; measured 0.9 s at 5,000 + 5,000 (epsilon 0.5 and 1.5, load ~23, 2026-12-02).
PAIR_SECONDS = PowerLaw(1.3e-6, (1.0, 0.5))
#: Peak bytes of one group's band in the two-group engine (values, indices, the smaller's tail sums):
#: with :data:`_BASE_BYTES`, 240 MB modelled against 187 MB measured peak RSS at 5,000 + 5,000.
PAIR_BYTES = PowerLaw(200.0, (1.5,))
_CERTIFY = 1e-12
#: The recurrence's drift allowed per party (4 x 2^-52 x ln 2 rounded up: log-space terms of magnitude n ln 2).
_DRIFT_PER_PARTY = 8e-16
_COVER = 60.0  # a tilt serves the j where its pmf is within e^-60 of its peak
_LOG_RANGE = 2 * _COVER + 20.0  # pmf entries below e^-140 of the peak add < e^-20 relative to what a tilt serves
_BLOCK_PRODUCTS = 10_000_000  # products per np.convolve call (~10-50 ms): signals are handled between calls
_TAIL = 60.0  # a binomial's mass further out than its _log_pmf(nats=_TAIL) window: < e^-60 ~ 1e-26


def _log_pmf(n: int, p: float, q: float, nats: float | None = None) -> NDArray[np.float64]:
    """log Binomial(n, p)(0..n), q = 1 - p given separately (no cancellation); -inf where impossible and
    (``nats`` given) outside :func:`_log_pmf_window`'s window."""
    first, values = _log_pmf_window(n, p, q, nats)
    out = np.full(n + 1, -np.inf)
    out[first: first + values.size] = values
    return out


def _log_pmf_window(n: int, p: float, q: float, nats: float | None) -> tuple[int, NDArray[np.float64]]:
    """(first count, log Binomial(n, p) from there): all of 0..n (``nats`` None), or the counts within
    ``2 L / 3 + sqrt(2 L n p q)`` of the mean n p, L = nats, outside which Bernstein's inequality leaves
    less than e^-L of mass on each side (so every pmf entry there is below e^-L): O(sqrt(n L) + L) work
    and memory instead of O(n)."""
    if n == 0:
        return 0, np.zeros(1)
    lo, hi = 0, n
    if nats is not None:
        reach = 2.0 * nats / 3.0 + math.sqrt(2.0 * nats * n * p * q) + 1.0
        lo, hi = max(0, int(n * p - reach)), min(n, int(math.ceil(n * p + reach)))
    with np.errstate(divide="ignore"):
        return lo, log_binomial_pmf(np.arange(lo, hi + 1), n, float(np.log(p)), float(np.log(q)))


def _log_convolve(a0: int, la: NDArray[np.float64], b0: int, lb: NDArray[np.float64]
                  ) -> tuple[int, NDArray[np.float64]]:
    """log of the convolution of two pmfs given as (first index, logs): (first index, logs) of the result,
    each entry to a relative ~1e-15 (a direct sum of positive numbers, shifted by each input's maximum)
    where it is within e^-_LOG_RANGE of the peak product; -inf further out (use
    :func:`_log_binomial_sum` for the far tails)."""
    ma, mb = float(la.max()), float(lb.max())
    ka = np.flatnonzero(la > ma - _LOG_RANGE)
    kb = np.flatnonzero(lb > mb - _LOG_RANGE)
    conv = _convolve_in_blocks(np.exp(la[ka[0]: ka[-1] + 1] - ma), np.exp(lb[kb[0]: kb[-1] + 1] - mb))
    with np.errstate(divide="ignore"):
        return a0 + int(ka[0]) + b0 + int(kb[0]), np.log(conv) + ma + mb


def _convolve_in_blocks(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.convolve(a, b)`` as a sum of blocks of at most ``_BLOCK_PRODUCTS`` products each: the same
    positive sums, but no single C call of seconds, so a signal (SIGTERM, Ctrl-C) is handled within ~0.1 s
    (k = 3 x 10^6: one call took 3 s)."""
    out = np.zeros(a.size + b.size - 1)
    step = max(1, _BLOCK_PRODUCTS // max(b.size, 1))
    for start in range(0, a.size, step):
        block = a[start: start + step]
        out[start: start + block.size + b.size - 1] += np.convolve(block, b)
    return out


def _log_binomial_sum(n_a: int, p: float, n_b: int, q: float, lo: int, hi: int) -> NDArray[np.float64]:
    """``log P(Bin(n_a, p) + Bin(n_b, q) = j)`` for j = lo..hi, with q = 1 - p given as its own accurate float
    (:func:`truth_and_flip`: at epsilon >= 37, p rounds to 1.0 while q = e^-eps / (1 + e^-eps) is still
    exact, so ``log(1 - p)`` is taken as ``log q``), accurate to ~1e-13 relative, far tails
    (1e-1000 and below) included, by exponential tilting: with ``p_t = p e^t / (1 - p + p e^t)`` (q_t
    likewise), ``P(j) = e^{-t j} (1 - p + p e^t)^{n_a} (1 - q + q e^t)^{n_b} P_t(j)``, and each tilt t
    centres P_t where :func:`_log_convolve` is exact. Tilts are added until every j in lo..hi lies within
    e^-_COVER of some tilt's peak. 0 < q <= p <= 1, p + q = 1 in exact arithmetic. Memory O(hi - lo + sqrt(n_a + n_b))."""
    total = n_a + n_b
    best = np.full(hi - lo + 1, -np.inf)  # log P_t(j) - max log P_t of the tilt that serves j
    out = np.full(hi - lo + 1, -np.inf)
    log_p, log_q = math.log(p), math.log(q)  # log(1 - p) = log q, log(1 - q) = log p
    if lo == 0:
        out[0], best[0] = n_a * log_q + n_b * log_p, 0.0
    if hi == total:
        out[-1], best[-1] = n_a * log_p + n_b * log_q, 0.0
    logit_p, logit_q = log_p - log_q, log_q - log_p
    # entries below e^-_LOG_RANGE of the peak are dropped anyway, and the peak is >= 1 / (n + 1)
    nats_a, nats_b = _LOG_RANGE + math.log(n_a + 1.0) + 1.0, _LOG_RANGE + math.log(n_b + 1.0) + 1.0

    def mean(t: float) -> float:
        return float(n_a * expit(logit_p + t) + n_b * expit(logit_q + t))

    target = float(np.clip(mean(0.0), lo, hi))
    while True:
        tilt = 0.0 if abs(mean(0.0) - target) < 0.5 else _increasing_root(mean, target, -1500.0, 1500.0)
        za, zb = logit_p + tilt, logit_q + tilt
        first, log_t = _log_convolve(*_log_pmf_window(n_a, float(expit(za)), float(expit(-za)), nats_a),
                                     *_log_pmf_window(n_b, float(expit(zb)), float(expit(-zb)), nats_b))
        start, stop = max(lo, first), min(hi, first + log_t.size - 1)
        if start <= stop:
            here = log_t[start - first: stop - first + 1]
            score = here - log_t.max()
            log_norm = (n_a * float(np.logaddexp(log_q, log_p + tilt))
                        + n_b * float(np.logaddexp(log_p, log_q + tilt)))
            better = score > best[start - lo: stop - lo + 1]
            out[start - lo: stop - lo + 1][better] = (here - tilt * np.arange(start, stop + 1) + log_norm)[better]
            best[start - lo: stop - lo + 1][better] = score[better]
        uncovered = lo + np.flatnonzero(best < -_COVER)
        if uncovered.size == 0:
            return out
        served = int(np.argmax(best)) + lo  # next: the uncovered j nearest the served range
        below = uncovered[uncovered < served]
        target = float(np.clip(below[-1] if below.size else uncovered[0], 0.5, total - 0.5))


def _increasing_root(fn: Callable[[float], float], target: float, lo: float, hi: float) -> float:
    """The t in [lo, hi] where the increasing ``fn`` crosses ``target``, by bisection to 1e-9 (~40 calls):
    a tilt only needs to centre its pmf near the target, and scipy.optimize's brentq would cost the
    import of scipy.optimize (~25 MB, 0.6 s) on the count path, which solves nothing else."""
    while hi - lo > 1e-9:
        mid = 0.5 * (lo + hi)
        if fn(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def threshold_tail(n: int, epsilon: float, m: int, j: int) -> float:
    """``P(Bin(j, p) + Bin(n - j, q) >= m)`` at one j, p = e^eps / (1 + e^eps), q = 1 - p: a sum of
    products of log-space pmfs and tails on the windows that hold all but e^-60 of each binomial's mass
    (O(sqrt(n)), absolute error ~1e-15)."""
    p, q = truth_and_flip(epsilon)
    a0, log_a = _log_pmf_window(j, p, q, _TAIL)
    b0, log_b = _log_pmf_window(n - j, q, p, _TAIL)
    tail_b = np.zeros(log_b.size + 1)  # tail_b[i] = P(Bin(n - j, q) >= b0 + i): 1 below, 0 above the window
    tail_b[:-1] = np.cumsum(np.exp(log_b)[::-1])[::-1]
    need = np.clip(m - a0 - np.arange(log_a.size) - b0, 0, log_b.size)
    return float(np.clip(np.dot(np.exp(log_a), tail_b[need]), 0.0, 1.0))


def threshold_tails(n: int, epsilon: float, m: int, lo: int = 0, hi: int | None = None) -> NDArray[np.float64]:
    """``R[j] = P(Bin(j, p) + Bin(n - j, q) >= m)`` for j = lo..hi, p = e^eps / (1 + e^eps), q = 1 - p.

    Read as: the probability that at least m of n randomized-response reports are 1 when j of the true bits
    are (the forward direction, 002 eq. (9)), or that at least m of the true bits are 1 given j reported
    ones (the posterior under the uniform prior). ``R[lo]`` by :func:`threshold_tail`, the rest by the
    recurrence and the one (tilted) convolution of the module docstring.

    Args:
        n: number of parties >= 0. epsilon: their common level (0..inf). m: any integer.
        lo, hi: the window of j (default 0..n).

    Returns:
        float64 array of shape (hi - lo + 1,), non-decreasing in j, in [0, 1].

    Raises:
        CertificateError: the recurrence missed the independent end point :func:`threshold_tail` at hi by
            more than 1e-12 + 8e-16 n (8.1e-11 at n = 10^5; drift of 1.9e-11 seen there: a guard on the float arithmetic).
    """
    hi = n if hi is None else hi
    if not 0 <= lo <= hi <= n:
        raise ParameterError("window", (lo, hi), f"0 <= lo <= hi <= {n}")
    p, q = truth_and_flip(epsilon)
    j = np.arange(lo, hi + 1)
    if m <= 0:
        return np.ones(j.size)
    if m > n:
        return np.zeros(j.size)
    if q == 0.0:  # epsilon = inf: the reports are the bits
        return (j >= m).astype(np.float64)
    start = threshold_tail(n, epsilon, m, lo)
    if p == q or hi == lo:
        return np.full(j.size, start)
    big_n = n - 1
    # P(Bin(j, p) + Bin(N - j, q) = m - 1) = C(N, m-1) / C(N, j) * P(Bin(m-1, p) + Bin(N - m + 1, q) = j)
    log_point = _log_binomial_sum(m - 1, p, big_n - (m - 1), q, lo, hi - 1)
    half = math.log(0.5)
    log_ratio = (log_binomial_pmf(np.array([m - 1]), big_n, half, half)[0]
                 - log_binomial_pmf(np.arange(lo, hi), big_n, half, half))
    out = np.empty(j.size)
    out[0] = start
    out[1:] = start + np.cumsum((p - q) * np.exp(log_point + log_ratio))
    end = threshold_tail(n, epsilon, m, hi)
    # each term is exp of a log-binomial of magnitude up to n ln 2 (~69,000 at n = 10^5), so its relative
    # rounding is ~n x 1e-16 and the sum of terms (<= 1) drifts by as much: 1.2e-11 - 1.9e-11 measured over
    # the whole window at n = 10^5 (epsilon 5, 30, 37), past the earlier bound n / 10^4 x 1e-12
    if abs(out[-1] - end) > _CERTIFY + _DRIFT_PER_PARTY * n:
        raise CertificateError(f"count recurrence for n={n}, epsilon={epsilon}, m={m} ended at {out[-1]!r}, "
                               f"not P(Bin({hi}, p) + Bin({n - hi}, q) >= m) = {end!r}")
    return np.clip(out, 0.0, 1.0)


def _orientation(function: BooleanFunction, measure: NDArray[np.float64], k: int
                 ) -> tuple[int, bool, NDArray[np.float64]] | None:
    """(sigma, flipped, w) with f = 1 iff |x| >= sigma (after swapping the labels when ``flipped``),
    or None when f is not a non-constant monotone binary symmetric function or w does not reward the
    right answer on both sides."""
    values = function.count_values(k)
    if values is None or function.output_size(k) != 2:
        return None
    w = np.asarray(measure, dtype=np.float64)
    flipped = bool(values[0] == 1)
    g = 1 - values if flipped else values
    if flipped:
        w = w[::-1, ::-1]
    sigma = int(np.argmax(g == 1)) if g.any() else k + 1
    if not (1 <= sigma <= k) or not (g[sigma:] == 1).all() or w.shape != (2, 2):
        return None
    if w[1, 1] < w[1, 0] or w[0, 0] < w[0, 1]:
        return None
    return sigma, flipped, w


def _groups(mechanisms: Sequence[RandomizedResponse]) -> list[tuple[NDArray[np.int64], float]] | None:
    """(party indices ascending, epsilon) per group of equal epsilon, the larger first; None for a four-output
    mechanism of delta > 0 or more than two groups. int64 arrays, not tuples: 10^6 parties' tuple is ~40 MB."""
    groups: dict[float, list[NDArray[np.int64]]] = {}
    for m, members in group_members(mechanisms):
        if m.four_output and m.delta > 0:
            return None
        groups.setdefault(float(m.epsilon), []).append(members)
    if len(groups) > 2:
        return None
    # one mechanism per epsilon (the usual): its members are ascending already, no sort of 10^7 indices
    return sorted(((v[0] if len(v) == 1 else np.sort(np.concatenate(v)), e) for e, v in groups.items()),
                  key=lambda ge: -ge[0].size)


def count_threshold_applies(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                            measure: NDArray[np.float64], observer: int | None = None) -> bool:
    """True when :func:`count_threshold_rule` serves this problem: the central observer, a non-constant
    monotone binary symmetric f, a measure rewarding the right answer, pure randomized response in one
    or two groups of equal epsilon, of any sizes: :func:`count_engine_cost` says what it costs, and
    :func:`count_threshold_rule` refuses what would not fit its time limit or the machine's memory."""
    k = len(mechanisms)
    if observer is not None or k < 1 or _orientation(function, measure, k) is None:
        return False
    groups = _groups(mechanisms)
    if groups is None:
        return False
    return True  # any sizes: their time and memory are count_engine_cost's


@dataclass(frozen=True, slots=True)
class CountThresholdRule:
    """The central observer's optimal average-case rule as a threshold on counts, with its exact accuracy.

    Attributes:
        mechanisms: the k parties' randomized responses.
        groups: the party indices (int64, ascending) of the first (larger) group and of the second (empty
            for one group).
        boundary: int64 (n_1 + 1,): answer 1 (before ``flipped``) iff the second group's reported-one count
            is >= ``boundary[t_1]``, t_1 the first group's; one group: the first group is empty and
            ``boundary[0]`` is the threshold tau on the count of all k parties.
        sigma: f = 1 (before ``flipped``) iff the number of ones is >= sigma.
        flipped: f is decreasing in the count; labels are swapped on the way in and out.
        average_accuracy, worst_case_accuracy: exact (002 eqs. (1), (3)) to an absolute ~1e-15 (a worst
            case below that reads 0: module docstring).
    """

    mechanisms: tuple[RandomizedResponse, ...]
    groups: tuple[NDArray[np.int64], NDArray[np.int64]] = field(repr=False)
    boundary: NDArray[np.int64] = field(repr=False)
    sigma: int
    flipped: bool
    average_accuracy: float
    worst_case_accuracy: float

    @property
    def observer(self) -> None:
        """Always the central observer."""
        return None

    @property
    def randomized(self) -> bool:
        """False: a deterministic threshold."""
        return False

    @property
    def engine(self) -> str:
        """``"counts"``."""
        return "counts"

    def decide(self, symbols: NDArray[np.integer[Any]], rng: np.random.Generator | None = None,
               own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.int64]:
        """The decision for each transcript: int64 (n,) for (n, k) symbols (``rng``, ``own_bits`` unused).

        Raises:
            ParameterError: a shape mismatch or a symbol outside {0, 1}."""
        s = check_symbols(symbols, self.mechanisms)
        first, second = self.groups
        t1 = s[:, first].sum(axis=1) if second.size else np.zeros(s.shape[0], dtype=np.int64)
        t2 = s[:, second if second.size else first].sum(axis=1)
        ones = (t2 >= self.boundary[t1]).astype(np.int64)
        decided: NDArray[np.int64] = 1 - ones if self.flipped else ones
        return decided

    def probabilities(self, symbols: NDArray[np.integer[Any]],
                      own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.float64]:
        """P(decide y | transcript): float64 (n, 2), one-hot at :meth:`decide`."""
        d = self.decide(symbols)
        out = np.zeros((d.size, 2))
        out[np.arange(d.size), d] = 1.0
        return out


def _window(n: int) -> tuple[int, int]:
    """The counts within 5.5 sqrt(n) of n/2: Bin(n, 1/2) has less than 2 e^-60 outside (Hoeffding)."""
    reach = int(math.ceil(5.5 * math.sqrt(n))) + 1
    return max(0, n // 2 - reach), min(n, n // 2 + reach)


def _single_group(n: int, eps: float, sigma: int, w: NDArray[np.float64]
                  ) -> tuple[NDArray[np.int64], float, float]:
    d0, d1 = w[0, 1] - w[0, 0], w[1, 1] - w[1, 0]
    lo_t, hi_t = 0, n + 1  # the first count that answers 1 (n + 1: none), by bisection on point values
    while lo_t < hi_t:
        mid = (lo_t + hi_t) // 2
        if d0 + (d1 - d0) * threshold_tail(n, eps, sigma, mid) > 0:
            hi_t = mid
        else:
            lo_t = mid + 1
    tau = lo_t
    lo, hi = _window(n)  # the average needs the counts where Bin(n, 1/2) has mass
    u = threshold_tails(n, eps, sigma, lo, hi)  # P(at least sigma ones | t reported)
    prior = np.exp(log_binomial_pmf(np.arange(lo, hi + 1), n, math.log(0.5), math.log(0.5)))
    decide = np.arange(lo, hi + 1) >= tau
    gain = np.where(decide, w[0, 1] + (w[1, 1] - w[0, 1]) * u, w[0, 0] + (w[1, 0] - w[0, 0]) * u)
    average = float(prior @ gain)
    _certify_mean(float(prior @ u), float(_binomial_tail(n, sigma)), n)
    # the least favourable inputs: sigma ones (f = 1) and sigma - 1 (f = 0), P(answer 1 | s) increasing in s
    worst = min(w[1, 0] + (w[1, 1] - w[1, 0]) * threshold_tail(n, eps, tau, sigma),
                w[0, 0] + (w[0, 1] - w[0, 0]) * threshold_tail(n, eps, tau, sigma - 1))
    return np.array([tau], dtype=np.int64), average, float(worst)


def _binomial_tail(n: int, sigma: int) -> float:
    """P(Bin(n, 1/2) >= sigma) = I_{1/2}(sigma, n - sigma + 1), 1 <= sigma <= n: the regularized incomplete
    beta function (scipy.special, Boost; equal to ``scipy.stats.binom.sf(sigma - 1, n, 1/2)`` to the last bit
    at n = 3..10^7, without importing scipy.stats: 25 MB and ~0.7 s)."""
    return float(betainc(sigma, n - sigma + 1, 0.5))


def _certify_mean(got: float, expected: float, k: int) -> None:
    if abs(got - expected) > _CERTIFY * max(1.0, k / 1e4):
        raise CertificateError(f"count engine: P(f = 1) came out {got!r}, not {expected!r} (k={k})")


#: Rows of the first group's band summed at a time in the two-group average (bounds the temporaries).
_ROW_BLOCK = 256


class _BandedTails:
    """``P(S(t) >= c)`` from the rows of a banded likelihood F[t, s] (each row one contiguous band,
    :func:`mpdp.protocols.decision.factors.banded_rows`): 1 below the band, 0 above it, the band's tail
    sums inside; memory (n + 1) x (widest band + 1), the rows read once (no sparse matrix of them)."""

    def __init__(self, n: int, epsilon: float) -> None:
        rows = list(banded_rows(n, epsilon))
        self.start = np.array([lo for lo, _ in rows], dtype=np.int64)
        self.width = max(r.size for _, r in rows)
        # one dense array, filled reversed row by row and summed in place (no per-entry index arrays, no
        # second copy): reversed[t, width - i] = P(S(t) = start[t] + i)
        reversed_band = np.zeros((n + 1, self.width + 1))
        for t in range(n + 1):
            row = rows[t][1]
            reversed_band[t, self.width + 1 - row.size:] = row[::-1]
            rows[t] = (0, row[:0])  # each row freed once copied
        for rows_block in block_slices(n + 1, max(1, BLOCK_ITEMS // (self.width + 1))):  # no call of seconds
            np.cumsum(reversed_band[rows_block], axis=1, out=reversed_band[rows_block])
        self.band = reversed_band[:, ::-1]  # band[t, i] = P(S(t) >= start[t] + i)
        self.band[:, 0] = 1.0  # the mass dropped below the band (< 1e-25) is counted in

    def row(self, t: int, c: NDArray[np.int64]) -> NDArray[np.float64]:
        """P(S(t) >= c) for one t: float64 of c's shape."""
        tails: NDArray[np.float64] = self.band[t][np.minimum(np.maximum(c - self.start[t], 0), self.width)]
        return tails

    def __call__(self, t: NDArray[np.int64], c: NDArray[np.int64]) -> NDArray[np.float64]:
        """P(S(t) >= c), elementwise over broadcast t and c."""
        tails: NDArray[np.float64] = self.band[t, np.clip(c - self.start[t], 0, self.width)]
        return tails


def _two_groups(n1: int, eps1: float, n2: int, eps2: float, sigma: int, w: NDArray[np.float64]
                ) -> tuple[NDArray[np.int64], float, float]:
    d0, d1 = w[0, 1] - w[0, 0], w[1, 1] - w[1, 0]
    u2 = _BandedTails(n2, eps2)  # first: its rows are freed before the first group's band is built
    f1 = banded_count_likelihood(n1, eps1).tocsr()
    starts = f1.indptr[:-1]

    boundary = np.empty(n1 + 1, dtype=np.int64)
    t2 = n2 + 1  # the first t2 that answers 1 (n2 + 1: none) does not increase with t1: walk down
    for t1 in range(n1 + 1):
        row = slice(f1.indptr[t1], f1.indptr[t1 + 1])
        data, need = f1.data[row], np.clip(sigma - f1.indices[row].astype(np.int64), 0, n2 + 1)  # the rest
        while t2 > 0 and d0 + (d1 - d0) * float(np.dot(data, u2.row(t2 - 1, need))) > 0:
            t2 -= 1
        boundary[t1] = t2
    prior1, prior2 = np.exp(_log_pmf(n1, 0.5, 0.5, _TAIL)), np.exp(_log_pmf(n2, 0.5, 0.5, _TAIL))
    tail2 = np.concatenate([np.cumsum(prior2[::-1])[::-1], [0.0]])  # P(T2 >= tau)
    yes_mass = float(prior1 @ tail2[boundary])
    # the average needs the counts where Bin(n, 1/2) has mass (outside 20 sqrt(n) of n/2: < e^-800)
    lo1, hi1 = _window(n1)
    lo2, hi2 = _window(n2)
    # the second group's ones needed, sigma - s1, over the window's band entries: from c_lo to c_hi
    window = f1.indices[f1.indptr[lo1]: f1.indptr[hi1 + 1]]  # a view
    c_lo, c_hi = (int(np.clip(sigma - int(s1), 0, n2 + 1)) for s1 in (window.max(), window.min()))
    # w2[tau - lo2, c - c_lo] = P(T2 >= tau, S2 >= c) for tau = lo2..hi2 + 1 (T2 outside the window has no
    # mass) and the c the sums below ask for
    w2 = np.zeros((hi2 - lo2 + 2, c_hi - c_lo + 1))  # summed from the top, one row at a time
    need_c = np.arange(c_lo, c_hi + 1)
    for t in range(hi2, lo2 - 1, -1):
        w2[t - lo2] = w2[t - lo2 + 1] + prior2[t] * u2.row(t, need_c)
    # per t1 of the window: sum_s1 F1[t1, s1] P(T2 >= boundary, S2 >= sigma - s1) (yes) and the same with
    # every T2 (mean), in blocks of rows (the band's entries of the whole window at once are ~10^7 numbers)
    yes_rows, mean_rows = np.empty(hi1 - lo1 + 1), np.empty(hi1 - lo1 + 1)
    for first in range(lo1, hi1 + 1, _ROW_BLOCK):
        last = min(first + _ROW_BLOCK, hi1 + 1)  # rows first..last - 1
        keep = slice(f1.indptr[first], f1.indptr[last])
        w_cols = np.clip(sigma - f1.indices[keep].astype(np.int64), 0, n2 + 1) - c_lo
        w_starts = starts[first: last] - f1.indptr[first]
        tau = np.repeat(np.clip(boundary[first: last], lo2, hi2 + 1) - lo2, np.diff(f1.indptr[first: last + 1]))
        data = f1.data[keep]
        yes_rows[first - lo1: last - lo1] = np.add.reduceat(data * w2[tau, w_cols], w_starts)
        mean_rows[first - lo1: last - lo1] = np.add.reduceat(data * w2[0, w_cols], w_starts)
    yes_u = float(prior1[lo1: hi1 + 1] @ yes_rows)
    all_u = float(_binomial_tail(n1 + n2, sigma))
    _certify_mean(float(prior1[lo1: hi1 + 1] @ mean_rows), all_u, n1 + n2)
    average = (w[0, 0] * (1.0 - yes_mass) + w[0, 1] * yes_mass + (w[1, 0] - w[0, 0]) * (all_u - yes_u)
               + (w[1, 1] - w[0, 1]) * yes_u)
    worst = math.inf
    for total, truth in ((sigma, 1), (sigma - 1, 0)):  # the least favourable inputs (module docstring)
        for first in range(max(0, total - n2), min(n1, total) + 1, _ROW_BLOCK):  # rows a1, in blocks
            last = min(first + _ROW_BLOCK, min(n1, total) + 1)
            keep = slice(f1.indptr[first], f1.indptr[last])
            a2 = np.repeat(total - np.arange(first, last), np.diff(f1.indptr[first: last + 1]))
            yes_prob = np.add.reduceat(f1.data[keep] * u2(a2, boundary[f1.indices[keep]]),
                                       f1.indptr[first: last] - f1.indptr[first])
            acc = w[truth, 0] + (w[truth, 1] - w[truth, 0]) * yes_prob
            worst = min(worst, float(acc.min()))
    return boundary, average, worst


def count_threshold_cost(k: int, second: int = 0) -> CostEstimate:
    """The estimated CPU time and memory of :func:`count_threshold_rule` for k equal pure parties in one
    group (:data:`COUNT_SECONDS`, :data:`COUNT_BYTES`: 0.46 s and 180 MB at 10^6), or in two of k and
    ``second`` parties (:data:`PAIR_SECONDS`, :data:`PAIR_BYTES`: both groups' bands, ~16 sqrt(n) wide).

    Raises:
        ParameterError: k < 1 or second < 0.
    """
    if k < 1:
        raise ParameterError("parties", k, "at least 1")
    if second < 0:
        raise ParameterError("second group", second, "at least 0")
    alternative = "fewer parties, or allow more time (time_limit=SECONDS)"
    if second == 0:
        return CostEstimate("the count engine", f"{k:,} {noun(k, 'party', 'parties')} in one parameter group", COUNT_SECONDS(k),
                            _BASE_BYTES + COUNT_BYTES(k), alternative, "fewer parties")
    return CostEstimate("the count engine", f"{k + second:,} parties in groups of {k:,} and {second:,}",
                        PAIR_SECONDS(k + second, max(k, second)),
                        _BASE_BYTES + PAIR_BYTES(k) + PAIR_BYTES(second), alternative,
                        "fewer parties, or one group (equal epsilons: memory linear in k)")


def count_engine_cost(mechanisms: Sequence[RandomizedResponse]) -> CostEstimate | None:
    """:func:`count_threshold_cost` of the parties' groups of equal epsilon (two groups: with the first
    import of scipy.signal where a band steps by the recursive filter), or None where the count engine does
    not serve their mechanisms (four-output, more than two groups)."""
    groups = _groups(mechanisms)
    if groups is None or not mechanisms:
        return None
    return _groups_cost(groups)


def _groups_cost(groups: list[tuple[NDArray[np.int64], float]]) -> CostEstimate:
    if len(groups) == 1:
        return count_threshold_cost(groups[0][0].size)
    cost = count_threshold_cost(groups[0][0].size, groups[1][0].size)
    first = import_seconds("scipy.signal" for members, eps in groups if band_uses_filter(members.size, eps))
    return dataclasses.replace(cost, seconds=cost.seconds + first)


def count_threshold_rule(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                         measure: NDArray[np.float64], time_limit: float | None = DEFAULT_TIME_LIMIT
                         ) -> CountThresholdRule:
    """The central observer's optimal average-case rule on counts, with its exact average (002 eq. (1))
    and worst-case (eq. (3)) accuracy.

    Args:
        mechanisms: k pure randomized responses in one or two groups of equal epsilon.
        function: a non-constant monotone binary symmetric f (majority, and, or, threshold...).
        measure: w, float64 (2, 2), w[true, guess], with w[y, y] >= w[y, 1 - y].
        time_limit: seconds allowed (None: no limit): :func:`count_engine_cost`'s estimate is checked
            against it and the machine's memory before any work.

    Returns:
        a :class:`CountThresholdRule`. Cost at k = 10^5 (one group): ~0.07 s, 10^6: ~0.5 s
        (:func:`count_threshold_cost`); k = 10^4 in two groups: ~2 s (benchmarks/bench_symmetric.py).

    Raises:
        ParameterError: the problem is not one this engine serves (:func:`count_threshold_applies`).
        CostLimitError: the estimate is over ``time_limit`` or the memory (it names the estimate).
        CertificateError: a certificate failed (module docstring).
    """
    mechs = tuple(mechanisms)
    k = len(mechs)
    oriented = _orientation(function, measure, k) if k else None
    groups = _groups(mechs)
    if oriented is None or groups is None:
        raise ParameterError("problem", function.name, "a non-constant monotone binary symmetric function, a "
                             "measure rewarding the right answer and pure randomized response in 1 or 2 "
                             "groups of equal epsilon (the count engine)")
    sigma, flipped, w = oriented
    _groups_cost(groups).check(time_limit)
    if len(groups) == 1:
        boundary, average, worst = _single_group(k, groups[0][1], sigma, w)
        members = (np.empty(0, dtype=np.int64), groups[0][0])
    else:
        (big, e1), (small, e2) = groups
        boundary, average, worst = _two_groups(big.size, e1, small.size, e2, sigma, w)
        members = (big, small)
    lo, hi = float(w.min()), float(w.max())
    return CountThresholdRule(mechs, members, boundary, sigma, flipped, min(max(average, lo), hi),
                              min(max(worst, lo), hi))
