"""Statistical checks of sampled frequencies, each at a significance level ``alpha`` the caller states.

Each check fails a correct sampler with probability at most ``alpha`` (asymptotically, for the chi-square
and normal approximations); a seeded test then passes or fails deterministically, and an unseeded one
(the OS randomness of ``mpdp.protocols.randomization.secure``) fails spuriously once in ``1 / alpha`` runs.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats


def assert_counts_fit(counts: ArrayLike, probabilities: ArrayLike, alpha: float) -> None:
    """Pearson's chi-square goodness of fit of symbol counts to a distribution, at level ``alpha``.

    Cells of probability zero must be empty (any count there is impossible, not merely unlikely); the other
    cells must each expect at least 5 draws, where the chi-square approximation holds.
    """
    counts = np.asarray(counts, dtype=np.int64)
    probabilities = np.asarray(probabilities, dtype=np.float64)
    possible = probabilities > 0
    assert counts[~possible].sum() == 0, f"draws in cells of probability zero: {counts}"
    expected = probabilities[possible] * counts.sum()
    assert expected.min() >= 5, f"too few draws for the chi-square test: expected {expected}"
    if possible.sum() < 2:
        return
    p_value = stats.chisquare(counts[possible], expected).pvalue
    assert p_value >= alpha, f"counts {counts} vs probabilities {probabilities}: p = {p_value:.3g} < {alpha}"


def assert_proportion_fits(successes: int, trials: int, probability: float, alpha: float) -> None:
    """Exact two-sided binomial test of ``successes`` out of ``trials`` against ``probability``."""
    p_value = stats.binomtest(successes, trials, probability).pvalue
    assert p_value >= alpha, f"{successes}/{trials} vs {probability}: p = {p_value:.3g} < {alpha}"


def assert_mean_fits(samples: ArrayLike, mean: float, variance: float, alpha: float) -> None:
    """Two-sided z-test of a sample mean against a known mean and variance (normal approximation)."""
    values = np.asarray(samples, dtype=np.float64)
    bound = stats.norm.isf(alpha / 2) * math.sqrt(variance / values.size)
    assert abs(values.mean() - mean) <= bound, f"mean {values.mean()} vs {mean}: beyond {bound:.3g} (alpha {alpha})"
