"""Randomized response: channel matrices, posteriors, sampling, and the CSPRNG sampler."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpdp.protocols import ParameterError, RandomizedResponse, sample_protocol
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon
from mpdp.protocols.randomization.secure import realized_epsilon, sample_secure, secure_bernoulli
from tests.frequencies import assert_counts_fit, assert_proportion_fits

epsilons = st.floats(0, 60, allow_nan=False)
deltas = st.floats(0, 0.99)


@given(epsilons, deltas)
def test_channel_rows_are_distributions_and_epsilon_delta_private(eps: float, delta: float) -> None:
    m = RandomizedResponse(eps, delta)
    M = m.channel
    assert M.shape == (2, m.num_symbols)
    np.testing.assert_allclose(M.sum(axis=1), 1.0, atol=1e-12)
    # (eps, delta)-DP for the bit (000 eq. (15)): hockey-stick divergence at e^eps is <= delta
    for a, b in ((0, 1), (1, 0)):
        hockey = np.maximum(M[a] - math.exp(eps) * M[b], 0).sum()
        assert hockey <= delta + 1e-12


def test_pure_channel_closed_form() -> None:
    p = math.e / (1 + math.e)
    np.testing.assert_allclose(RandomizedResponse(1.0).channel, [[p, 1 - p], [1 - p, p]], rtol=1e-15)


def test_four_output_channel_matches_paper() -> None:
    eps, d = 0.7, 0.1
    p = math.exp(eps) / (1 + math.exp(eps))
    expected = [[d, (1 - d) * p, (1 - d) * (1 - p), 0], [0, (1 - d) * (1 - p), (1 - d) * p, d]]
    np.testing.assert_allclose(RandomizedResponse(eps, d).channel, expected, rtol=1e-14)


@pytest.mark.parametrize("eps, p", [(0.0, 0.5), (1000.0, 1.0), (math.inf, 1.0)])
def test_extreme_epsilons_are_exact_without_warnings(eps: float, p: float) -> None:
    m = RandomizedResponse(eps)
    assert m.p_truth == p
    assert np.isfinite(m.channel).all()
    np.testing.assert_array_equal(m.posterior_one, [1 - p, p])


@pytest.mark.parametrize("eps", [-0.1, math.nan, "abc"])
def test_bad_epsilon_names_the_value(eps: object) -> None:
    with pytest.raises(ParameterError, match="epsilon"):
        RandomizedResponse(eps)  # type: ignore[arg-type]


@pytest.mark.parametrize("delta", [-0.1, 1.0, math.nan])
def test_bad_delta(delta: float) -> None:
    with pytest.raises(ParameterError, match=r"delta.*\[0, 1\)"):
        RandomizedResponse(1.0, delta)


def test_sampler_frequencies_match_channel() -> None:
    """Each party's symbol counts fit its channel row (chi-square, alpha = 1e-6)."""
    rng = np.random.default_rng(3)
    mechs = [RandomizedResponse(0.5), RandomizedResponse(1.5, 0.2)]
    symbols = sample_protocol(mechs, np.array([1, 0]), 200_000, rng)
    for i, m in enumerate(mechs):
        counts = np.bincount(symbols[:, i], minlength=m.num_symbols)
        assert_counts_fit(counts, m.channel[[1, 0][i]], alpha=1e-6)


def test_sampler_is_reproducible_with_a_seed() -> None:
    mechs = [RandomizedResponse(1.0)] * 5
    a = sample_protocol(mechs, np.ones(5, int), 10, np.random.default_rng(9))
    b = sample_protocol(mechs, np.ones(5, int), 10, np.random.default_rng(9))
    np.testing.assert_array_equal(a, b)


@given(st.sampled_from([0.0, 0.3, 1.0, 5.0, 40.0, math.inf]), st.sampled_from([0.0, 0.01, 0.5]),
       st.integers(0, 1), st.integers(0, 300), st.integers(0, 2**32 - 1))
def test_one_partys_sample_is_its_column_of_the_protocols_draws(eps: float, delta: float, bit: int, size: int,
                                                               seed: int) -> None:
    """A party's sampler (its hot path) gives the symbols of ``sample_protocol`` for that one party and leaves
    the generator where it leaves it (the seeded streams of a run, the README's House table, stay the same)."""
    mech = RandomizedResponse(eps, delta)
    mine, theirs = np.random.default_rng(seed), np.random.default_rng(seed)
    got = mech.sample(bit, size, mine)
    assert got.dtype == np.uint8 and np.array_equal(got, sample_protocol([mech], np.array([bit]), size, theirs)[:, 0])
    assert mine.random() == theirs.random()


def test_sampler_rejects_bad_bits() -> None:
    with pytest.raises(ParameterError, match="bits"):
        sample_protocol([RandomizedResponse(1.0)], np.array([2]), 1, np.random.default_rng(0))


def test_secure_bernoulli_is_exact_at_the_ends_and_unbiased() -> None:
    """Unseeded (OS randomness): the binomial test at alpha = 1e-6 fails a correct sampler once in 10^6 runs."""
    assert not any(secure_bernoulli(0.0) for _ in range(100))
    assert all(secure_bernoulli(1.0) for _ in range(100))
    hits = sum(secure_bernoulli(0.25) for _ in range(20_000))
    assert_proportion_fits(hits, 20_000, 0.25, alpha=1e-6)


def test_secure_sampler_distribution_and_alphabet() -> None:
    """Unseeded (OS randomness): chi-square at alpha = 1e-6; symbol 0 (reveals a 0) never follows bit 1."""
    m = RandomizedResponse(1.0, 0.3)
    out = sample_secure(m, 1, 20_000)
    assert out.dtype == np.uint8 and set(np.unique(out)) <= {1, 2, 3}
    assert_counts_fit(np.bincount(out, minlength=4), m.channel[1], alpha=1e-6)
    assert set(np.unique(sample_secure(RandomizedResponse(math.inf), 0, 50))) == {0}


def test_realized_epsilon() -> None:
    assert realized_epsilon(RandomizedResponse(2.0)) == pytest.approx(2.0, rel=1e-14)
    assert realized_epsilon(RandomizedResponse(1000.0)) == math.inf


@pytest.mark.parametrize("text", ["-0", "-0.0", -0.0])
def test_minus_zero_is_zero(text: str | float) -> None:  # echoed as 0, never -0.0
    for value in (check_epsilon(text), check_delta(text), RandomizedResponse(float(text)).epsilon):
        assert value == 0.0 and math.copysign(1.0, value) == 1.0
