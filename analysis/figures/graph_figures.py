"""The figures of 001, redrawn from computation: colored graphs with each vertex's optimal probability.

A vertex is drawn with a networkx layout, filled by P(output red) (blue 0 .. red 1), its rim in its true
color; boundary vertices (an end of a blue-red edge) are squares, blue-red edges dashed, and an edge that
no mechanism can satisfy (001 Theorem 2, infeasible boundary values) thick and orange. Every artist that
carries data has a gid (``vertices``, ``violated-edge``, ``line``) so that the plotted values can be read
back (``collection.get_array()`` holds the probabilities in vertex order).

The Fig. 2 graph of 001 is given by its drawing in the paper; :data:`FIG2_EDGES` is our reconstruction
from the paper's worked numbers (the same as in the shared reference vectors, graph-fig2-thm2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.plot_style import new_axes
from mpdp.protocols.colorings.coloring_mechanisms import GraphMechanism, optimal_mechanism
from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from mpdp.protocols.colorings.line_mechanisms import balanced_mechanism, line_mechanism
from mpdp.protocols.colorings.morphisms import boundary_morphism

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FIG2_COLORING",
    "FIG2_EDGES",
    "draw_colored_graph",
    "fig2_graph",
    "figure_1_majority",
    "figure_2_pullback",
    "figure_3_line",
    "figure_infeasible",
    "figure_theorem_2",
]

#: 001 Fig. 2 (left): blue a b c g h k l, red d e f i j m n o p q r; boundary h, l (blue) and i, n, q (red).
FIG2_EDGES = (("a", "g"), ("b", "k"), ("c", "h"), ("d", "i"), ("d", "j"), ("e", "j"), ("f", "p"), ("g", "l"),
              ("h", "i"), ("h", "n"), ("h", "q"), ("k", "l"), ("l", "q"), ("m", "q"), ("m", "r"), ("n", "o"),
              ("o", "p"))
FIG2_COLORING = {v: "B" if v in "abcghkl" else "R" for v in "abcdefghijklmnopqr"}


def fig2_graph() -> ColoredGraph:
    """The colored graph of 001 Fig. 2 (left), vertices a..r."""
    return ColoredGraph.from_edges(list(FIG2_COLORING), list(FIG2_EDGES), FIG2_COLORING)


def _layout(graph: ColoredGraph, line: bool, layers: NDArray[np.int64] | None) -> dict[int, NDArray[np.float64]]:
    if line:
        return {v: np.array([float(v), 0.0]) for v in range(graph.num_vertices)}
    g = nx.Graph()
    for v in range(graph.num_vertices):
        g.add_node(v, layer=0 if layers is None else int(layers[v]))
    g.add_edges_from(map(tuple, graph.edges.tolist()))
    pos = nx.kamada_kawai_layout(g) if layers is None else nx.multipartite_layout(g, subset_key="layer")
    return {int(v): np.asarray(p, dtype=np.float64) for v, p in pos.items()}


def draw_colored_graph(graph: ColoredGraph, red_probability: NDArray[np.float64] | None, ax: Axes | None = None,
                       title: str = "", violated: tuple[str, str] | None = None, line: bool = False,
                       notes: dict[int, str] | None = None, layers: NDArray[np.int64] | None = None) -> Figure:
    """Draw a colored graph, its vertices filled by P(output red).

    Args:
        graph: the colored graph. red_probability: float64 (n,), or None (vertices filled by their color).
        ax: where to draw (a new figure if None). title: the axes' title.
        violated: an edge (vertex names) to highlight as the one no mechanism can satisfy.
        line: lay the vertices out on a line (for an (n_B, n_R)-line) instead of Kamada-Kawai.
        notes: extra text under a vertex's label (e.g. its image under a morphism), by vertex index.
        layers: int (n,), a layered layout in these columns (e.g. the number of YES votes) instead.

    Returns:
        the Figure drawn on.
    """
    figure, ax = new_axes(ax, (max(6.0, 0.9 * graph.num_vertices), 2.2) if line else (6.0, 5.0))
    g = nx.Graph()
    g.add_nodes_from(range(graph.num_vertices))
    edges = [tuple(e) for e in graph.edges.tolist()]
    g.add_edges_from(edges)
    pos = _layout(graph, line, layers)
    cross = graph.cross_edges
    nx.draw_networkx_edges(g, pos, edgelist=[e for e, c in zip(edges, cross, strict=True) if not c], ax=ax, width=1.2)
    nx.draw_networkx_edges(g, pos, edgelist=[e for e, c in zip(edges, cross, strict=True) if c], ax=ax, width=1.2,
                           style="dashed")
    if violated is not None:
        u, v = graph.indices_of(violated)
        hit = nx.draw_networkx_edges(g, pos, edgelist=[(int(u), int(v))], ax=ax, width=9, edge_color="tab:orange")
        for artist in hit if isinstance(hit, list) else [hit]:
            artist.set_gid("violated-edge")
    rim = np.where(graph.red, "tab:red", "tab:blue").tolist()
    values = graph.red.astype(np.float64) if red_probability is None else np.asarray(red_probability, dtype=np.float64)
    for shape, mask in (("o", ~graph.boundary), ("s", graph.boundary)):
        nodes = np.flatnonzero(mask).tolist()
        if not nodes:
            continue
        drawn = nx.draw_networkx_nodes(g, pos, nodelist=nodes, node_color=values[nodes].tolist(), cmap="coolwarm",
                                       vmin=0.0, vmax=1.0, node_shape=shape, node_size=650, ax=ax,
                                       edgecolors=[rim[i] for i in nodes], linewidths=3)
        drawn.set_gid("vertices-boundary" if shape == "s" else "vertices-interior")
    names = graph.vertex_names
    labels = {v: names[v] if red_probability is None else f"{names[v]}\n{values[v]:.4g}" for v in range(len(names))}
    for v, note in (notes or {}).items():
        labels[v] += f"\n{note}"
    nx.draw_networkx_labels(g, pos, labels=labels, font_size=7, ax=ax)
    ax.set_title(title, fontsize=9)
    ax.set_axis_off()
    return figure


def figure_1_majority(epsilon: float = math.log(2.0), delta: float = 0.1) -> Figure:
    """001 Fig. 1: the majority of three voters (a) and its (2, 2)-line (c), with the optimal balanced
    mechanism (the paper's example at (log 2, 0.1): R_111 = 0.1, R_112 = 0.3, R_122 = 0.7, R_222 = 0.9;
    vertex names here: 1 = YES)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(12, 5))
    left, right = figure.subplots(1, 2, width_ratios=[1.3, 1])
    cube = majority_hypercube(3)
    yes = np.array([name.count("1") for name in cube.vertex_names], dtype=np.int64)
    draw_colored_graph(cube, balanced_mechanism(cube, epsilon, delta).red_probability, ax=left, layers=yes,
                       title=f"majority of 3 voters, optimal balanced ({epsilon:.4g}, {delta:g})-DP mechanism")
    line = line_graph(2, 2)
    draw_colored_graph(line, balanced_mechanism(line, epsilon, delta).red_probability, ax=right, line=True,
                       title="its boundary graph: the (2, 2)-line")
    figure.suptitle("001 Fig. 1: P(output red = majority NO) at each dataset")
    return figure


