"""The debiased count that local-DP tools report, next to the optimal decision rule for ``sum``.

A party with randomized response (keep probability p = e^eps / (1 + e^eps), q = 1 - p; 002 eq. (9))
releases symbol y; ``g(y) = (y - q) / (p - q)`` is an unbiased estimate of its bit, with variance
``p q / (p - q)^2`` whatever the bit. The four-output mechanism (000 §5.1; symbols 0 and 3 reveal the
bit, each with probability delta) likewise: ``g = (0, -q / (p - q), p / (p - q), 1)`` over symbols 0..3 is
unbiased, with variance ``(1 - delta) p q / (p - q)^2`` for either bit (E[g^2 | x] - x^2, using
p^3 + q^3 = 1 - 3pq and (p - q)^2 = 1 - 4pq). The sum over parties estimates the count with the sum of
the variances. At epsilon = 0 (p = q) no unbiased estimate exists: such a party is a clear error, or is
left out with a flag (``leave_out_uninformative``).

:func:`expected_absolute_error` gives the exact E|estimate - count| under the uniform prior of 002 eq. (1)
for k parties at one epsilon (the reported-ones count is a sufficient statistic:
:func:`mpdp.protocols.factors.pure_count_likelihood`), raw or post-processed (rounded and clipped to
0..k); :func:`debiased_figure` draws it against epsilon next to the optimal ``sum`` rule's (absolute-error
measure, average case, 002 eq. (5)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.factors import pure_count_likelihood
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.mechanisms import RandomizedResponse, truth_and_flip
from mpdp.protocols.optimal import optimal_rules
from mpdp.protocols.rules import check_symbols

__all__ = ["DebiasedSum", "debiased_figure", "debiased_sum", "debiasing_table", "expected_absolute_error",
           "optimal_sum_error"]


def debiasing_table(mechanism: RandomizedResponse) -> tuple[NDArray[np.float64], float]:
    """(g, variance): the unbiased estimate of the bit per symbol, float64 (m,), and its variance.

    Raises:
        ParameterError: epsilon = 0 (the release carries no information; no unbiased estimate exists).
    """
    p, q = truth_and_flip(mechanism.epsilon)
    if p == q:
        raise ParameterError("epsilon", mechanism.epsilon, "> 0 for a debiased estimate (at epsilon = 0 the "
                             "release is independent of the bit)")
    gap = p - q
    variance = (1.0 - mechanism.delta) * p * q / gap**2 if mechanism.four_output else p * q / gap**2
    if mechanism.four_output:
        return np.array([0.0, -q / gap, p / gap, 1.0]), variance
    return np.array([-q / gap, p / gap]), variance


@dataclass(frozen=True, slots=True)
class DebiasedSum:
    """The debiased count of one transcript.

    Attributes:
        estimate: the unbiased estimate of the number of ones among the included parties (may lie
            outside 0..n).
        standard_error: sqrt of the sum of the parties' variances.
        interval: (low, high), the normal-approximation interval at ``confidence``.
        confidence: its level.
        clipped: the estimate rounded and clipped to 0..n -- post-processed (no longer unbiased).
        included: number n of parties in the estimate; excluded: indices of parties left out (epsilon 0).
    """

    estimate: float
    standard_error: float
    interval: tuple[float, float]
    confidence: float
    clipped: int
    included: int
    excluded: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready fields; the clipped value is labelled ``post_processed``."""
        return {"estimate": self.estimate, "standard_error": self.standard_error,
                "interval": list(self.interval), "confidence": self.confidence,
                "post_processed": {"clipped": self.clipped, "note": "rounded and clipped to 0..n: not unbiased"},
                "included": self.included, "excluded": list(self.excluded)}


def debiased_sum(mechanisms: Sequence[RandomizedResponse], symbols: NDArray[np.integer[Any]] | Sequence[int],
                 confidence: float = 0.95, leave_out_uninformative: bool = False) -> DebiasedSum:
    """The debiased count of one transcript (module docstring).

    Args:
        mechanisms: the k parties' randomized responses.
        symbols: the k released symbols, int (k,).
        confidence: level of the normal interval, in (0, 1).
        leave_out_uninformative: leave out parties with epsilon = 0 (listed in ``excluded``) instead of
            raising.

    Raises:
        ParameterError: a party with epsilon = 0 (unless left out), bad symbols, or a bad confidence.
    """
    if not 0.0 < confidence < 1.0:
        raise ParameterError("confidence", confidence, "a level in (0, 1)")
    mechs = tuple(mechanisms)
    s = check_symbols(np.asarray(symbols).reshape(1, -1), mechs)[0] if mechs else np.zeros(0, dtype=np.int64)
    estimate, variance, excluded = 0.0, 0.0, []
    for i, (m, y) in enumerate(zip(mechs, s)):
        if m.epsilon == 0.0 and leave_out_uninformative:
            excluded.append(i)
            continue
        try:
            table, var = debiasing_table(m)
        except ParameterError:
            raise ParameterError(f"party {i} epsilon", 0.0, "> 0 for a debiased estimate",
                                 hint="or leave such parties out (leave_out_uninformative=True)") from None
        estimate += float(table[int(y)])
        variance += var
    se = math.sqrt(variance)
    z = float(norm.ppf(0.5 + confidence / 2.0))
    n = len(mechs) - len(excluded)
    return DebiasedSum(estimate, se, (estimate - z * se, estimate + z * se), confidence,
                       int(min(max(round(estimate), 0), n)), n, tuple(excluded))


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
    (002 eq. (5)): minus its exact average accuracy."""
    f = parse_function("sum")
    result = optimal_rules([RandomizedResponse(epsilon)] * k, f, accuracy_measure("absolute-error", k + 1),
                           rule="average")
    assert result.average is not None
    return -result.average.average_accuracy


def debiased_figure(k: int, epsilons: Sequence[float], path: str | Path | None = None) -> Any:
    """Expected absolute error against epsilon for k parties: the optimal ``sum`` rule, the debiased
    estimator raw and post-processed (rounded, clipped). Returns the matplotlib Figure (saved to ``path``
    when given); the plotted values are in ``figure.mpdp_data`` (dict of lists)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    eps = [float(e) for e in epsilons]
    data = {"epsilon": eps,
            "optimal_rule": [optimal_sum_error(k, e) for e in eps],
            "debiased": [expected_absolute_error(k, e) for e in eps],
            "debiased_clipped": [expected_absolute_error(k, e, post_processed=True) for e in eps]}
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.plot(eps, data["optimal_rule"], "o-", label="optimal decision rule for sum (002 eq. (5))")
    ax.plot(eps, data["debiased"], "s--", label="debiased estimator (unbiased)")
    ax.plot(eps, data["debiased_clipped"], "^:", label="debiased, rounded and clipped (post-processed)")
    ax.set_xlabel("epsilon per party")
    ax.set_ylabel("expected absolute error of the count")
    ax.set_title(f"sum of k = {k} bits, uniform inputs: expected absolute error")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.mpdp_data = data  # type: ignore[attr-defined]
    if path is not None:
        fig.savefig(path, dpi=120, bbox_inches="tight")
    return fig
