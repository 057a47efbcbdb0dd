"""Clopper-Pearson intervals and the consistency test."""

import pytest
from scipy.stats import beta

from mpdp.analysis import clopper_pearson, consistency_test
from mpdp.protocols import ParameterError


@pytest.mark.parametrize("s, n", [(0, 10), (10, 10), (37, 200), (199, 200)])
def test_clopper_pearson_equals_beta_quantiles(s: int, n: int) -> None:
    low, high = clopper_pearson(s, n, 0.05)
    assert low == pytest.approx(0.0 if s == 0 else beta.ppf(0.025, s, n - s + 1), abs=1e-10)
    assert high == pytest.approx(1.0 if s == n else beta.ppf(0.975, s + 1, n - s), abs=1e-10)


def test_consistency_with_exact_theory() -> None:
    assert consistency_test(200, 200, 1.0, rounds=16).consistent
    assert not consistency_test(199, 200, 1.0, rounds=16).consistent  # impossible under theory
    assert consistency_test(150, 200, 0.76, rounds=16).consistent
    far = consistency_test(100, 200, 0.9, rounds=16)
    assert not far.consistent and far.level == pytest.approx(0.05 / 16)


def test_consistency_against_an_estimated_theory() -> None:
    result = consistency_test(150, 200, 0.75, theory_counts=(3000, 4000))
    assert result.consistent and "Fisher" in result.test


@pytest.mark.parametrize("args", [(5, 0, 0.5), (11, 10, 0.5), (5, 10, 1.5), (5, 10, float("nan"))])
def test_bad_counts(args) -> None:
    with pytest.raises(ParameterError):
        consistency_test(*args)


def test_a_measured_verdict_is_the_interval_at_its_level_and_the_test_at_alpha_over_rounds() -> None:
    from scipy.stats import binom

    from mpdp.analysis.statistics.stats import measured_verdict

    v = measured_verdict(37, 200, 0.25, alpha=0.05, interval_alpha=0.01, rounds=4)
    assert v.ci_low == pytest.approx(beta.ppf(0.005, 37, 164), abs=1e-10)
    assert v.ci_high == pytest.approx(beta.ppf(0.995, 38, 163), abs=1e-10)
    # two-sided exact binomial p-value: every count no more likely than 37 under Bin(200, 0.25)
    pmf = binom.pmf(range(201), 200, 0.25)
    assert v.test.p_value == pytest.approx(pmf[pmf <= pmf[37] * (1 + 1e-7)].sum(), rel=1e-9)
    assert v.test.level == 0.05 / 4 and v.test.consistent == (v.test.p_value >= 0.05 / 4)
    # a theory a float sum left a hair above 1 is clipped, not refused
    assert measured_verdict(10, 10, 1.0 + 1e-16, alpha=0.05, interval_alpha=0.05, rounds=1).test.consistent
