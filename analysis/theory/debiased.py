"""The debiased count that local-DP tools report, next to the optimal decision rule for ``sum``.

A party with randomized response (keep probability p = e^eps / (1 + e^eps), q = 1 - p; 002 eq. (9))
releases symbol y; ``g(y) = (y - q) / (p - q)`` is an unbiased estimate of its bit, with variance
``p q / (p - q)^2`` whatever the bit. The four-output mechanism (000 §5.1; symbols 0 and 3 reveal the
bit, each with probability delta) likewise: ``g = (0, -q / (p - q), p / (p - q), 1)`` over symbols 0..3 is
unbiased, with variance ``(1 - delta) p q / (p - q)^2`` for either bit (E[g^2 | x] - x^2, using
p^3 + q^3 = 1 - 3pq and (p - q)^2 = 1 - 4pq). The sum over parties estimates the count with the sum of
the variances. At epsilon = 0 (p = q) these estimates are undefined (for randomized response no unbiased
estimate exists at all), and for epsilon below about 1e-154 their variance overflows float64: such a party
is a clear error, or is left out with a flag (``leave_out_uninformative``).

:func:`expected_absolute_error` gives the exact E|estimate - count| under the uniform prior of 002 eq. (1)
for k parties at one epsilon (the reported-ones count is a sufficient statistic:
:func:`mpdp.protocols.decision.factors.pure_count_likelihood`), raw or post-processed (rounded and clipped to
0..k); :func:`figure_debiased` (``mpdp figures``: ``002-sum-debiased``) draws it against epsilon next to
the optimal ``sum`` rule's (absolute-error measure, average case, 002 eq. (5)).

A live round of ``mpdp simulate --function sum`` (:func:`mpdp.analysis.reports.evaluation.evaluate_round`) carries
:func:`debiased_round`: the estimate pooled over the round's repetitions with its interval, and, from the
true bits, whether it covers the count and how often one transcript's interval does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from mpdp.analysis.plot_style import EPSILON_LABEL, new_axes, series_style
from mpdp.protocols.decision.factors import pure_count_likelihood
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import error_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, truth_and_flip
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.rules import check_symbols

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["DebiasedRound", "DebiasedSum", "debiased_round", "debiased_sum", "debiasing_table",
           "expected_absolute_error", "figure_debiased", "optimal_sum_error"]


def debiasing_table(mechanism: RandomizedResponse) -> tuple[NDArray[np.float64], float]:
    """(g, variance): the unbiased estimate of the bit per symbol, float64 (m,), and its variance.

    Raises:
        ParameterError: epsilon = 0 (p = q: the estimate is undefined), or so small (below about 1e-154)
            that its variance overflows float64.
    """
    p, q = truth_and_flip(mechanism.epsilon)
    gap = math.tanh(mechanism.epsilon / 2.0)  # = p - q, without the cancellation of the subtraction
    keep = 1.0 - mechanism.delta if mechanism.four_output else 1.0
    variance = keep * p * q / gap / gap if gap else math.inf  # divided twice: gap**2 may underflow to 0
    if not math.isfinite(variance):
        raise ParameterError("epsilon", mechanism.epsilon, "> 0 for a debiased estimate, and above about 1e-154 "
                             "(at epsilon = 0 the release is independent of the bit; below, its variance "
                             "overflows float64)")
    if mechanism.four_output:
        return np.array([0.0, -q / gap, p / gap, 1.0]), variance
    return np.array([-q / gap, p / gap]), variance


@dataclass(frozen=True, slots=True)
class DebiasedSum:
    """The debiased count of one transcript, or pooled over ``repetitions`` independent transcripts of the
    same bits (the mean of their estimates: still unbiased, variance divided by ``repetitions``).

    Attributes:
        estimate: the unbiased estimate of the number of ones among the included parties (may lie
            outside 0..n).
        standard_error: sqrt of the sum of the parties' variances (over ``repetitions``).
        interval: (low, high), the normal-approximation interval at ``confidence``.
        confidence: its level.
        clipped: the estimate rounded and clipped to 0..n -- post-processed (no longer unbiased).
        included: number n of parties in the estimate; excluded: the parties left out (epsilon 0), by
            their labels (positions 0..k-1, or the ``ids`` given).
        repetitions: transcripts pooled.
    """

    estimate: float
    standard_error: float
    interval: tuple[float, float]
    confidence: float
    clipped: int
    included: int
    excluded: tuple[int, ...]
    repetitions: int = 1

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields; the clipped value is labelled ``post_processed``."""
        return {"estimate": self.estimate, "standard_error": self.standard_error,
                "interval": list(self.interval), "confidence": self.confidence,
                "post_processed": {"clipped": self.clipped, "note": "rounded and clipped to 0..n: not unbiased"},
                "included": self.included, "excluded": list(self.excluded), "repetitions": self.repetitions}


