"""analysis.theory.debiased: the debiased count, checked by exact enumeration and on seeded transcripts (the figure
against the optimal rule: tests/analysis/test_paper_figures.py)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, binomtest

from mpdp.analysis.theory.debiased import (
    debiased_round,
    debiased_sum,
    debiasing_table,
    expected_absolute_error,
)
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

MECHS = [RandomizedResponse(0.7), RandomizedResponse(1.5, 0.2, four_output=True), RandomizedResponse(3.0)]


@pytest.mark.parametrize("mech", [RandomizedResponse(0.3), RandomizedResponse(2.0),
                                  RandomizedResponse(1.0, 0.1, four_output=True)])
def test_each_party_is_unbiased_with_the_stated_variance(mech: RandomizedResponse) -> None:
    g, variance = debiasing_table(mech)
    m = mech.channel
    assert m @ g == pytest.approx([0.0, 1.0], abs=1e-12)  # E[g | x] = x
    assert m @ g**2 - np.array([0.0, 1.0]) == pytest.approx([variance, variance], rel=1e-12)
    p = math.exp(mech.epsilon) / (1 + math.exp(mech.epsilon))
    assert variance == pytest.approx((1 - mech.delta) * p * (1 - p) / (2 * p - 1) ** 2, rel=1e-12)


def test_the_sum_is_unbiased_over_every_transcript() -> None:
    """Exact expectation over all transcripts for every input x of three mixed parties."""
    for x in itertools.product([0, 1], repeat=3):
        mean = 0.0
        for tau in itertools.product(*[range(m.num_symbols) for m in MECHS]):
            prob = math.prod(m.channel[xi, t] for m, xi, t in zip(MECHS, x, tau))
            mean += prob * debiased_sum(MECHS, list(tau)).estimate
        assert mean == pytest.approx(sum(x), abs=1e-12)
    result = debiased_sum(MECHS, [1, 3, 0])
    assert result.standard_error == pytest.approx(math.sqrt(sum(debiasing_table(m)[1] for m in MECHS)))
    lo, hi = result.interval
    assert lo < result.estimate < hi and hi - lo == pytest.approx(2 * 1.959963984540054 * result.standard_error)
    assert 0 <= result.clipped <= 3 and result.as_dict()["post_processed"]["clipped"] == result.clipped


def test_epsilon_zero_is_a_clear_error_or_left_out() -> None:
    mechs = [RandomizedResponse(1.0), RandomizedResponse(0.0)]
    with pytest.raises(ParameterError, match="party 1 epsilon"):
        debiased_sum(mechs, [1, 0])
    result = debiased_sum(mechs, [1, 0], leave_out_uninformative=True)
    assert result.excluded == (1,) and result.included == 1
    assert result.estimate == pytest.approx(debiasing_table(mechs[0])[0][1])


def test_tiny_epsilon_keeps_its_variance_or_is_left_out() -> None:
    # variance p q / tanh(eps/2)^2 -> 1 / eps^2 as eps -> 0 (p - q by subtraction would be 66% off at 2e-16)
    for eps in (1e-8, 2e-16, 1e-150):
        assert debiasing_table(RandomizedResponse(eps))[1] == pytest.approx(eps**-2, rel=1e-7)
    mechs = [RandomizedResponse(1e-160), RandomizedResponse(1.0)]  # 1 / eps^2 overflows float64
    with pytest.raises(ParameterError, match="party 0 epsilon=1e-160"):
        debiased_sum(mechs, [0, 1])
    result = debiased_sum(mechs, [0, 1], leave_out_uninformative=True)
    assert result.excluded == (0,) and math.isfinite(result.standard_error)


@pytest.mark.parametrize("clipped", [False, True])
def test_expected_absolute_error_by_enumeration(clipped: bool) -> None:
    k, eps = 4, 0.8
    mech = RandomizedResponse(eps)
    g = debiasing_table(mech)[0]
    total = 0.0
    for x in itertools.product([0, 1], repeat=k):
        for tau in itertools.product([0, 1], repeat=k):
            prob = math.prod(mech.channel[xi, t] for xi, t in zip(x, tau)) / 2**k
            est = sum(g[t] for t in tau)
            if clipped:
                est = min(max(round(est), 0), k)
            total += prob * abs(est - sum(x))
    assert expected_absolute_error(k, eps, post_processed=clipped) == pytest.approx(total, rel=1e-12)


def test_pooled_transcripts_average_their_estimates_with_the_variance_divided() -> None:
    rows = np.array([[1, 3, 0], [0, 2, 1], [1, 0, 1]])
    pooled = debiased_sum(MECHS, rows, confidence=0.9)
    singles = [debiased_sum(MECHS, row) for row in rows]
    assert pooled.repetitions == 3 and pooled.estimate == pytest.approx(np.mean([s.estimate for s in singles]))
    assert pooled.standard_error == pytest.approx(singles[0].standard_error / math.sqrt(3))
    assert pooled.interval[1] - pooled.interval[0] == pytest.approx(2 * 1.6448536269514722 * pooled.standard_error)


def test_excluded_parties_are_named_by_their_ids() -> None:
    mechs = [RandomizedResponse(0.0), RandomizedResponse(1.0), RandomizedResponse(0.0)]
    with pytest.raises(ParameterError, match="party 17 epsilon"):
        debiased_sum(mechs, [0, 1, 1], ids=[17, 4, 9])
    assert debiased_sum(mechs, [0, 1, 1], ids=[17, 4, 9], leave_out_uninformative=True).excluded == (17, 9)
    with pytest.raises(ParameterError, match="ids"):
        debiased_sum(mechs, [0, 1, 1], ids=[1, 2])
    with pytest.raises(ParameterError, match="confidence"):
        debiased_sum(mechs, [0, 1, 1], confidence=1.0)


def test_a_round_leaves_epsilon_zero_out_and_counts_the_included_ones() -> None:
    mechs = [RandomizedResponse(1.0), RandomizedResponse(0.0), RandomizedResponse(2.0)]
    symbols = np.array([[1, 1, 1], [0, 1, 1]])
    r = debiased_round(mechs, symbols, [1, 1, 0], ids=[3, 5, 8])
    assert r.pooled.excluded == (5,) and r.pooled.included == 2 and r.true_count == 1  # party 5's 1 not counted
    g1, g2 = debiasing_table(mechs[0])[0], debiasing_table(mechs[2])[0]
    assert r.pooled.estimate == pytest.approx(((g1[1] + g2[1]) + (g1[0] + g2[1])) / 2)
    errors = [abs(g1[1] + g2[1] - 1), abs(g1[0] + g2[1] - 1)]
    assert r.mean_absolute_error == pytest.approx(np.mean(errors))
    half = 1.959963984540054 * r.transcript_standard_error
    assert r.coverage == pytest.approx(np.mean([e <= half for e in errors]))
    doc = r.as_dict()
    assert doc["excluded"] == [5] and doc["true_count"] == 1 and doc["post_processed"]["clipped"] in (0, 1, 2)
    with pytest.raises(ParameterError, match="x"):
        debiased_round(mechs, symbols, [1, 1])


def test_seeded_transcripts_are_unbiased_and_cover_at_the_exact_rate() -> None:
    """40 parties at epsilon 0.8, 3000 seeded transcripts of one x with 13 ones: the pooled interval
    (99%) covers 13, and the one-transcript coverage of the 95% interval matches its exact value (the
    reported-ones count is Bin(13, p) + Bin(27, q)) by a two-sided binomial test at level 0.001."""
    k, s, eps, reps = 40, 13, 0.8, 3000
    mech = RandomizedResponse(eps)
    x = np.array([1] * s + [0] * (k - s))
    rng = np.random.default_rng(20251201)
    p = math.exp(eps) / (1 + math.exp(eps))
    symbols = np.where(rng.random((reps, k)) < p, x, 1 - x)
    r = debiased_round([mech] * k, symbols, x, confidence=0.95)
    pooled = debiased_sum([mech] * k, symbols, confidence=0.99)
    assert pooled.interval[0] <= s <= pooled.interval[1]
    c = np.arange(k + 1)
    pmf = np.convolve(binom.pmf(np.arange(s + 1), s, p), binom.pmf(np.arange(k - s + 1), k - s, 1 - p))
    estimate = (c - k * (1 - p)) / (2 * p - 1)
    exact = float(pmf[np.abs(estimate - s) <= 1.959963984540054 * r.transcript_standard_error].sum())
    assert abs(exact - 0.95) < 0.03  # the normal approximation is close here
    assert binomtest(round(r.coverage * reps), reps, exact).pvalue > 0.001
    assert r.mean_absolute_error == pytest.approx(float(pmf @ np.abs(estimate - s)), rel=0.05)
