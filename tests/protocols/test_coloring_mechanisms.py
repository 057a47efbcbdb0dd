"""001 Theorem 2: the unique maximal mechanism given boundary values, against the paper, the vectors
and an independent LP (HiGHS)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.colorings.coloring_mechanisms import optimal_mechanism, privacy_violations
from mpdp.protocols.colorings.graphs import ColoredGraph
from mpdp.protocols.errors import ParameterError
from tests.protocols.fig2 import fig2_graph
from tests.protocols.lp_reference import lp_optimal


def _graph(case: dict) -> ColoredGraph:
    i = case["inputs"]
    return ColoredGraph.from_edges(i["vertices"], i["edges"], i["coloring"])


def test_vectors_given_boundary(graph_vectors) -> None:
    cases = [c for c in graph_vectors if c["kind"] == "graph_optimal_given_boundary"]
    assert len(cases) == 4
    for case in cases:
        i = case["inputs"]
        mech = optimal_mechanism(_graph(case), i["boundary"], i["eps"], i["delta"])
        assert mech.feasible == case["expected"]["feasible"], case["id"]
        if mech.feasible:
            got = mech.probabilities()
            for v, want in case["expected"]["R"].items():
                assert got[v] == pytest.approx(want, abs=1e-9), (case["id"], v)


def test_paper_theorem2_example_values(graph_vectors) -> None:
    # B_h = 0.6, B_l = 0.7, (log 2, 0.1): the values printed in the text of 001 after Theorem 2
    mech = optimal_mechanism(fig2_graph(graph_vectors), {"h": 0.4, "l": 0.3}, math.log(2), 0.1)
    r = mech.probabilities()
    blue = {"a": 1, "b": 1, "g": 0.9, "k": 0.9, "c": 0.85}
    red = {"q": 0.7, "i": 0.75, "n": 0.75, "m": 0.9, "d": 0.925, "o": 0.925,
           **{v: 1.0 for v in "efjpr"}}
    assert {v: 1 - r[v] for v in blue} == pytest.approx(blue, abs=1e-12)
    assert {v: r[v] for v in red} == pytest.approx(red, abs=1e-12)
    # "the (log 2, 0.1)-DP constraints are tightly satisfied": DP, and not DP at a slightly smaller eps
    assert not privacy_violations(mech.graph, mech.red_probability, math.log(2), 0.1).any()
    assert privacy_violations(mech.graph, mech.red_probability, math.log(1.99), 0.1).any()


def test_paper_infeasible_example(graph_vectors) -> None:
    g = fig2_graph(graph_vectors)
    mech = optimal_mechanism(g, {"h": 0.4, "l": 0.3}, math.log(1.1), 0.0)
    assert not mech.feasible and mech.red_probability is None
    assert set(mech.violated_edge) in ({"h", "q"}, {"l", "q"})
    assert lp_optimal(g, {g.indices_of("h")[0]: 0.4, g.indices_of("l")[0]: 0.3}, math.log(1.1), 0.0) is None


def _random_colored_graph(rng: np.random.Generator, n: int) -> ColoredGraph:
    edges = np.array([(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.3])
    edges = edges.reshape(-1, 2)
    parallel = edges[rng.random(len(edges)) < 0.3][:, ::-1]  # repeated edges, either orientation
    return ColoredGraph(np.concatenate([edges, parallel]), rng.random(n) < 0.5)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10**6), eps=st.floats(0.0, 3.0), delta=st.floats(0.0, 0.3),
       fix_red=st.booleans())
def test_propagation_equals_the_lp(seed: int, eps: float, delta: float, fix_red: bool) -> None:
    rng = np.random.default_rng(seed)
    g = _random_colored_graph(rng, 12)
    side = g.red_boundary if fix_red else g.blue_boundary
    idx = np.flatnonzero(side)
    values = rng.random(idx.size)
    mech = optimal_mechanism(g, (idx, values), eps, delta)
    lp = lp_optimal(g, dict(zip(idx.tolist(), values.tolist())), eps, delta)
    assert mech.feasible == (lp is not None)
    if lp is not None:
        np.testing.assert_allclose(mech.red_probability, lp, atol=1e-7)
        assert not privacy_violations(g, mech.red_probability, eps, delta, tolerance=1e-9).any()


def test_every_blue_red_edge_needs_a_fixed_end(graph_vectors) -> None:
    with pytest.raises(ParameterError, match="missing at"):
        optimal_mechanism(fig2_graph(graph_vectors), {"h": 0.4}, 1.0, 0.0)


@pytest.mark.parametrize("boundary, eps, delta", [
    ({"h": 1.2, "l": 0.3}, 1.0, 0.0), ({"h": float("nan"), "l": 0.3}, 1.0, 0.0),
    ({"h": 0.4, "zz": 0.3}, 1.0, 0.0), ({"h": 0.4, "l": 0.3}, -1.0, 0.0),
    ({"h": 0.4, "l": 0.3}, 1.0, 1.0),
])
def test_bad_input_is_refused(graph_vectors, boundary, eps, delta) -> None:
    with pytest.raises(ParameterError):
        optimal_mechanism(fig2_graph(graph_vectors), boundary, eps, delta)


@pytest.mark.parametrize("eps", [0.0, 1000.0, math.inf])
def test_extreme_epsilon(graph_vectors, eps: float) -> None:
    g = fig2_graph(graph_vectors)
    mech = optimal_mechanism(g, {"h": 0.4, "l": 0.3}, eps, 0.0)
    if eps == 0.0:  # perfect privacy: one value everywhere, impossible with 0.4 != 0.3
        assert not mech.feasible
        same = optimal_mechanism(g, {"h": 0.4, "l": 0.4}, eps, 0.0)
        np.testing.assert_allclose(same.red_probability, 0.4)
    else:  # no constraint left but at the fixed values: every free vertex tells the truth
        free = ~np.isin(np.arange(g.num_vertices), g.indices_of("hl"))
        np.testing.assert_array_equal(mech.red_probability[free], g.red[free].astype(float))