@dataclass(frozen=True, slots=True)
class _Transcripts:
    """Per-transcript debiased estimates of r transcripts: float64 (r,), their common variance, the
    included parties (bool (k,)) and the excluded ones' labels."""

    estimates: NDArray[np.float64]
    variance: float
    included: NDArray[np.bool_]
    excluded: tuple[int, ...]


def _transcripts(mechanisms: Sequence[RandomizedResponse], symbols: NDArray[np.integer[Any]] | Sequence[Any],
                 leave_out_uninformative: bool, ids: Sequence[int] | NDArray[np.integer[Any]] | None) -> _Transcripts:
    """The debiased estimate of every row of ``symbols`` (k,) or (r, k) (module docstring)."""
    mechs = tuple(mechanisms)
    labels = list(range(len(mechs))) if ids is None else [int(i) for i in ids]
    if len(labels) != len(mechs):
        raise ParameterError("ids", len(labels), f"one label per party ({len(mechs)})")
    raw = np.asarray(symbols)
    s = check_symbols(raw.reshape(1, -1) if raw.ndim == 1 else raw, mechs)
    included = np.ones(len(mechs), dtype=bool)
    table = np.zeros((len(mechs), 4))
    variance = 0.0
    for i, m in enumerate(mechs):
        try:
            g, var = debiasing_table(m)
        except ParameterError:
            if leave_out_uninformative:
                included[i] = False
                continue
            raise ParameterError(f"party {labels[i]} epsilon", m.epsilon, "> 0 (above about 1e-154) for a "
                                 "debiased estimate", hint="or leave such parties out "
                                 "(leave_out_uninformative=True)") from None
        table[i, :g.size] = g
        variance += var
    estimates = table[np.arange(len(mechs)), s].sum(axis=1) if s.size else np.zeros(s.shape[0])
    return _Transcripts(estimates, variance, included, tuple(labels[i] for i in np.flatnonzero(~included)))


def _pooled(t: _Transcripts, confidence: float) -> DebiasedSum:
    """The mean of the transcripts' estimates, its standard error and normal interval at ``confidence``."""
    r = max(t.estimates.size, 1)
    estimate = float(t.estimates.mean()) if t.estimates.size else 0.0
    se = math.sqrt(t.variance / r)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    n = int(t.included.sum())
    return DebiasedSum(estimate, se, (estimate - z * se, estimate + z * se), confidence,
                       int(min(max(round(estimate), 0), n)), n, t.excluded, int(t.estimates.size))


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ParameterError("confidence", confidence, "a level in (0, 1)")


def debiased_sum(mechanisms: Sequence[RandomizedResponse], symbols: NDArray[np.integer[Any]] | Sequence[Any],
                 confidence: float = 0.95, leave_out_uninformative: bool = False,
                 ids: Sequence[int] | NDArray[np.integer[Any]] | None = None) -> DebiasedSum:
    """The debiased count of one transcript, or pooled over several of the same bits (module docstring).

    Args:
        mechanisms: the k parties' randomized responses.
        symbols: int (k,), one transcript; or int (r, k), r independent transcripts of the same bits
            (their estimates averaged).
        confidence: level of the normal interval, in (0, 1).
        leave_out_uninformative: leave out parties with epsilon = 0 or below about 1e-154 (listed in
            ``excluded``) instead of raising.
        ids: the parties' labels in errors and ``excluded`` (default: positions 0..k-1).

    Raises:
        ParameterError: a party with epsilon = 0 (unless left out), bad symbols, or a bad confidence.
    """
    _check_confidence(confidence)
    return _pooled(_transcripts(mechanisms, symbols, leave_out_uninformative, ids), confidence)


@dataclass(frozen=True, slots=True)
class DebiasedRound:
    """The debiased count of one live round (``repetitions`` independent transcripts of the same bits x),
    with what the true bits show of it.

    Attributes:
        pooled: the estimate pooled over the repetitions (:class:`DebiasedSum`).
        true_count: the number of ones among the included parties.
        transcript_standard_error: the standard error of one transcript's estimate.
        coverage: fraction of the repetitions whose one-transcript interval (at ``pooled.confidence``)
            covers ``true_count``: nominally the confidence (the normal approximation's).
        mean_absolute_error: mean over the repetitions of |one transcript's estimate - true_count|.
    """

    pooled: DebiasedSum
    true_count: int
    transcript_standard_error: float
    coverage: float
    mean_absolute_error: float

    @property
    def covered(self) -> bool:
        """The pooled interval covers the true count."""
        return self.pooled.interval[0] <= self.true_count <= self.pooled.interval[1]

    def as_dict(self) -> dict[str, Any]:
        """The ``debiased`` object of a round in ``results.json``: the pooled fields, then the checks."""
        return self.pooled.as_dict() | {
            "true_count": self.true_count, "covered": self.covered,
            "transcript_standard_error": self.transcript_standard_error, "transcript_coverage": self.coverage,
            "transcript_mean_absolute_error": self.mean_absolute_error}


