"""Privacy regions: R(eps, delta), channel regions by likelihood ratios, Theorem 3.3's intersection."""

import math

import numpy as np
import pytest

from mpdp.analysis.privacy.privacy_region import (
    PrivacyRegion,
    composition_region,
    dp_region,
    intersection,
)
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

ALPHA = np.linspace(0.0, 1.0, 4001)


def _kron_channel(mech: RandomizedResponse, k: int) -> tuple[np.ndarray, np.ndarray]:
    p0, p1 = mech.channel
    a, b = p0, p1
    for _ in range(k - 1):
        a, b = np.kron(a, p0), np.kron(b, p1)
    return a, b


def test_dp_region_vertices_and_constraints() -> None:
    r = dp_region(0.5, 0.1)
    corner = 0.9 / (1 + math.exp(0.5))
    np.testing.assert_allclose(r.false_alarm, [0.0, corner, 0.9])
    np.testing.assert_allclose(r.missed_detection, [0.9, corner, 0.0])
    # a point is inside iff it meets the four inequalities of R(eps, delta)
    rng = np.random.default_rng(0)
    a, b = rng.random(2000), rng.random(2000)
    e, d = math.exp(0.5), 0.1
    inside = (a + e * b >= 1 - d) & (e * a + b >= 1 - d) & (1 - a + e * (1 - b) >= 1 - d) & (e * (1 - a) + 1 - b >= 1 - d)
    np.testing.assert_array_equal(r.contains(a, b, atol=0.0), inside)


def test_extreme_parameters() -> None:
    assert dp_region(0.0, 0.0).area() == pytest.approx(0.0)
    assert dp_region(1000.0, 0.0).area() == pytest.approx(1.0)
    assert dp_region(math.inf, 0.2).lower_boundary(0.0) == pytest.approx(0.8)
    with pytest.raises(ParameterError):
        dp_region(0.1, 1.5)


@pytest.mark.parametrize(("epsilon", "delta"), [(0.5, 0.1), (1.2, 0.0), (0.1, 0.001)])
def test_four_output_randomized_response_attains_the_region(epsilon: float, delta: float) -> None:
    m = RandomizedResponse(epsilon, delta, four_output=True).channel
    region = PrivacyRegion.from_channel(m[0], m[1])
    np.testing.assert_allclose(region.lower_boundary(ALPHA), dp_region(epsilon, delta).lower_boundary(ALPHA), atol=1e-15)


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(0.5, 0.1, 4), (0.1, 0.001, 5), (1.0, 0.0, 6), (0.3, 0.05, 1)])
def test_theorem_3_3_region_equals_the_composed_channel(epsilon: float, delta: float, k: int) -> None:
    """Brute force: the Neyman-Pearson region of the 4^k-output product channel."""
    p0, p1 = _kron_channel(RandomizedResponse(epsilon, delta, four_output=True), k)
    brute = PrivacyRegion.from_channel(p0, p1)
    exact = composition_region(epsilon, delta, k)
    np.testing.assert_allclose(brute.lower_boundary(ALPHA), exact.lower_boundary(ALPHA), atol=1e-13)
    assert brute.is_subset_of(exact, atol=1e-13) and exact.is_subset_of(brute, atol=1e-13)


def test_composition_shrinks_privacy_and_sits_inside_basic() -> None:
    one = composition_region(0.1, 0.001, 1)
    thirty = composition_region(0.1, 0.001, 30)
    assert one.is_subset_of(thirty)
    assert thirty.is_subset_of(dp_region(3.0, 0.03))
    assert not dp_region(3.0, 0.03).is_subset_of(thirty)


def test_intersection_is_the_max_of_boundaries() -> None:
    regions = [dp_region(0.2, 0.1), dp_region(1.0, 0.0), dp_region(0.05, 0.3)]
    both = intersection(regions)
    expected = np.max([r.lower_boundary(ALPHA) for r in regions], axis=0)
    np.testing.assert_allclose(both.lower_boundary(ALPHA), expected, atol=1e-15)
    assert regions[0].intersect(regions[1]).is_subset_of(regions[1])


def test_channel_validation() -> None:
    with pytest.raises(ParameterError):
        PrivacyRegion.from_channel(np.array([0.5, 0.5]), np.array([0.2, 0.2]))
    with pytest.raises(ParameterError):
        PrivacyRegion.from_channel(np.array([1.0]), np.array([0.5, 0.5]))
