"""Statistics for measured accuracy: exact intervals and a consistency test against theory.

* Clopper-Pearson (exact binomial) confidence intervals, from ``scipy.stats.binomtest``.
* :func:`consistency_test`: is a measured success count consistent with a theoretical success
  probability? Two-sided exact binomial test when the theory is exact; Fisher's exact test against the
  Monte Carlo counts when the theory is itself an estimate. Simultaneous rounds are corrected by
  Bonferroni: each round is tested at level alpha / rounds, so the chance that any consistent round is
  flagged is at most alpha.
* :func:`measured_verdict`: both at once for one measured count against an exact theory (the interval and
  the test of a sweep's point, or of one round of a dataset sweep's point).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import binomtest, fisher_exact

from mpdp.protocols.errors import ParameterError

__all__ = ["Consistency", "MeasuredVerdict", "clopper_pearson", "consistency_test", "measured_verdict"]


def _check_counts(successes: int, trials: int) -> None:
    if trials < 1:
        raise ParameterError("trials", trials, "an integer >= 1")
    if not 0 <= successes <= trials:
        raise ParameterError("successes", successes, f"an integer in [0, {trials}]")


def clopper_pearson(successes: int, trials: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided 1 - alpha interval for a binomial proportion.

    Raises:
        ParameterError: trials < 1, successes outside [0, trials], alpha outside (0, 1).
    """
    _check_counts(successes, trials)
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    ci = binomtest(successes, trials).proportion_ci(confidence_level=1.0 - alpha, method="exact")
    return float(ci.low), float(ci.high)


@dataclass(frozen=True, slots=True)
class Consistency:
    """Outcome of :func:`consistency_test`.

    Attributes:
        p_value: two-sided p-value of the round's test.
        level: the per-round level it was compared with (alpha / rounds).
        consistent: ``p_value >= level``.
        test: the test's name.
    """

    p_value: float
    level: float
    consistent: bool
    test: str


def consistency_test(
    successes: int,
    trials: int,
    theory: float,
    *,
    alpha: float = 0.05,
    rounds: int = 1,
    theory_counts: tuple[int, int] | None = None,
) -> Consistency:
    """Test measured successes against a theoretical success probability.

    Args:
        successes, trials: the measured counts (correct decisions, repetitions).
        theory: the theoretical success probability in [0, 1].
        alpha: family-wise significance level over all rounds.
        rounds: number of rounds tested together (Bonferroni).
        theory_counts: (successes, trials) of a Monte Carlo theory; then Fisher's exact test
            compares the two samples instead of the binomial test against ``theory``.

    Raises:
        ParameterError: counts, theory, alpha or rounds out of range.
    """
    _check_counts(successes, trials)
    if not (0.0 <= theory <= 1.0) or math.isnan(theory):
        raise ParameterError("theory", theory, "a probability in [0, 1]")
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    if rounds < 1:
        raise ParameterError("rounds", rounds, "an integer >= 1")
    level = alpha / rounds
    if theory_counts is None:
        p_value = float(binomtest(successes, trials, min(max(theory, 0.0), 1.0)).pvalue)
        test = "exact binomial"
    else:
        s2, n2 = theory_counts
        _check_counts(s2, n2)
        table = [[successes, trials - successes], [s2, n2 - s2]]
        p_value = float(fisher_exact(np.array(table)).pvalue)
        test = "Fisher exact (theory estimated)"
    return Consistency(p_value, level, p_value >= level, test)


@dataclass(frozen=True, slots=True)
class MeasuredVerdict:
    """Outcome of :func:`measured_verdict`.

    Attributes:
        ci_low, ci_high: the Clopper-Pearson interval of the success rate, in [0, 1].
        test: the exact binomial test of the successes against the theory (:class:`Consistency`).
    """

    ci_low: float
    ci_high: float
    test: Consistency


def measured_verdict(successes: int, trials: int, theory: float, *, alpha: float, interval_alpha: float,
                     rounds: int) -> MeasuredVerdict:
    """The interval and the consistency test of ``successes`` out of ``trials`` against an exact theory.

    Args:
        successes, trials: the measured counts (right decisions, repetitions).
        theory: the exact success probability; clipped into [0, 1] (a float sum may stray by an ulp).
        alpha: family-wise level of the test, compared per test at alpha / rounds (Bonferroni).
        interval_alpha: the interval's level is 1 - interval_alpha. rounds: tests made together (>= 1).

    Raises:
        ParameterError: as :func:`clopper_pearson` and :func:`consistency_test`.
    """
    low, high = clopper_pearson(successes, trials, interval_alpha)
    test = consistency_test(successes, trials, min(max(theory, 0.0), 1.0), alpha=alpha, rounds=rounds)
    return MeasuredVerdict(low, high, test)
