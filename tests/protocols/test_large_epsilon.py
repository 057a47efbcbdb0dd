"""Large epsilon (issue 10, item 4): no overflow, the flip probability in e^-eps / (1 + e^-eps) form,
and a seeded simulation that draws exactly the deployed distribution at every epsilon."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from mpdp.protocols.decision.factors import banded_count_likelihood, pure_count_likelihood
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.exact_bernoulli import exact_bernoulli, exact_bernoulli_constant
from mpdp.protocols.randomization.mechanisms import (
    RandomizedResponse,
    sample_protocol,
    truth_and_flip,
)

mpmath.mp.dps = 50


def _flip(eps: float) -> float:
    """q = 1 / (1 + e^eps) to 50 digits, rounded once to float64 (subnormals included)."""
    return float(1 / (1 + mpmath.exp(mpmath.mpf(eps))))


@pytest.mark.parametrize("eps", [0.0, 1.0, 36.7, 40.0, 700.0, 709.0, 709.78, 710.0, 740.0, 746.0, math.inf])
def test_the_flip_probability_keeps_its_last_bit(eps: float) -> None:
    p, q = truth_and_flip(eps)
    expected = 0.0 if math.isinf(eps) else _flip(eps)
    assert q == pytest.approx(expected, rel=1e-15, abs=0.0) or abs(q - expected) <= 5e-324
    assert p == pytest.approx(float(1 / (1 + mpmath.exp(-mpmath.mpf(eps)))), rel=2.3e-16)
    assert RandomizedResponse(eps).channel[0, 1] == q


def test_epsilon_710_is_not_zero() -> None:  # expit(-710) underflows to 0.0; the value
    assert RandomizedResponse(710).channel[0, 1] == pytest.approx(4.476286225675130e-309, rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(700.0, 760.0), n=st.integers(1, 6))
def test_count_likelihoods_near_the_float_limit(eps: float, n: int) -> None:
    """F[j, c] = P(c ones reported | j ones held): the convolution of Binomial(j, p) and
    Binomial(n - j, q), computed here in 50-digit arithmetic; scipy's binom.pmf raised OverflowError
    for eps in about 708.5-709.78."""
    q = mpmath.mpf(truth_and_flip(eps)[1])
    p = 1 - q
    exact = np.array([[float(sum(mpmath.binomial(j, a) * p**a * q**(j - a) * mpmath.binomial(n - j, c - a)
                                 * q**(c - a) * p**(n - j - c + a) for a in range(max(0, c - n + j), min(j, c) + 1)))
                       for c in range(n + 1)] for j in range(n + 1)])
    assert np.allclose(pure_count_likelihood(n, eps), exact, rtol=1e-12, atol=0.0)
    # the banded engine drops entries below 1e-30 of their row's largest (its documented band)
    assert np.allclose(banded_count_likelihood(n, eps).toarray(), exact, rtol=1e-12, atol=1e-30)


class CoarseBits:
    """A bit source for the test: the first 53 bits of each uniform are c 2^-53 with c uniform in
    0..7 (U is uniform on [0, 8 2^-53)); the bits after them (the refinement draws) are real ones."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def random(self, size: int | tuple[int, ...]) -> np.ndarray:
        if isinstance(size, tuple):
            return np.ldexp(self.rng.integers(0, 8, size=size).astype(np.float64), -53)
        return self.rng.random(size)


@pytest.mark.parametrize("eps", [36.7, 40.0])
def test_flip_frequency_at_large_epsilon_is_exact(eps: float) -> None:
    """With U uniform on [0, 8 2^-53), P(U < q) = q 2^53 / 8: 0.129 at eps 36.7 and 0.0053 at 40.
    ``rng.random() < q`` gave 2/8 and 1/8 (1.93x and 23x). 10^6 draws, two-sided binomial test at
    level 1e-4 (seeded)."""
    q = truth_and_flip(eps)[1]
    expected = math.ldexp(q, 53) / 8
    draws = exact_bernoulli(np.full(10**6, q), CoarseBits(7))  # type: ignore[arg-type]
    ones = int(draws.sum())
    assert binomtest(ones, draws.size, expected).pvalue > 1e-4, (ones / draws.size, expected)
    coarse_old = np.ldexp(CoarseBits(7).random((10**6,)), 0) < q
    assert binomtest(int(coarse_old.sum()), draws.size, expected).pvalue < 1e-100  # the old rule fails


def test_exact_bernoulli_decides_ties_with_the_next_bits() -> None:
    q = math.ldexp(1.25, -60)  # below 2^-53: only a first draw of 0 can give True, then U' < 2^-7 * 1.25

    class Fixed:
        def __init__(self, values: list[float]) -> None:
            self.values = values

        def random(self, size: int | tuple[int, ...]) -> np.ndarray:
            return np.array([self.values.pop(0)]).reshape(size)

    assert exact_bernoulli(np.array([q]), Fixed([0.0, math.ldexp(1.2, -7)]))[0]  # type: ignore[arg-type]
    assert not exact_bernoulli(np.array([q]), Fixed([0.0, math.ldexp(1.3, -7)]))[0]  # type: ignore[arg-type]
    assert not exact_bernoulli(np.array([q]), Fixed([math.ldexp(1.0, -53)]))[0]  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="probabilities in"):
        exact_bernoulli(np.array([1.5]), np.random.default_rng(0))


@pytest.mark.parametrize("eps", [1.0, 36.7, 40.0, 700.0])
def test_one_probability_draws_as_the_general_function_ties_included(eps: float) -> None:
    """exact_bernoulli_constant(q, n) is exact_bernoulli(np.full(n, q)): with CoarseBits a first draw ties
    with q's first 53 bits one time in 8 at eps 36.7 and 40, so the refinement draws are exercised too."""
    q = truth_and_flip(eps)[1]
    for seed in range(5):
        general = exact_bernoulli(np.full(4000, q), CoarseBits(seed))  # type: ignore[arg-type]
        assert np.array_equal(exact_bernoulli_constant(q, 4000, CoarseBits(seed)), general)  # type: ignore[arg-type]
        assert np.array_equal(exact_bernoulli_constant(q, 4000, np.random.default_rng(seed)),
                              exact_bernoulli(np.full(4000, q), np.random.default_rng(seed)))
    with pytest.raises(ParameterError, match="probabilities in"):
        exact_bernoulli_constant(float("nan"), 3, np.random.default_rng(0))


def test_a_seeded_stream_is_unchanged_where_the_old_rule_was_right() -> None:
    """The first 53 bits are ``rng.random(shape)``: away from ties (probability 2^-53 each) the draws
    are those of ``rng.random(shape) < p``, so seeded runs (the README's House run) keep their output."""
    p = np.random.default_rng(1).random((300, 40))
    assert np.array_equal(exact_bernoulli(p, np.random.default_rng(5)), np.random.default_rng(5).random(p.shape) < p)


def test_moderate_epsilon_frequency() -> None:
    """sample_protocol at eps = 2: flip frequency of 10^6 draws against q = 1 / (1 + e^2), two-sided
    binomial test at level 1e-4 (seeded)."""
    symbols = sample_protocol([RandomizedResponse(2.0)], np.array([1]), 10**6, np.random.default_rng(11))
    flips = int((symbols[:, 0] == 0).sum())
    assert binomtest(flips, 10**6, truth_and_flip(2.0)[1]).pvalue > 1e-4
