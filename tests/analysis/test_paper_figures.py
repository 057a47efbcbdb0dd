"""The papers' figures: the plotted data, read back from each figure, against independent computations
(closed forms, the papers' worked numbers, brute-force Neyman-Pearson regions)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from matplotlib.axes import Axes

from mpdp.analysis.figures import composition_plot, graph_figures
from mpdp.analysis.figures.paper_figures import PAPER_FIGURES, figure_xor
from mpdp.analysis.privacy.privacy_region import PrivacyRegion
from mpdp.analysis.theory.debiased import figure_debiased
from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from mpdp.protocols.colorings.morphisms import boundary_morphism
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


def _line(ax: Axes, gid: str) -> np.ndarray:
    (line,) = [ln for ln in ax.lines if ln.get_gid() == gid]
    return np.asarray(line.get_xydata(), dtype=float)


def _vertex_values(ax: Axes, graph: ColoredGraph) -> dict[str, float]:
    """P(output red) per vertex name, from the node collections (nodelists in index order)."""
    out: dict[str, float] = {}
    for gid, mask in (("vertices-interior", ~graph.boundary), ("vertices-boundary", graph.boundary)):
        (coll,) = [c for c in ax.collections if c.get_gid() == gid]
        for v, value in zip(np.flatnonzero(mask), coll.get_array(), strict=True):
            out[graph.vertex_names[v]] = float(value)
    return out


def test_000_figure_1_is_the_closed_form_region() -> None:
    eps, delta = 1.0, 0.1
    ax = composition_plot.figure_1(eps, delta).axes[0]
    xy = _line(ax, f"R({eps:g}, {delta:g}):lower")
    a = xy[:, 0]
    expected = np.maximum.reduce([np.zeros_like(a), 1 - delta - math.e * a, (1 - delta - a) / math.e])
    np.testing.assert_allclose(xy[:, 1], expected, atol=1e-12)
    corners = _line(ax, "corners")
    np.testing.assert_allclose(corners, [[0, 0.9], [0.9 / (1 + math.e)] * 2, [0.9, 0]], atol=1e-15)


def _product_region(eps: float, delta: float, k: int) -> PrivacyRegion:
    """Neyman-Pearson region of k independent four-output randomized responses, by enumeration."""
    m = RandomizedResponse(eps, delta).channel
    p0 = np.array([np.prod([m[0, s] for s in t]) for t in itertools.product(range(4), repeat=k)])
    p1 = np.array([np.prod([m[1, s] for s in t]) for t in itertools.product(range(4), repeat=k)])
    return PrivacyRegion.from_channel(p0, p1)


def test_000_figure_2_regions_are_those_of_the_k_fold_randomized_response() -> None:
    ax = composition_plot.figure_2(0.4, 0.01, 4).axes[0]
    for k in range(1, 5):
        xy = _line(ax, f"k = {k}:lower")
        np.testing.assert_allclose(xy[:, 1], _product_region(0.4, 0.01, k).lower_boundary(xy[:, 0]), atol=1e-12)


def test_000_figure_3_basic_composition() -> None:
    ax = composition_plot.figure_3(0.1, 0.001, 30).axes[0]
    xy = _line(ax, "Theorem 3.1 (basic):lower")
    e, d = math.exp(3.0), 0.03
    expected = np.maximum.reduce([np.zeros(len(xy)), 1 - d - e * xy[:, 0], (1 - d - xy[:, 0]) / e])
    np.testing.assert_allclose(xy[:, 1], expected, atol=1e-12)
    exact, drv = _line(ax, "Theorem 3.3 (optimal):lower"), _line(ax, "Theorem 3.2 (DRV10):lower")
    assert np.all(exact[:, 1] >= drv[:, 1] - 1e-12) and np.all(drv[:, 1] >= xy[:, 1] - 1e-12)  # nested


def test_001_figure_1_balanced_majority_is_the_papers_example() -> None:
    left, middle, right = graph_figures.figure_1_majority().axes[:3]
    values = _vertex_values(left, majority_hypercube(3))
    for name, r in values.items():  # 001: R_111 = 0.1, R_211 = 0.3, R_122 = 0.7, R_222 = 0.9 (1 = YES)
        assert r == pytest.approx({3: 0.1, 2: 0.3, 1: 0.7, 0: 0.9}[name.count("1")], abs=1e-12)
    assert _vertex_values(right, line_graph(2, 2)) == pytest.approx({"1": 0.1, "2": 0.3, "3": 0.7, "4": 0.9})
    # (b): another colored graph with the (2, 2)-line as boundary graph; the balanced mechanism depends only
    # on the distance to the boundary (001 Theorem 6), so it takes the same four values
    cycle = graph_figures.eight_cycle()
    line = boundary_morphism(cycle).codomain
    assert (int((~line.red).sum()), int(line.red.sum())) == (2, 2)
    assert _vertex_values(middle, cycle) == pytest.approx({"b1": 0.3, "b4": 0.3, "b2": 0.1, "b3": 0.1,
                                                           "r1": 0.7, "r4": 0.7, "r2": 0.9, "r3": 0.9}, abs=1e-12)


def test_001_figure_2_pullback_is_the_papers_one_thirteenth_example() -> None:
    left, right = graph_figures.figure_2_pullback().axes[:2]
    values = _vertex_values(left, graph_figures.fig2_graph())
    paper = {"a": 0, "b": 0, "c": 0, "g": 0, "k": 0, "h": 1 / 13, "l": 1 / 13, "i": 0.2, "n": 0.2, "q": 0.2,
             "d": 0.36, "o": 0.36, "m": 0.36, "j": 0.568, "p": 0.568, "r": 0.568}
    # the paper prints 0.7447 for R_e = R_f; the second branch of the step, 1 - (1 - R_j - delta) / e^eps,
    # gives 1 - 0.332 / 1.3 = 0.744615... (a rounding misprint, also in ../shared/vectors/README.md)
    paper["e"] = paper["f"] = 1 - (1 - 0.568 - 0.1) / 1.3
    assert values == pytest.approx(paper, abs=1e-12)
    line = _vertex_values(right, line_graph(3, 4))
    assert [line[str(j)] for j in range(1, 8)] == pytest.approx([0, 0, 1 / 13, 0.2, 0.36, 0.568, 0.7446153846], abs=1e-9)
    texts = {t.get_text() for t in left.texts}
    assert "q\n0.2\n-> 4" in texts and "h\n0.07692\n-> 3" in texts  # the morphism onto the line


def test_001_theorem_2_example_and_the_infeasible_one() -> None:
    values = _vertex_values(graph_figures.figure_theorem_2().axes[0], graph_figures.fig2_graph())
    expected = {"a": 0.0, "b": 0.0, "c": 0.15, "d": 0.925, "e": 1.0, "f": 1.0, "g": 0.1, "h": 0.4, "i": 0.75,
                "j": 1.0, "k": 0.1, "l": 0.3, "m": 0.9, "n": 0.75, "o": 0.925, "p": 1.0, "q": 0.7, "r": 1.0}
    assert values == pytest.approx(expected, abs=1e-12)  # the shared vector graph-fig2-thm2
    # labelled in the paper's notation: B at a blue vertex, R at a red one (001: B_h = 0.6, B_l = 0.7,
    # B_a = B_b = 1, B_g = B_k = 0.9, B_c = 0.85, R_q = 0.7, R_i = R_n = 0.75, R_m = 0.9, R_d = R_o = 0.925)
    labels = {t.get_text() for t in graph_figures.figure_theorem_2().axes[0].texts}
    paper = {"h": "B=0.6", "l": "B=0.7", "a": "B=1", "b": "B=1", "g": "B=0.9", "k": "B=0.9", "c": "B=0.85",
             "q": "R=0.7", "i": "R=0.75", "n": "R=0.75", "m": "R=0.9", "d": "R=0.925", "o": "R=0.925",
             "e": "R=1", "f": "R=1", "j": "R=1", "p": "R=1", "r": "R=1"}
    assert labels == {f"{v}\n{text}" for v, text in paper.items()}
    ax = graph_figures.figure_infeasible().axes[0]
    (edge,) = [c for c in ax.collections if c.get_gid() == "violated-edge"]
    (segment,) = edge.get_segments()
    assert "infeasible" in ax.get_title() and "h-q" in ax.get_title() and "$B_h$ = 0.6" in ax.get_title()
    # the highlighted segment joins the drawn positions of h and q
    positions = {t.get_text().split("\n")[0]: np.array(t.get_position()) for t in ax.texts}
    assert {tuple(np.round(p, 9)) for p in segment} == {tuple(np.round(positions[v], 9)) for v in "hq"}


def test_001_figure_3_line_is_the_papers_four_three_example() -> None:
    graph, ax = graph_figures.figure_3_line().axes[:2]
    paper = [0.255384615385, 0.432, 0.64, 0.8, 0.923076923077, 1.0, 1.0]
    np.testing.assert_allclose(_line(ax, "line")[:, 1], paper, atol=1e-11)
    assert "$\\tau$ = 1" in " ".join(t.get_text() for t in ax.get_legend().get_texts())
    # the paper draws the line itself: nodes 1..7, blue 1..4, its values on the vertices
    assert _vertex_values(graph, line_graph(4, 3)) == pytest.approx(dict(zip("1234567", paper, strict=True)), abs=1e-11)


def test_002_xor_against_k() -> None:
    ax = figure_xor((0.5, 1.0), k_max=6).axes[0]
    for eps in (0.5, 1.0):
        xy = _line(ax, f"xor:{eps:g}")
        np.testing.assert_allclose(xy[:, 1], 0.5 + 0.5 * np.tanh(eps / 2) ** xy[:, 0], atol=1e-14)
        assert _line(ax, f"collaborative:{eps:g}")[:, 1] == pytest.approx(math.exp(eps) / (1 + math.exp(eps)))


def test_every_figure_has_its_parameters_in_the_title() -> None:
    for name, build in PAPER_FIGURES.items():
        figure = build()
        titles = [ax.get_title() for ax in figure.axes] + [figure._suptitle.get_text() if figure._suptitle else ""]
        assert any(any(ch.isdigit() for ch in t) for t in titles), name


def _sum_errors_by_enumeration(k: int, eps: float) -> tuple[float, float]:
    """E|debiased - count| and the optimal rule's E|decision - count| (the posterior median of the count
    given the transcript minimizes it), x uniform, by enumerating every (x, transcript)."""
    p = math.exp(eps) / (1 + math.exp(eps))
    g = np.array([-(1 - p), p]) / (2 * p - 1)
    debiased, by_transcript = 0.0, []
    for tau in itertools.product([0, 1], repeat=k):
        joint = np.zeros(k + 1)  # P(x has s ones, tau)
        for x in itertools.product([0, 1], repeat=k):
            prob = math.prod(p if xi == t else 1 - p for xi, t in zip(x, tau)) / 2**k
            joint[sum(x)] += prob
            debiased += prob * abs(g[list(tau)].sum() - sum(x))
        by_transcript.append(min(float(joint @ np.abs(d - np.arange(k + 1))) for d in range(k + 1)))
    return debiased, sum(by_transcript)


def test_002_sum_debiased_against_enumeration() -> None:
    eps = (0.3, 1.0, 2.5)
    ax = PAPER_FIGURES["002-sum-debiased"]().axes[0]
    assert "k = 10" in ax.get_title()
    optimal, debiased = _line(ax, "optimal"), _line(ax, "debiased")
    assert np.all(optimal[:, 1] < debiased[:, 1])  # the optimal rule beats the unbiased count at k = 10
    ax = figure_debiased(4, eps).axes[0]
    for i, e in enumerate(eps):
        brute_debiased, brute_optimal = _sum_errors_by_enumeration(4, e)
        assert _line(ax, "debiased")[i] == pytest.approx([e, brute_debiased], rel=1e-12)
        assert _line(ax, "optimal")[i] == pytest.approx([e, brute_optimal], rel=1e-9)
        # the clipped estimator is one rule with outputs in 0..k: never better than the optimal one
        assert _line(ax, "optimal")[i, 1] <= _line(ax, "debiased-clipped")[i, 1] + 1e-12
