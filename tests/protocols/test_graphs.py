"""Colored graphs, their topology, morphisms, pullback and the boundary morphism (001 §III)."""

import numpy as np
import pytest

from mpdp.protocols.colorings.coloring_mechanisms import privacy_violations
from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from mpdp.protocols.colorings.morphisms import (
    Morphism,
    boundary_distances,
    boundary_graph,
    boundary_morphism,
)
from mpdp.protocols.errors import ParameterError, SizeLimitError
from tests.protocols.fig2 import fig2_graph


def test_fig2_blue_set_interior_and_boundary(graph_vectors) -> None:
    g = fig2_graph(graph_vectors)
    assert set(g.names_of(~g.red)) == set("abcghkl")  # B, as listed in the paper
    assert set(g.names_of(g.blue_interior)) == set("abcgk")
    assert set(g.names_of(g.blue_boundary)) == {"h", "l"}
    assert set(g.names_of(g.red_boundary)) == {"i", "n", "q"}


def test_fig2_boundary_graph_is_the_3_4_line(graph_vectors) -> None:
    g = fig2_graph(graph_vectors)
    assert boundary_graph(g).num_vertices == 7
    morph = boundary_morphism(g)
    node = {v: morph.codomain.vertex_names[j] for v, j in zip(g.vertex_names, morph.mapping)}
    groups = {"1": "ab", "2": "cgk", "3": "hl", "4": "inq", "5": "dmo", "6": "jpr", "7": "ef"}
    assert {v: n for n, vs in groups.items() for v in vs} == node
    assert morph.color_preserving


def test_hypercube_collapses_to_the_majority_line() -> None:
    g = majority_hypercube(5)
    morph = boundary_morphism(g)
    ones = np.array([name.count("1") for name in g.vertex_names])
    np.testing.assert_array_equal(morph.mapping, 5 - ones)  # node k + 1 - c, index k - c
    assert (morph.codomain.red == (np.arange(6) >= 3)).all()


def test_pullback_of_a_dp_mechanism_is_dp() -> None:
    g = majority_hypercube(4)
    morph = boundary_morphism(g)
    rng = np.random.default_rng(5)
    line = np.sort(rng.uniform(0.1, 0.9, morph.codomain.num_vertices))
    # the smallest eps making the sorted line 0-DP: the largest ratio of neighbouring probabilities
    eps = float(np.log(max(np.max(line[1:] / line[:-1]), np.max((1 - line[:-1]) / (1 - line[1:])))))
    assert not privacy_violations(morph.codomain, line, eps, 0.0).any()
    assert not privacy_violations(g, morph.pullback(line), eps, 0.0).any()
    assert privacy_violations(g, morph.pullback(line), 0.99 * eps, 0.0).any()


def test_morphism_rejects_a_map_that_tears_an_edge() -> None:
    g = line_graph(2, 2)
    with pytest.raises(ParameterError, match="morphism"):
        Morphism(g, g, np.array([0, 3, 2, 1]))
    collapse = Morphism(g, line_graph(1, 1), np.array([0, 0, 1, 1]))  # not a homomorphism, a morphism
    assert collapse.color_preserving


def test_networkx_graph_is_accepted() -> None:
    nx = pytest.importorskip("networkx")
    graph = nx.path_graph(4)
    nx.set_node_attributes(graph, {0: "B", 1: "B", 2: "R", 3: "R"}, "color")
    g = ColoredGraph.from_networkx(graph)
    assert g.names_of(g.boundary) == ["1", "2"]


@pytest.mark.parametrize("edges, coloring, match", [
    ([("a", "a")], {"a": "B", "b": "R"}, "self-loop"),
    ([("a", "z")], {"a": "B", "b": "R"}, "edge vertex"),
    ([("a", "b")], {"a": "B", "b": "G"}, "two colors"),
    ([("a", "b")], {"a": "B"}, "a color for every vertex"),
])
def test_bad_graphs_are_refused(edges, coloring, match) -> None:
    with pytest.raises(ParameterError, match=match):
        ColoredGraph.from_edges(["a", "b"], edges, coloring)


def test_sizes_are_checked() -> None:
    with pytest.raises(SizeLimitError):
        majority_hypercube(40)
    with pytest.raises(ParameterError):
        line_graph(0, 3)


def test_one_colored_component_has_no_distance() -> None:
    g = ColoredGraph.from_edges("abcd", [("a", "b"), ("c", "d")], {"a": "B", "b": "R", "c": "R", "d": "R"})
    np.testing.assert_array_equal(boundary_distances(g), [0, 0, -1, -1])
    with pytest.raises(ParameterError, match="not joined"):
        boundary_morphism(g)