def debiased_round(mechanisms: Sequence[RandomizedResponse], symbols: NDArray[np.integer[Any]],
                   x: NDArray[np.integer[Any]] | Sequence[int], confidence: float = 0.95,
                   ids: Sequence[int] | NDArray[np.integer[Any]] | None = None) -> DebiasedRound:
    """The debiased count of a live round and its check against the true bits; parties with epsilon 0
    (or below about 1e-154) are left out (listed in ``pooled.excluded``).

    Args:
        mechanisms: the n participants' randomized responses.
        symbols: int (repetitions, n), the round's transcripts (``symbols[r, j]``: participant j's symbol
            in repetition r).
        x: int (n,), the participants' true bits.
        confidence: level of the normal intervals, in (0, 1).
        ids: the participants' party ids (labels of ``excluded``).

    Raises:
        ParameterError: bad symbols, x of another length than the parties, or a bad confidence.
    """
    _check_confidence(confidence)
    bits = np.asarray(x, dtype=np.int64)
    if bits.shape != (len(mechanisms),):
        raise ParameterError("x", bits.shape, f"one bit per party: shape ({len(mechanisms)},)")
    t = _transcripts(mechanisms, symbols, True, ids)
    truth = int(bits[t.included].sum())
    se = math.sqrt(t.variance)
    half = float(norm.ppf(0.5 + confidence / 2.0)) * se
    errors = np.abs(t.estimates - truth)
    return DebiasedRound(_pooled(t, confidence), truth, se,
                         float((errors <= half).mean()) if errors.size else 0.0,
                         float(errors.mean()) if errors.size else 0.0)


def expected_absolute_error(k: int, epsilon: float, post_processed: bool = False) -> float:
    """Exact E|debiased count - true count| for k parties at one pure epsilon > 0, x uniform on {0,1}^k.

    Args:
        post_processed: round and clip the estimate to 0..k first.

    Raises:
        ParameterError: k < 1 or epsilon not in (0, inf].
    """
    if k < 1:
        raise ParameterError("k", k, "an integer >= 1")
    p, q = truth_and_flip(epsilon)
    if not epsilon > 0:
        raise ParameterError("epsilon", epsilon, "> 0 for a debiased estimate")
    forward = pure_count_likelihood(k, epsilon)  # F[s, c] = P(c reported ones | s ones)
    c = np.arange(k + 1, dtype=np.float64)
    estimate = (c - k * q) / (p - q)
    if post_processed:
        estimate = np.clip(np.rint(estimate), 0, k)
    s = np.arange(k + 1, dtype=np.float64)
    prior = np.array([math.comb(k, j) for j in range(k + 1)], dtype=np.float64) / 2.0**k
    return float(prior @ (forward * np.abs(estimate[None, :] - s[:, None])).sum(axis=1))


def optimal_sum_error(k: int, epsilon: float) -> float:
    """E|decision - count| of the optimal average-case rule for ``sum`` under the absolute-error measure
    (002 eq. (5), the posterior median: :mod:`mpdp.protocols.decision.error_rules`): minus its exact average
    accuracy."""
    f = parse_function("sum")
    measure = error_measure("absolute-error", k + 1)
    assert measure is not None  # an error measure
    result = optimal_rules([RandomizedResponse(epsilon)] * k, f, measure, rule="average")
    assert result.average is not None
    return -result.average.average_accuracy


def figure_debiased(k: int = 10, epsilons: Sequence[float] = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0),
                    ax: Axes | None = None) -> Figure:
    """Expected absolute error of the count against epsilon for k parties, x uniform: the optimal ``sum``
    rule (absolute-error measure, average case, 002 eq. (5); gid ``optimal``), the debiased estimator
    (gid ``debiased``) and the same rounded and clipped to 0..k (post-processed; gid ``debiased-clipped``).
    Log-scaled y: the debiased error grows like 1/epsilon as epsilon -> 0, the optimal rule's stays <= k/2.

    Raises:
        ParameterError: k < 1 or an epsilon not > 0.
    """
    eps = [float(e) for e in epsilons]
    figure, ax = new_axes(ax, (6.5, 4.5))
    series = (("optimal", "optimal decision rule for sum (002 eq. (5))", [optimal_sum_error(k, e) for e in eps]),
              ("debiased", "debiased estimator (unbiased)", [expected_absolute_error(k, e) for e in eps]),
              ("debiased-clipped", "debiased, rounded and clipped to 0..$k$ (post-processed)",
               [expected_absolute_error(k, e, post_processed=True) for e in eps]))
    for j, (gid, label, values) in enumerate(series):
        style = series_style(j)
        ax.plot(eps, values, gid=gid, label=label, ms=4, color=style["color"], linestyle=style["linestyle"],
                marker=style["marker"])
    ax.set_yscale("log")
    ax.set_xlabel(EPSILON_LABEL)
    ax.set_ylabel(r"$E\,|\mathrm{estimate} - \mathrm{count}|$, $x$ uniform")
    ax.set_title(f"002: sum of $k = {k}$ bits, the optimal rule against the debiased count", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return figure
