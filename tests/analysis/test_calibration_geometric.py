"""Noise calibration (000 §4) and the geometric mechanism."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from mpdp.analysis.privacy.calibration import (
    StaircaseNoise,
    corollary_4_1,
    gaussian_composition_delta,
    gaussian_composition_sigma,
    gaussian_sigma,
    gaussian_sigma_exact,
    laplace_scale,
    per_query_budget_exact,
)
from mpdp.analysis.privacy.composition import composed_delta, eq7_bound, optimal_epsilon
from mpdp.analysis.privacy.geometric import GeometricMechanism
from mpdp.analysis.privacy.privacy_region import PrivacyRegion, composition_region
from mpdp.protocols.errors import ParameterError
from tests.frequencies import assert_mean_fits, assert_proportion_fits


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(0.5, 1e-5, 100), (0.9, 1e-3, 10), (0.1, 1e-8, 1000)])
def test_corollary_4_1_meets_the_target(epsilon: float, delta: float, k: int) -> None:
    b = corollary_4_1(epsilon, delta, k)
    assert b.epsilon0 == pytest.approx(epsilon / math.sqrt(4 * k * math.log(math.e + epsilon / delta)))
    assert b.delta0 == pytest.approx(delta / (2 * k))
    assert composed_delta(b.delta0, b.delta_slack, k) <= delta
    assert eq7_bound(np.full(k, b.epsilon0), b.delta_slack) <= epsilon
    assert optimal_epsilon(b.epsilon0, k, b.delta_slack) <= epsilon


def test_corollary_4_1_as_printed_overspends_delta() -> None:
    """Our copy of 000 prints delta_tilde = delta/sqrt(2): with k delta_0 = delta/2 that is 1.207 delta."""
    delta, k = 1e-5, 100
    printed = composed_delta(delta / (2 * k), delta / math.sqrt(2), k)
    assert printed > 1.2 * delta  # checked numerically; analytically 1/2 + 1/sqrt(2) > 1
    assert composed_delta(delta / (2 * k), delta / 2, k) <= delta


def test_exact_per_query_budget_is_tight_and_larger() -> None:
    b = per_query_budget_exact(0.5, 1e-5, 100)
    assert composed_delta(b.delta0, b.delta_slack, 100) == pytest.approx(1e-5, rel=1e-12)
    assert optimal_epsilon(b.epsilon0, 100, b.delta_slack) == pytest.approx(0.5, rel=1e-9)
    assert optimal_epsilon(b.epsilon0, 100, b.delta_slack) <= 0.5
    assert b.epsilon0 > corollary_4_1(0.5, 1e-5, 100).epsilon0
    assert per_query_budget_exact(0.5, 1e-5, 1).epsilon0 == 0.5


def test_laplace_and_gaussian_scales() -> None:
    assert laplace_scale(0.5, 2.0) == 4.0
    assert gaussian_sigma(0.5, 1e-5) == pytest.approx(math.sqrt(2 * math.log(2e5)) / 0.5)
    with pytest.raises(ParameterError):
        corollary_4_1(1.5, 1e-5, 10)
    with pytest.raises(ParameterError):
        laplace_scale(0.0)


def test_staircase_closed_form_optimum_and_sampler() -> None:
    for eps in (0.1, 1.0, 3.0):
        s = StaircaseNoise(eps)
        b = math.exp(-eps)
        closed = (2 ** (-2 / 3) * b ** (2 / 3) * (1 + b) ** (2 / 3) + b) / (1 - b) ** 2
        assert s.variance == pytest.approx(closed, rel=1e-10)
        best = minimize_scalar(lambda g: StaircaseNoise(eps, 1.0, g).variance, bounds=(0, 1), method="bounded", options={"xatol": 1e-10})
        assert s.gamma == pytest.approx(best.x, abs=1e-5)
        assert s.variance <= 2 / eps**2  # never worse than Laplace
    s = StaircaseNoise(1.0, 2.0)
    x = s.sample(200_000, np.random.default_rng(0))
    # relative standard error of a sample variance: sqrt((kurtosis - 1) / n) < 0.6% here; allow ~5 SE
    assert x.var() == pytest.approx(s.variance, rel=0.03)


def test_gaussian_direct_composition_is_sufficient_and_exact_solver() -> None:
    for eps, delta, k in [(0.5, 1e-5, 100), (1.0, 1e-3, 10), (0.1, 1e-8, 1000)]:
        sigma = gaussian_composition_sigma(eps, delta, k)
        assert gaussian_composition_delta(sigma, k, eps) <= delta
        tight = gaussian_sigma_exact(eps, delta, k)
        assert tight < sigma
        assert gaussian_composition_delta(tight, k, eps) == pytest.approx(delta, rel=1e-8)
    mu = 1.3  # the analytic formula against scipy in linear space
    assert gaussian_composition_delta(1 / mu, 1, 0.7) == pytest.approx(
        norm.cdf(mu / 2 - 0.7 / mu) - math.exp(0.7) * norm.cdf(-mu / 2 - 0.7 / mu), rel=1e-12
    )


@pytest.mark.parametrize(("epsilon", "k"), [(0.7, 3), (1.5, 2), (0.3, 1)])
def test_geometric_mechanism_attains_theorem_3_3(epsilon: float, k: int) -> None:
    g = GeometricMechanism(epsilon)
    z = np.arange(-80, 82)
    p0, p1 = np.exp(g.log_pmf(z)), np.exp(g.log_pmf(z - 1))
    p0, p1 = p0 / p0.sum(), p1 / p1.sum()
    a, b = p0, p1
    for _ in range(k - 1):
        a, b = np.kron(a, p0), np.kron(b, p1)
    truncated = PrivacyRegion.from_channel(a, b)
    alpha = np.linspace(0, 1, 2001)
    exact = composition_region(epsilon, 0.0, k)
    np.testing.assert_allclose(truncated.lower_boundary(alpha), exact.lower_boundary(alpha), atol=1e-9)
    np.testing.assert_allclose(g.privacy_region(k).lower_boundary(alpha), exact.lower_boundary(alpha), atol=1e-14)


def test_geometric_pmf_and_sampler() -> None:
    """The pmf sums to one; the sampler's mean (z-test) and P(0) (binomial test) fit at alpha = 1e-6 each."""
    g = GeometricMechanism(0.5)
    z = np.arange(-200, 201)
    assert np.exp(g.log_pmf(z)).sum() == pytest.approx(1.0, rel=1e-12)
    x = g.sample(np.full(100_000, 7), np.random.default_rng(1)) - 7
    r = math.exp(-0.5)
    assert_mean_fits(x, 0.0, 2 * r / (1 - r) ** 2, alpha=1e-6)  # variance of the two-sided geometric
    assert_proportion_fits(int(np.sum(x == 0)), x.size, math.exp(g.log_pmf(0)), alpha=1e-6)
    assert np.array_equal(GeometricMechanism(math.inf).sample(np.arange(3), np.random.default_rng(0)), np.arange(3))
    with pytest.raises(ParameterError):
        GeometricMechanism(0.0)
