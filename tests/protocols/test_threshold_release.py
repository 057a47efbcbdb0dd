"""The integer release table: exact probabilities, the public-threshold form, and the delta of rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.analysis.privacy.geometric import GeometricMechanism
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.threshold_release import geometric_table, release_table, rounding_delta_bound

monotone = st.lists(st.floats(0.0, 1.0), min_size=1, max_size=30).map(lambda v: np.sort(np.array(v)))


@settings(max_examples=200, deadline=None)
@given(monotone, st.integers(1, 60))
def test_table_is_within_half_an_ulp_of_r_and_monotone(r: np.ndarray, bits: int) -> None:
    table = release_table(r, bits)
    assert np.all(np.abs(table.released_probability - r) <= 2.0 ** -(bits + 1))
    assert np.all(np.diff(table.scaled) >= 0)
    assert table.scaled.min() >= 0 and table.scaled.max() <= 2**bits


@settings(max_examples=100, deadline=None)
@given(monotone, st.integers(1, 7))
def test_threshold_form_equals_comparison_for_every_u(r: np.ndarray, bits: int) -> None:
    """Brute force over all 2^L values of u: 1{u < N(s)} = 1{s >= #{c : N(c) <= u}}, and P = N(s)/2^L."""
    table = release_table(r, bits)
    us = range(2**bits)
    for s, n in enumerate(table.scaled):
        by_comparison = [u < n for u in us]
        assert by_comparison == [s >= table.thresholds(u) for u in us]
        assert sum(by_comparison) == n


@pytest.mark.parametrize(("voters", "epsilon", "delta"), [(11, 1.0, 0.0), (10, 0.5, 0.01), (435, 1.0, 0.0)])
@pytest.mark.parametrize("bits", [3, 10, 40])
def test_realized_delta_is_within_the_bound(voters: int, epsilon: float, delta: float, bits: int) -> None:
    mechanism = central_majority_mechanism(voters, epsilon, delta)
    table = release_table(mechanism.release_one, bits)
    realized = table.realized_delta(epsilon)
    assert realized <= rounding_delta_bound(epsilon, delta, bits) + 1e-15
    assert release_table(mechanism.release_one, 60).realized_delta(epsilon) <= delta + 1e-12


def test_coarse_rounding_costs_delta() -> None:
    """k = 11, eps = 1, L = 3: N = round(8 R) jumps 0 -> 1 between s = 3 and 4 (R = 0.036, 0.099), so
    P'(1 | 4) - e P'(1 | 3) = 1/8: delta grows from 0 to 1/8 (the accounting is not vacuous)."""
    table = release_table(central_majority_mechanism(11, 1.0, 0.0).release_one, 3)
    assert table.scaled[3] == 0 and table.scaled[4] == 1
    assert table.realized_delta(1.0) == pytest.approx(0.125, abs=1e-15)
    assert rounding_delta_bound(1.0, 0.0, 3) == pytest.approx((1 + math.e) / 16)


@pytest.mark.parametrize(("r", "bits"), [([0.5, 0.2], 10), ([1.5], 10), ([], 10), ([0.5], 0), ([0.5], 61)])
def test_bad_input_is_refused(r: list[float], bits: int) -> None:
    with pytest.raises(ParameterError):
        release_table(np.array(r), bits)


def test_u_outside_range_is_refused() -> None:
    with pytest.raises(ParameterError, match="u"):
        release_table(np.array([0.5]), 4).thresholds(16)


def test_the_geometric_table_draws_the_two_sided_geometric_of_000() -> None:
    """At L = 40 the noise as drawn is 000's two-sided geometric (analysis.privacy.geometric's closed form) to within
    1e-11 at every z it reaches, and the mass it leaves out is below 1e-10; the release pmf of a count sums to
    1 and puts the clamped tails on 0 and n."""
    epsilon = 1.0
    table = geometric_table(epsilon)
    noise = table.noise_pmf()
    span = (noise.size - 1) // 2
    z = np.arange(-span, span + 1)
    exact = np.exp(GeometricMechanism(epsilon).log_pmf(z))
    assert np.abs(noise - exact).max() < 1e-11 and 1.0 - exact.sum() < 1e-10
    released = table.release_pmf(1, 4)
    assert released.sum() == pytest.approx(1.0, abs=1e-12)
    assert released[0] == pytest.approx(exact[z <= -1].sum(), abs=1e-11)
    assert released[4] == pytest.approx(exact[z >= 3].sum(), abs=1e-11)
    assert released[1] == pytest.approx((1 - math.exp(-epsilon)) / (1 + math.exp(-epsilon)), abs=1e-11)


def test_a_small_geometric_table_is_exact_in_integers() -> None:
    """L = 6, eps = 1: t_j = round(64 e^-j) = 24, 9, 3, 1; P(G = g) = (t_g - t_(g+1)) / 64 by hand."""
    table = geometric_table(1.0, 6)
    assert table.thresholds.tolist() == [24, 9, 3, 1]
    g = np.array([40, 15, 6, 2, 1]) / 64
    assert np.allclose(table.noise_pmf(), np.convolve(g, g[::-1]), atol=0)
    with pytest.raises(ParameterError):
        geometric_table(0.0)
    with pytest.raises(ParameterError):
        table.release_pmf(5, 4)
