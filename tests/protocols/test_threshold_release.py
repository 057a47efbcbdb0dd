"""The integer release table: exact probabilities, the public-threshold form, and the delta of rounding."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.majority_mechanism import central_majority_mechanism
from mpdp.protocols.threshold_release import release_table, rounding_delta_bound

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
