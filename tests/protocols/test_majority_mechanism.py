"""The optimal central mechanism for the majority of k voters: the line against the full hypercube LP."""

import math
import time

import numpy as np
import pytest

from mpdp.protocols.colorings.graphs import majority_hypercube
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism
from mpdp.protocols.errors import ParameterError
from tests.protocols.lp_reference import lp_optimal


@pytest.mark.parametrize("k, eps, delta", [(3, math.log(2), 0.1), (4, 0.5, 0.05), (5, 1.0, 0.0),
                                           (6, 0.3, 0.2)])
def test_line_is_the_optimum_over_all_mechanisms_on_the_hypercube(k, eps, delta) -> None:
    g = majority_hypercube(k)
    lp = lp_optimal(g, {}, eps, delta)  # maximize the average accuracy over all 2^k inputs
    truthful_lp = np.where(g.red, lp, 1 - lp)
    mech = central_majority_mechanism(k, eps, delta)
    assert mech.average_accuracy() == pytest.approx(truthful_lp.mean(), abs=1e-7)
    ones = np.array([name.count("1") for name in g.vertex_names])
    if k % 2:  # unique optimum: the balanced mechanism, a function of the count
        np.testing.assert_allclose(1 - lp, mech.release_one[ones], atol=1e-7)


def test_worst_case_is_the_balanced_bound() -> None:
    a, delta = math.exp(0.8), 0.1
    for k in (1, 2, 7, 10):
        mech = central_majority_mechanism(k, 0.8, delta, criterion="worst-case")
        assert mech.worst_case_accuracy() == pytest.approx((a + delta) / (a + 1), abs=1e-12)


def test_paper_majority_of_three() -> None:
    mech = central_majority_mechanism(3, math.log(2), 0.1)
    np.testing.assert_allclose(mech.release_one, [0.1, 0.3, 0.7, 0.9], atol=1e-12)


def test_hundred_thousand_voters_quickly() -> None:
    start = time.perf_counter()
    mech = central_majority_mechanism(100_001, 0.01, 1e-6)
    assert time.perf_counter() - start < 1.0
    assert np.all(np.diff(mech.release_one) >= 0) and mech.release_one[-1] == 1.0
    assert mech.release_one[50_001] == pytest.approx((math.exp(0.01) + 1e-6) / (math.exp(0.01) + 1))


def test_bad_arguments() -> None:
    with pytest.raises(ParameterError):
        central_majority_mechanism(0, 1.0, 0.0)
    with pytest.raises(ParameterError):
        central_majority_mechanism(3, 1.0, 0.0, criterion="median")


@pytest.mark.parametrize("epsilon", [705.0, 720.0, 745.0, 800.0, 1000.0])
@pytest.mark.parametrize("delta", [0.0, 0.01])
def test_huge_epsilon_matches_infinite_epsilon(epsilon: float, delta: float) -> None:
    """Past e^700 (overflow of a^n) and e^-745 (underflow of the balanced boundary value) the mechanism
    must still release the true majority as the eps = inf one does (regression: it released 1 always)."""
    for k in (3, 4, 5, 8):
        huge, infinite = central_majority_mechanism(k, epsilon, delta), central_majority_mechanism(k, math.inf, delta)
        np.testing.assert_allclose(huge.release_one, infinite.release_one, rtol=0, atol=1e-12)
        assert huge.epsilon == epsilon