def figure_2_pullback(epsilon: float = math.log(1.3), delta: float = 0.1, red_at_boundary: float = 1 / 13) -> Figure:
    """001 Fig. 2 and Theorem 3: the graph, its boundary graph (the (3, 4)-line) with the boundary morphism,
    and the optimal boundary-homogeneous mechanism pulled back (the paper's R_h = R_l = 1/13 example at
    (log 1.3, 0.1): R_i = 0.2, R_d = 0.36, R_j = 0.568, R_e = 0.7447)."""
    from matplotlib.figure import Figure

    graph = fig2_graph()
    morphism = boundary_morphism(graph)
    line = morphism.codomain
    line_values = line_mechanism(int((~line.red).sum()), int(line.red.sum()), red_at_boundary, epsilon,
                                 delta).red_probability
    pulled = morphism.pullback(line_values)
    figure = Figure(figsize=(13, 5.5))
    left, right = figure.subplots(1, 2, width_ratios=[1.2, 1])
    notes = {v: f"-> {line.vertex_names[int(t)]}" for v, t in enumerate(morphism.mapping)}
    draw_colored_graph(graph, pulled, ax=left, notes=notes,
                       title="the pullback g*M onto the graph (-> its image on the line)")
    draw_colored_graph(line, line_values, ax=right, line=True,
                       title=f"the ({int((~line.red).sum())}, {int(line.red.sum())})-line, R at dB = {red_at_boundary:.4g}")
    figure.suptitle(f"001 Fig. 2 / Theorem 3: optimal boundary-homogeneous ({epsilon:.4g}, {delta:g})-DP mechanism")
    return figure


