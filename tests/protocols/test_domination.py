"""001 Definition 2 (domination) and 000 Theorem 2.5 made constructive (a post-processing channel)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.analysis.figures.graph_figures import fig2_graph
from mpdp.analysis.privacy.post_processing import outside_point, post_processing_channel
from mpdp.analysis.privacy.privacy_region import PrivacyRegion, dp_region
from mpdp.protocols.colorings.coloring_mechanisms import optimal_mechanism, privacy_violations
from mpdp.protocols.colorings.domination import compare_mechanisms, truth_probability
from mpdp.protocols.colorings.graphs import line_graph
from mpdp.protocols.colorings.line_mechanisms import boundary_homogeneous_mechanism
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

FIG2 = fig2_graph()


def test_incomparable_mechanisms() -> None:
    line = line_graph(1, 1)
    balanced, blue = np.array([1 / 3, 2 / 3]), np.zeros(2)
    for r in (balanced, blue):  # both (log 2, 0)-DP
        assert not privacy_violations(line, r, math.log(2), 0.0).any()
    assert compare_mechanisms(line, balanced, blue) == "incomparable"
    assert compare_mechanisms(line, blue, balanced) == "incomparable"


def test_theorem_2_optimum_dominates_the_pullback_with_the_same_boundary() -> None:
    eps, delta = math.log(1.3), 0.1
    pullback = boundary_homogeneous_mechanism(FIG2, 1 / 13, eps, delta).red_probability
    assert pullback is not None and not privacy_violations(FIG2, pullback, eps, delta).any()
    best = optimal_mechanism(FIG2, {"h": 1 / 13, "l": 1 / 13}, eps, delta).red_probability
    assert best is not None
    assert compare_mechanisms(FIG2, best, pullback) in ("dominates", "equal")
    assert compare_mechanisms(FIG2, pullback, best) in ("dominated", "equal")


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_domination_is_a_partial_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    line = line_graph(2, 2)
    a, b, c = (rng.choice([0.0, 0.25, 0.5], size=4) for _ in range(3))
    ab, ba = compare_mechanisms(line, a, b), compare_mechanisms(line, b, a)
    assert {ab, ba} in ({"equal"}, {"dominates", "dominated"}, {"incomparable"})
    if ab in ("dominates", "equal") and compare_mechanisms(line, b, c) in ("dominates", "equal"):
        assert compare_mechanisms(line, a, c) in ("dominates", "equal")  # transitive
    assert compare_mechanisms(line, a, a) == "equal"


def test_truth_probability_refuses_bad_input() -> None:
    with pytest.raises(ParameterError, match="red_probability"):
        truth_probability(line_graph(1, 1), np.array([0.5, 1.5]))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1))
def test_theorem_2_5_builds_the_post_processing(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m1 = RandomizedResponse(float(rng.uniform(0, 3)), float(rng.uniform(0, 0.3)), four_output=True).channel
    garble = rng.dirichlet(np.full(3, 0.7), size=4)
    m2 = m1 @ garble  # a post-processing by construction: its region is inside
    t = post_processing_channel(m1, m2)
    assert t.shape == (4, 3) and np.allclose(t.sum(axis=1), 1.0) and (t >= 0).all()
    np.testing.assert_allclose(m1 @ t, m2, atol=1e-9)


def test_theorem_2_5_refuses_with_a_point_outside() -> None:
    m1, m2 = RandomizedResponse(1.0).channel, RandomizedResponse(2.0).channel
    alpha, beta = outside_point(m1, m2) or (math.nan, math.nan)
    # RR(2) has the vertex (a, a), a = 1/(1 + e^2); R(1, 0) needs beta >= e^-1 (1 - alpha) there
    assert alpha == pytest.approx(1 / (1 + math.e**2)) and beta == pytest.approx(alpha)
    assert not dp_region(1.0, 0.0).contains(alpha, beta)
    assert PrivacyRegion.from_channel(*m2).contains(alpha, beta)
    with pytest.raises(ParameterError, match=r"0\.119203"):
        post_processing_channel(m1, m2)
    # every (eps, delta)-DP binary mechanism is a post-processing of the four-output response (000 §5.1)
    t = post_processing_channel(RandomizedResponse(1.0, 0.1).channel, RandomizedResponse(1.0).channel)
    np.testing.assert_allclose(RandomizedResponse(1.0, 0.1).channel @ t, RandomizedResponse(1.0).channel, atol=1e-9)
