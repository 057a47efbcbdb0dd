"""The audit's statistics against independent computations: Beta quantiles, the likelihood-ratio order of
the outputs by brute force, the closed form of pure randomized response, and a seeded false-alarm rate."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import beta, binom

from mpdp.analysis import clopper_pearson
from mpdp.analysis.privacy.audit import (
    audit_counts,
    audit_estimate,
    expected_lower_bound,
    one_sided_clopper_pearson,
    release_scores,
    score_offset,
)
from mpdp.protocols import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


@given(st.integers(1, 400).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
       st.sampled_from([0.001, 0.025, 0.1]))
def test_one_sided_bounds_are_the_two_sided_interval_at_twice_the_level(case: tuple[int, int], level: float) -> None:
    x, n = case
    lo, hi = one_sided_clopper_pearson(np.array([x]), n, level)
    low, high = clopper_pearson(x, n, 2 * level)
    assert lo[0] == pytest.approx(low, abs=1e-9) and hi[0] == pytest.approx(high, abs=1e-9)


@pytest.mark.parametrize("four_output", [False, True])
@pytest.mark.parametrize("k", [1, 2, 3])
def test_scores_order_outputs_by_their_likelihood_ratio(four_output: bool, k: int) -> None:
    """Brute force over every K-symbol output: a larger exact likelihood ratio P1/P0 never gets a smaller score."""
    rr = RandomizedResponse(0.7, 0.05 if four_output else 0.0)
    m = rr.channel
    outputs = np.array(list(itertools.product(range(rr.num_symbols), repeat=k)), dtype=np.uint8)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.log(m[1][outputs]).sum(axis=1) - np.log(m[0][outputs]).sum(axis=1)
    scores = release_scores(outputs, four_output)
    finite = ~np.isnan(log_ratio)  # outputs impossible under both inputs (0 and 3 together) are never seen
    for i, j in itertools.product(np.flatnonzero(finite), repeat=2):
        if log_ratio[i] > log_ratio[j] + 1e-12:
            assert scores[i] > scores[j], (outputs[i], outputs[j])
    assert np.abs(scores).max() <= score_offset(k, four_output)


def _binary_counts(p1: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Histograms over scores (-1, 0, 1) of one binary release with exactly round(p n) ones."""
    ones1, ones0 = round(p1 * n), round((1 - p1) * n)
    return np.array([n - ones0, 0, ones0]), np.array([n - ones1, 0, ones1])


@pytest.mark.parametrize("epsilon", [0.25, 1.0, 3.0])
def test_pure_randomized_response_reaches_its_closed_form(epsilon: float) -> None:
    n, alpha = 10**6, 0.05
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    c0, c1 = _binary_counts(p, n)
    estimate = audit_estimate(c0, c1, epsilon=epsilon, delta=0.0, releases=1, alpha=alpha)
    level = alpha / (2 * estimate.tests)  # the closed form, from scipy's Beta quantiles directly
    closed = math.log(beta.ppf(level, round(p * n), n - round(p * n) + 1)
                      / beta.ppf(1 - level, round((1 - p) * n) + 1, n - round((1 - p) * n)))
    assert estimate.epsilon_lower_bound == pytest.approx(closed, abs=1e-9)
    assert estimate.epsilon_lower_bound == pytest.approx(expected_lower_bound(p, 1 - p, n, estimate.tests, alpha))
    assert epsilon - 0.02 < estimate.epsilon_lower_bound <= epsilon and not estimate.violation
    doubled = audit_estimate(c0, c1, epsilon=epsilon / 2, delta=0.0, releases=1, alpha=alpha)
    assert doubled.violation and doubled.epsilon_lower_bound > epsilon / 2


def test_k_fold_release_at_its_exact_distribution_stays_in_the_theorem_3_3_region() -> None:
    """Counts proportional to the exact distribution of the score of K = 6 four-output releases: inside the
    region; audited as if configured for a smaller epsilon: a violation."""
    k, n, rr = 6, 10**6, RandomizedResponse(0.4, 0.01)
    outputs = np.array(list(itertools.product(range(4), repeat=k)), dtype=np.uint8)
    offset = score_offset(k, True)
    scores = release_scores(outputs, True) + offset
    counts = []
    for row in rr.channel:
        probability = np.bincount(scores, weights=row[outputs].prod(axis=1), minlength=2 * offset + 1)
        counts.append(np.floor(probability * n).astype(np.int64))
    deficit = [n - int(c.sum()) for c in counts]
    for c, d in zip(counts, deficit, strict=True):
        c[offset] += d  # put the rounding remainder on the uninformative score 0
    inside = audit_estimate(counts[0], counts[1], epsilon=0.4, delta=0.01, releases=k)
    assert not inside.violation and inside.epsilon_lower_bound <= k * 0.4
    assert audit_estimate(counts[0], counts[1], epsilon=0.3, delta=0.01, releases=k).violation


def test_a_correct_release_is_flagged_at_most_at_rate_alpha() -> None:
    """400 seeded audits of pure randomized response (N = 2000, alpha = 0.05): the number flagged is
    Binomial(400, <= 0.05); the test fails only above its 0.999 quantile (significance 0.001)."""
    rng = np.random.default_rng(20261201)
    epsilon, n, trials = 1.0, 2000, 400
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    flagged = 0
    for _ in range(trials):
        ones0, ones1 = rng.binomial(n, 1 - p), rng.binomial(n, p)
        flagged += audit_estimate(np.array([n - ones0, 0, ones0]), np.array([n - ones1, 0, ones1]),
                                  epsilon=epsilon, delta=0.0, releases=1).violation
    assert flagged <= binom.ppf(0.999, trials, 0.05)


def test_counts_from_scores() -> None:
    c0, c1 = audit_counts(np.array([-1, -1, 1]), np.array([1, 1, -1]), 1)
    assert c0.tolist() == [2, 0, 1] and c1.tolist() == [1, 0, 2]


@pytest.mark.parametrize("call", [
    lambda: audit_counts(np.array([0]), np.array([0, 1]), 1),
    lambda: audit_counts(np.array([3]), np.array([0]), 1),
    lambda: release_scores(np.array([0, 1], dtype=np.uint8), False),
    lambda: release_scores(np.array([[2]], dtype=np.uint8), False),
    lambda: audit_estimate(np.array([1, 0]), np.array([0, 2]), epsilon=1.0, delta=0.0, releases=1),
    lambda: audit_estimate(np.array([1, 0]), np.array([0, 1]), epsilon=1.0, delta=0.0, releases=1, alpha=1.0),
    lambda: audit_estimate(np.array([1, 0]), np.array([0, 1]), epsilon=-1.0, delta=0.0, releases=1),
    lambda: one_sided_clopper_pearson(np.array([3]), 2, 0.05),
    lambda: one_sided_clopper_pearson(np.array([1]), 2, 0.7),
])
def test_bad_input_is_named(call) -> None:
    with pytest.raises(ParameterError):
        call()