def figure_theorem_2(epsilon: float = math.log(2.0), delta: float = 0.1,
                     boundary: tuple[float, float] = (0.4, 0.3), ax: Axes | None = None) -> Figure:
    """001 Theorem 2 on the Fig. 2 graph: the unique maximal mechanism with R_h, R_l = ``boundary``
    (the paper's example: B_h = 0.6, B_l = 0.7 at (log 2, 0.1))."""
    graph = fig2_graph()
    mech = optimal_mechanism(graph, {"h": boundary[0], "l": boundary[1]}, epsilon, delta)
    return _draw_mechanism(mech, ax, f"001 Theorem 2: R_h = {boundary[0]:g}, R_l = {boundary[1]:g}, "
                                     f"({epsilon:.4g}, {delta:g})-DP")


def figure_infeasible(epsilon: float = math.log(1.1), delta: float = 0.0,
                      boundary: tuple[float, float] = (0.4, 0.3), ax: Axes | None = None) -> Figure:
    """001's infeasible example: no (log 1.1, 0)-DP mechanism has B_h = 0.6, B_l = 0.7; the edge that
    cannot be satisfied is highlighted."""
    graph = fig2_graph()
    mech = optimal_mechanism(graph, {"h": boundary[0], "l": boundary[1]}, epsilon, delta)
    return _draw_mechanism(mech, ax, f"001: R_h = {boundary[0]:g}, R_l = {boundary[1]:g} at ({epsilon:.4g}, "
                                     f"{delta:g})-DP: infeasible")


def _draw_mechanism(mech: GraphMechanism, ax: Axes | None, title: str) -> Figure:
    if mech.feasible:
        return draw_colored_graph(mech.graph, mech.red_probability, ax=ax, title=title)
    return draw_colored_graph(mech.graph, None, ax=ax, violated=mech.violated_edge,
                              title=f"{title}; edge {'-'.join(mech.violated_edge or ())} cannot be met")


def figure_3_line(n_blue: int = 4, n_red: int = 3, red_at_boundary: float = 0.8, epsilon: float = math.log(1.3),
                  delta: float = 0.1, ax: Axes | None = None) -> Figure:
    """001 Fig. 3 / Theorem 4: the optimal mechanism on the (n_B, n_R)-line given R_{n_B}, as P(output
    red) against the node (the paper's (4, 3) example: R_4 = 0.8 at (log 1.3, 0.1)); the transition
    parameter tau is marked. The line has gid ``line``."""
    figure, ax = new_axes(ax, (6.5, 4.0))
    mech = line_mechanism(n_blue, n_red, red_at_boundary, epsilon, delta)
    nodes = np.arange(1, n_blue + n_red + 1)
    (curve,) = ax.plot(nodes, mech.red_probability, "k-", lw=1)
    curve.set_gid("line")
    colors = np.where(nodes > n_blue, "tab:red", "tab:blue")
    ax.scatter(nodes, mech.red_probability, c=colors.tolist(), s=60, zorder=3)
    ax.axvline(n_blue + 0.5, color="gray", ls="--", lw=1, label="boundary (dB | dR)")
    if mech.transition >= 0:
        ax.axvline(n_blue - mech.transition, color="tab:green", ls=":", lw=1.5,
                   label=f"transition tau = {mech.transition} (node {n_blue - mech.transition})")
    ax.set_xlabel("node j (1..n_B blue, n_B+1.. red)")
    ax.set_ylabel("R_j = P(output red)")
    ax.set_ylim(-0.02, 1.02)
    ax.legend(fontsize=8)
    ax.set_title(f"001 Fig. 3 / Theorem 4: ({n_blue}, {n_red})-line, R_{n_blue} = {red_at_boundary:g}, "
                 f"({epsilon:.4g}, {delta:g})-DP", fontsize=9)
    return figure

