"""The figures of 001, redrawn from computation: colored graphs with each vertex's optimal probability.

A vertex is drawn with a networkx layout, filled by P(output red) on a colour scale (blue 0 .. red 1, the
colour bar beside the graph), its rim in its true color; boundary vertices (an end of a blue-red edge) are
squares, blue-red edges dashed, and an edge that no mechanism can satisfy (001 Theorem 2, infeasible
boundary values) thick and orange. A legend below the graph names every mark (:func:`graph_key`). Vertex
labels use the paper's notation: ``R`` = P(output red) everywhere, or, for 001's Theorem 2 example,
``B`` = P(output blue) at a blue vertex and ``R`` at a red one. Every artist that carries data has a gid
(``vertices-interior``/``vertices-boundary``, ``violated-edge``, ``line``) so that the plotted values can be
read back (``collection.get_array()`` holds P(output red) in vertex order).

The Fig. 2 graph of 001 is given by its drawing in the paper; :data:`FIG2_EDGES` is our reconstruction
from the paper's worked numbers (the same as in the shared reference vectors, graph-fig2-thm2).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import networkx as nx
import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.plot_style import eps_delta, new_axes, new_figure
from mpdp.protocols.colorings.coloring_mechanisms import GraphMechanism, optimal_mechanism
from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from mpdp.protocols.colorings.line_mechanisms import balanced_mechanism, line_mechanism
from mpdp.protocols.colorings.morphisms import boundary_morphism

if TYPE_CHECKING:
    from matplotlib.artist import Artist
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "FIG2_COLORING",
    "FIG2_EDGES",
    "draw_colored_graph",
    "eight_cycle",
    "fig2_graph",
    "graph_key",
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


#: The colour scale of P(output red) (0: always blue, 1: always red).
CMAP = "coolwarm"


def _key_handles(violated: bool, filled: bool) -> list[Artist]:
    from matplotlib.lines import Line2D

    def node(marker: str, rim: str, label: str) -> Line2D:
        return Line2D([], [], ls="none", marker=marker, ms=11, mfc="white", mec=rim, mew=2.5, label=label)

    handles: list[Artist] = [
        node("o", "dimgray", "interior vertex"), node("s", "dimgray", "boundary vertex (end of a blue-red edge)"),
        node("o", "tab:blue", "rim: true colour blue ($f = 1$)"), node("o", "tab:red", "rim: true colour red ($f = 2$)"),
        Line2D([], [], color="black", lw=1.2, label="edge between same-colour neighbours"),
        Line2D([], [], color="black", lw=1.2, ls="--", label="blue-red edge (crosses the boundary)")]
    if violated:
        handles.append(Line2D([], [], color="tab:orange", lw=6, label="edge no mechanism can satisfy"))
    if not filled:
        handles.append(Line2D([], [], ls="none", marker="o", ms=11, mfc="tab:red", mec="dimgray", mew=1,
                              fillstyle="left", markerfacecoloralt="tab:blue",
                              label="fill: the true colour (no mechanism exists)"))
    return handles


def graph_key(figure: Figure, axes: list[Axes], violated: bool = False, filled: bool = True) -> None:
    """The key of colored-graph drawings on ``axes`` of ``figure``: the colour bar of P(output red) (when the
    vertices are ``filled`` by it) beside them and a legend of every mark below (gid ``graph-key``;
    the colour bar's axes has the label ``fill: P(output red)``)."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    if filled:
        bar = figure.colorbar(ScalarMappable(Normalize(0.0, 1.0), CMAP), ax=axes, shrink=0.8, pad=0.02)
        bar.set_label("fill: P(output red)")
        bar.set_ticks([0.0, 0.25, 0.5, 0.75, 1.0], labels=["0 (blue)", "0.25", "0.5", "0.75", "1 (red)"])
    legend = figure.legend(handles=_key_handles(violated, filled), loc="outside lower center", ncol=3, fontsize=8,
                           frameon=False)
    legend.set_gid("graph-key")


def draw_colored_graph(graph: ColoredGraph, red_probability: NDArray[np.float64] | None, ax: Axes | None = None,
                       title: str = "", violated: tuple[str, str] | None = None, line: bool = False,
                       notes: dict[int, str] | None = None, layers: NDArray[np.int64] | None = None,
                       notation: str = "R", key: bool = True) -> Figure:
    """Draw a colored graph, its vertices filled by P(output red).

    Args:
        graph: the colored graph. red_probability: float64 (n,), or None (vertices filled by their color).
        ax: where to draw (a new figure if None). title: the axes' title.
        violated: an edge (vertex names) to highlight as the one no mechanism can satisfy.
        line: lay the vertices out on a line (for an (n_B, n_R)-line) instead of Kamada-Kawai.
        notes: extra text under a vertex's label (e.g. its image under a morphism), by vertex index.
        layers: int (n,), a layered layout in these columns (e.g. the number of YES votes) instead.
        notation: ``"R"``: each vertex labelled with P(output red); ``"BR"`` (001 Theorem 2): a blue vertex
            with ``B=`` P(output blue), a red one with ``R=`` P(output red).
        key: add the colour bar and the legend of the marks (:func:`graph_key`); a figure of several
            drawings passes False and adds one key for all.

    Returns:
        the Figure drawn on.

    Raises:
        ValueError: ``notation`` not ``"R"`` or ``"BR"``.
    """
    if notation not in ("R", "BR"):
        raise ValueError(f"notation {notation!r}: 'R' or 'BR'")
    figure, ax = new_axes(ax, (max(6.0, 0.9 * graph.num_vertices), 3.2) if line else (7.0, 6.5))
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
    size = 900 if notation == "BR" else 650
    for shape, mask in (("o", ~graph.boundary), ("s", graph.boundary)):
        nodes = np.flatnonzero(mask).tolist()
        if not nodes:
            continue
        drawn = nx.draw_networkx_nodes(g, pos, nodelist=nodes, node_color=values[nodes].tolist(), cmap=CMAP,
                                       vmin=0.0, vmax=1.0, node_shape=shape, node_size=size, ax=ax,
                                       edgecolors=[rim[i] for i in nodes], linewidths=3)
        drawn.set_gid("vertices-boundary" if shape == "s" else "vertices-interior")
    names = graph.vertex_names

    def label(v: int) -> str:
        if red_probability is None:
            return names[v]
        if notation == "R":
            return f"{names[v]}\n{values[v]:.4g}"
        return f"{names[v]}\nR={values[v]:.4g}" if graph.red[v] else f"{names[v]}\nB={1.0 - values[v]:.4g}"

    labels = {v: label(v) for v in range(len(names))}
    for v, note in (notes or {}).items():
        labels[v] += f"\n{note}"
    dark = np.abs(values - 0.5) > 0.35  # white text on the scale's dark ends
    for colour, mask in (("white", dark), ("black", ~dark)):
        chosen = {v: labels[v] for v in np.flatnonzero(mask).tolist()}
        nx.draw_networkx_labels(g, pos, labels=chosen, font_size=7, font_color=colour, ax=ax)
    ax.set_title(title, fontsize=9)
    ax.set_axis_off()
    ax.margins(0.08)
    if key:
        graph_key(figure, [ax], violated=violated is not None, filled=red_probability is not None)
    return figure


def eight_cycle() -> ColoredGraph:
    """An 8-cycle colored in two arcs of four (blue b1..b4, red r1..r4): a colored graph other than the
    3-voter cube whose boundary graph is also the (2, 2)-line (our example for 001 Fig. 1(b))."""
    names = ["b1", "b2", "b3", "b4", "r4", "r3", "r2", "r1"]
    edges = [(names[i], names[(i + 1) % 8]) for i in range(8)]
    return ColoredGraph.from_edges(names, edges, {v: "B" if v[0] == "b" else "R" for v in names})


def figure_1_majority(epsilon: float = math.log(2.0), delta: float = 0.1) -> Figure:
    """001 Fig. 1: (a) the majority of three voters, (b) another colored graph with the same boundary
    graph, (c) that boundary graph, the (2, 2)-line, each with the optimal balanced mechanism (the
    paper's example at (log 2, 0.1): R_111 = 0.1, R_112 = 0.3, R_122 = 0.7, R_222 = 0.9; vertex names
    here: 1 = YES). The paper's text says of Fig. 1(b) only that its boundary graph is the (2, 2)-line;
    its drawing is not in the text, so (b) is our example: :func:`eight_cycle`."""
    figure = new_figure((15, 6.2))
    left, middle, right = figure.subplots(1, 3, width_ratios=[1.25, 1, 1])
    cube = majority_hypercube(3)
    yes = np.array([name.count("1") for name in cube.vertex_names], dtype=np.int64)
    draw_colored_graph(cube, balanced_mechanism(cube, epsilon, delta).red_probability, ax=left, layers=yes,
                       key=False, title="(a) majority of 3 voters (1 = YES, blue = majority YES)")
    cycle = eight_cycle()
    draw_colored_graph(cycle, balanced_mechanism(cycle, epsilon, delta).red_probability, ax=middle, key=False,
                       title="(b) an 8-cycle in two arcs (our example: the\npaper's 1(b) is not in its text)")
    line = line_graph(2, 2)
    draw_colored_graph(line, balanced_mechanism(line, epsilon, delta).red_probability, ax=right, line=True,
                       key=False, title="(c) their boundary graph: the (2, 2)-line $d_1 \\ldots d_4$")
    graph_key(figure, [left, middle, right])
    figure.suptitle(f"001 Fig. 1: the optimal balanced {eps_delta(epsilon, delta)}-DP mechanism, "
                    "$R$ = P(output red = majority NO) at each dataset")
    return figure


def figure_2_pullback(epsilon: float = math.log(1.3), delta: float = 0.1, red_at_boundary: float = 1 / 13) -> Figure:
    """001 Fig. 2 and Theorem 3: the graph, its boundary graph (the (3, 4)-line) with the boundary morphism,
    and the optimal boundary-homogeneous mechanism pulled back (the paper's R_h = R_l = 1/13 example at
    (log 1.3, 0.1): R_i = 0.2, R_d = 0.36, R_j = 0.568, R_e = 0.7447)."""
    graph = fig2_graph()
    morphism = boundary_morphism(graph)
    line = morphism.codomain
    line_values = line_mechanism(int((~line.red).sum()), int(line.red.sum()), red_at_boundary, epsilon,
                                 delta).red_probability
    pulled = morphism.pullback(line_values)
    figure = new_figure((14, 7))
    left, right = figure.subplots(1, 2, width_ratios=[1.3, 1])
    notes = {v: f"-> {line.vertex_names[int(t)]}" for v, t in enumerate(morphism.mapping)}
    draw_colored_graph(graph, pulled, ax=left, notes=notes, key=False,
                       title="the pullback $g_\\partial^* M$ onto the graph (-> $j$: its image on the line)")
    n_b, n_r = int((~line.red).sum()), int(line.red.sum())
    draw_colored_graph(line, line_values, ax=right, line=True, key=False,
                       title=f"its boundary graph, the ({n_b}, {n_r})-line, $R_{{{n_b}}}$ = {red_at_boundary:.4g}")
    graph_key(figure, [left, right])
    figure.suptitle(f"001 Fig. 2 / Theorem 3: optimal boundary-homogeneous {eps_delta(epsilon, delta)}-DP "
                    f"mechanism, $R_h = R_\\ell$ = 1/13; labels: $R$ = P(output red)")
    return figure


def figure_theorem_2(epsilon: float = math.log(2.0), delta: float = 0.1,
                     blue_at_boundary: tuple[float, float] = (0.6, 0.7), ax: Axes | None = None) -> Figure:
    """001 Theorem 2 on the Fig. 2 graph: the unique maximal mechanism with B_h, B_l = ``blue_at_boundary``
    (P(output blue) at the blue boundary vertices h and l; the paper's example: B_h = 0.6, B_l = 0.7 at
    (log 2, 0.1)), labelled in the paper's notation (B at a blue vertex, R at a red one)."""
    graph = fig2_graph()
    b_h, b_l = blue_at_boundary
    mech = optimal_mechanism(graph, {"h": 1.0 - b_h, "l": 1.0 - b_l}, epsilon, delta)
    return _draw_mechanism(mech, ax, f"001 Theorem 2: $B_h$ = {b_h:g}, $B_\\ell$ = {b_l:g}, "
                                     f"{eps_delta(epsilon, delta)}-DP", blue_at_boundary)


def figure_infeasible(epsilon: float = math.log(1.1), delta: float = 0.0,
                      blue_at_boundary: tuple[float, float] = (0.6, 0.7), ax: Axes | None = None) -> Figure:
    """001's infeasible example: no (log 1.1, 0)-DP mechanism has B_h = 0.6, B_l = 0.7; the edge that
    cannot be satisfied is highlighted."""
    graph = fig2_graph()
    b_h, b_l = blue_at_boundary
    mech = optimal_mechanism(graph, {"h": 1.0 - b_h, "l": 1.0 - b_l}, epsilon, delta)
    return _draw_mechanism(mech, ax, f"001: $B_h$ = {b_h:g}, $B_\\ell$ = {b_l:g} at {eps_delta(epsilon, delta)}"
                                     "-DP: infeasible", blue_at_boundary)


def _draw_mechanism(mech: GraphMechanism, ax: Axes | None, title: str, blue_at_boundary: tuple[float, float]) -> Figure:
    if mech.feasible:
        return draw_colored_graph(mech.graph, mech.red_probability, ax=ax, title=title, notation="BR")
    h, ell = (int(i) for i in mech.graph.indices_of(["h", "l"]))
    notes = {h: f"B={blue_at_boundary[0]:g}", ell: f"B={blue_at_boundary[1]:g}"}
    return draw_colored_graph(mech.graph, None, ax=ax, violated=mech.violated_edge, notes=notes,
                              title=f"{title}; edge {'-'.join(mech.violated_edge or ())} cannot be met")


def figure_3_line(n_blue: int = 4, n_red: int = 3, red_at_boundary: float = 0.8, epsilon: float = math.log(1.3),
                  delta: float = 0.1) -> Figure:
    """001 Fig. 3 / Theorem 4: the (n_B, n_R)-line as the paper draws it, a path of n_B blue and n_R red
    nodes (top), with the optimal mechanism given R_{n_B} (the paper's (4, 3) example: R_4 = 0.8 at
    (log 1.3, 0.1)); below, the same values R_j against the node j (gid ``line``) with the transition
    parameter tau marked."""
    figure = new_figure((8.0, 6.5))
    top, bottom = figure.subplots(2, 1, height_ratios=[1, 1.6])
    mech = line_mechanism(n_blue, n_red, red_at_boundary, epsilon, delta)
    graph = line_graph(n_blue, n_red)
    draw_colored_graph(graph, mech.red_probability, ax=top, line=True, key=False,
                       title=f"the ({n_blue}, {n_red})-line: nodes 1..{n_blue} blue, {n_blue + 1}..{n_blue + n_red} "
                             "red; labels: node, $R_j$")
    nodes = np.arange(1, n_blue + n_red + 1)
    (curve,) = bottom.plot(nodes, mech.red_probability, "k-", lw=1, label="$R_j$ (Theorem 4)")
    curve.set_gid("line")
    for color, mask, name in (("tab:blue", nodes <= n_blue, "blue"), ("tab:red", nodes > n_blue, "red")):
        bottom.scatter(nodes[mask], mech.red_probability[mask], c=color, s=60, zorder=3, label=f"{name} node")
    bottom.axvline(n_blue + 0.5, color="gray", ls="--", lw=1, label=r"boundary ($\partial B$ | $\partial R$)")
    if mech.transition >= 0:
        bottom.axvline(n_blue - mech.transition, color="tab:green", ls=":", lw=1.5,
                       label=f"transition $\\tau$ = {mech.transition} (node {n_blue - mech.transition})")
    bottom.set_xlabel(f"node $j$ (1..$n_B$ blue, $n_B$+1..$n_B+n_R$ red; $n_B$ = {n_blue})")
    bottom.set_ylabel("$R_j$ = P(output red)")
    bottom.set_ylim(-0.02, 1.02)
    bottom.legend(fontsize=8, loc="lower right")
    bottom.grid(alpha=0.3)
    graph_key(figure, [top])
    figure.suptitle(f"001 Fig. 3 / Theorem 4: the ({n_blue}, {n_red})-line, $R_{{{n_blue}}}$ = {red_at_boundary:g}, "
                    f"{eps_delta(epsilon, delta)}-DP")
    return figure
