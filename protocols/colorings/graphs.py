"""Colored graphs: datasets as vertices, neighbours as edges, the true binary function as a coloring.

001 §III: a colored graph (D, ~, f) has a vertex per dataset, an edge per pair of neighbouring datasets
and a coloring f: D -> {blue, red} = {1, 2} (the true value of the query). The blue set B = f^-1(blue),
the red set R; the boundary of B, dB, is the set of blue vertices with a red neighbour, its interior
B° = B minus dB (and the same for R). A mechanism is a randomized coloring, stored as the float64
array ``R[v] = P(output red | dataset v)``.

Vertices are numbered 0..n-1 internally; ``vertex_names`` gives their names (strings). Generators:
:meth:`ColoredGraph.from_edges` (named vertices), :meth:`ColoredGraph.from_networkx` (networkx is
imported lazily and never required), :func:`line_graph` (the (n_B, n_R)-line of 001 (Figs. 1(c), 2, 3)) and
:func:`majority_hypercube` (the 2^k voting outcomes with the majority coloring, 001 Fig. 1(a)).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError, SizeLimitError

__all__ = ["HYPERCUBE_MAX_VOTERS", "ColoredGraph", "check_line_shape", "line_graph", "majority_hypercube"]

#: Largest number of voters whose full hypercube (2^k vertices) is built.
HYPERCUBE_MAX_VOTERS = 20

_COLORS = {"B": False, "R": True}


_Scalar = TypeVar("_Scalar", bound=np.generic)


def _frozen(array: NDArray[_Scalar]) -> NDArray[_Scalar]:
    array.setflags(write=False)
    return array


@dataclass(frozen=True, slots=True, eq=False)
class ColoredGraph:
    """An undirected graph with a binary coloring (001 §III, colored graph).

    Args:
        edges: int64 array of shape (m, 2), vertex indices in 0..n-1; no self-loops (parallel edges
            are harmless).
        red: bool array of shape (n,): True where f(v) = red (value 2), False for blue (value 1).
        names: optional tuple of n vertex names (default: "0".."n-1", built on demand).

    Raises:
        ParameterError: a self-loop, an index outside 0..n-1, or a names tuple of the wrong length.
    """

    edges: NDArray[np.int64] = field(repr=False)
    red: NDArray[np.bool_] = field(repr=False)
    names: tuple[str, ...] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        red = np.asarray(self.red, dtype=bool).reshape(-1)
        edges = np.asarray(self.edges, dtype=np.int64).reshape(-1, 2)
        n = red.size
        if edges.size and (edges.min() < 0 or edges.max() >= n):
            bad = edges[(edges < 0) | (edges >= n)][0]
            raise ParameterError("edge vertex", int(bad), f"a vertex index in 0..{n - 1}")
        loops = edges[:, 0] == edges[:, 1]
        if loops.any():
            v = int(edges[loops][0, 0])
            name = self.names[v] if self.names is not None else str(v)
            raise ParameterError("edge", (name, name), "an edge between two different vertices "
                                 "(a self-loop is not a neighbour relation)")
        if self.names is not None and len(self.names) != n:
            raise ParameterError("names", len(self.names), f"one name per vertex ({n})")
        object.__setattr__(self, "red", _frozen(red.copy()))
        object.__setattr__(self, "edges", _frozen(edges.copy()))

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_edges(
        cls,
        vertices: Iterable[Hashable],
        edges: Iterable[tuple[Hashable, Hashable]],
        coloring: Mapping[Any, str],
    ) -> ColoredGraph:
        """Build from named vertices, an edge list and a coloring vertex -> ``"B"`` or ``"R"``.

        Names (also the coloring's keys, of any hashable type) are converted with ``str``. This is the format of the ``mpdp mechanism`` graph file.

        Raises:
            ParameterError: a duplicate or unknown vertex, a self-loop, a color other than B/R, or a
                vertex without a color.
        """
        names = tuple(str(v) for v in vertices)
        index = {name: i for i, name in enumerate(names)}
        if len(index) != len(names):
            dup = next(n for n in names if names.count(n) > 1)
            raise ParameterError("vertex", dup, "distinct vertex names")
        pairs = []
        for given in edges:
            edge = tuple(given)
            if len(edge) != 2:
                raise ParameterError("edge", edge, "a pair of vertices")
            for v in edge:
                if str(v) not in index:
                    raise ParameterError("edge vertex", v, "a vertex listed in 'vertices'")
            pairs.append((index[str(edge[0])], index[str(edge[1])]))
        colors = {str(v): c for v, c in coloring.items()}
        unknown = set(colors) - set(index)
        if unknown:
            raise ParameterError("coloring vertex", sorted(unknown)[0], "a vertex listed in 'vertices'")
        red = np.zeros(len(names), dtype=bool)
        for name, i in index.items():
            if name not in colors:
                raise ParameterError("coloring", name, "a color for every vertex ('B' or 'R')")
            color = colors[name]
            if not isinstance(color, str) or color.upper() not in _COLORS:
                raise ParameterError(f"color of {name}", color, "'B' (blue, value 1) or 'R' (red, "
                                     "value 2): a binary function has two colors")
            red[i] = _COLORS[color.upper()]
        return cls(np.array(pairs, dtype=np.int64).reshape(-1, 2), red, names)

    @classmethod
    def from_networkx(cls, graph: Any, coloring: Mapping[Any, str] | str = "color") -> ColoredGraph:
        """Build from a networkx graph (networkx itself is not imported here).

        Args:
            graph: any object with ``nodes`` and ``edges`` like ``networkx.Graph``.
            coloring: a mapping node -> ``"B"``/``"R"``, or the name of a node attribute holding it.
        """
        nodes = list(graph.nodes)
        if isinstance(coloring, str):
            attr = coloring
            coloring = {v: graph.nodes[v].get(attr) for v in nodes}
        return cls.from_edges(nodes, graph.edges, coloring)

    # -- the topology of 001 §III (blue set, interior, boundary) -------------------------------------------------------
    @property
    def num_vertices(self) -> int:
        """n, the number of vertices (datasets)."""
        return int(self.red.size)

    @property
    def vertex_names(self) -> tuple[str, ...]:
        """The names of the vertices, in index order."""
        return self.names if self.names is not None else tuple(map(str, range(self.num_vertices)))

    def indices_of(self, names: Iterable[Hashable]) -> NDArray[np.int64]:
        """int64 array of the indices of the vertices called ``str(name)``.

        Raises:
            ParameterError: a name that is not a vertex of the graph.
        """
        index = {name: i for i, name in enumerate(self.vertex_names)}
        out = []
        for name in names:
            if str(name) not in index:
                raise ParameterError("vertex", name, "a vertex of the graph")
            out.append(index[str(name)])
        return np.array(out, dtype=np.int64)

    @property
    def cross_edges(self) -> NDArray[np.bool_]:
        """bool array of shape (m,): edges joining a blue and a red vertex."""
        return np.not_equal(self.red[self.edges[:, 0]], self.red[self.edges[:, 1]])

    @property
    def boundary(self) -> NDArray[np.bool_]:
        """bool array of shape (n,): vertices with a neighbour of the other color (dB union dR)."""
        out = np.zeros(self.num_vertices, dtype=bool)
        out[self.edges[self.cross_edges].reshape(-1)] = True
        return out

    @property
    def blue_boundary(self) -> NDArray[np.bool_]:
        """bool array (n,): dB, blue vertices with a red neighbour."""
        return self.boundary & ~self.red

    @property
    def red_boundary(self) -> NDArray[np.bool_]:
        """bool array (n,): dR, red vertices with a blue neighbour."""
        return self.boundary & self.red

    @property
    def blue_interior(self) -> NDArray[np.bool_]:
        """bool array (n,): B°, blue vertices without a red neighbour."""
        return ~self.red & ~self.boundary

    @property
    def red_interior(self) -> NDArray[np.bool_]:
        """bool array (n,): R°, red vertices without a blue neighbour."""
        return self.red & ~self.boundary

    def names_of(self, mask: NDArray[np.bool_]) -> list[str]:
        """The names of the vertices selected by a bool mask of shape (n,)."""
        names = self.vertex_names
        return [names[i] for i in np.flatnonzero(mask)]


def check_line_shape(n_blue: int, n_red: int) -> None:
    """Check the shape of an (n_B, n_R)-line without building it (O(1)).

    Raises:
        ParameterError: n_B < 1 or n_R < 1, or either not an integer.
    """
    for name, value in (("n_B", n_blue), ("n_R", n_red)):
        if not isinstance(value, (int, np.integer)) or value < 1:
            raise ParameterError(name, value, "an integer >= 1")


def line_graph(n_blue: int, n_red: int) -> ColoredGraph:
    """The (n_B, n_R)-line of 001 (Figs. 1(c), 2 and 3).

    Nodes "1".."n_B+n_R" (index j-1 for node j), path edges j ~ j+1; nodes 1..n_B blue (node n_B is dB),
    n_B+1..n_B+n_R red (node n_B+1 is dR).

    Raises:
        ParameterError: n_B < 1 or n_R < 1.
    """
    check_line_shape(n_blue, n_red)
    n = int(n_blue) + int(n_red)
    edges = np.stack([np.arange(n - 1), np.arange(1, n)], axis=1)
    names = tuple(str(j) for j in range(1, n + 1))
    return ColoredGraph(edges, np.arange(n) >= n_blue, names)


def majority_hypercube(voters: int) -> ColoredGraph:
    """The hypercube {0,1}^k of voting outcomes with the majority coloring (001 Fig. 1(a)).

    Vertex index = sum_i x_i 2^(k-1-i) (voter 0 is the most significant bit); its name is the string of
    votes, "1" for YES and "0" for NO. Blue iff strictly more than k/2 voters say YES (majority = 1);
    neighbours differ in exactly one vote.

    Raises:
        ParameterError: k < 1. SizeLimitError: k > HYPERCUBE_MAX_VOTERS (use the line, Theorem 3).
    """
    if not isinstance(voters, (int, np.integer)) or voters < 1:
        raise ParameterError("voters", voters, "an integer >= 1")
    if voters > HYPERCUBE_MAX_VOTERS:
        raise SizeLimitError("voters", voters, HYPERCUBE_MAX_VOTERS,
                             "the hypercube has 2^k vertices; use the majority line (Theorem 3)")
    k = int(voters)
    x = np.arange(1 << k, dtype=np.int64)
    ones = np.zeros_like(x)
    for i in range(k):
        ones += (x >> i) & 1
    pairs = []
    for i in range(k):
        low = x[((x >> i) & 1) == 0]
        pairs.append(np.stack([low, low | (1 << i)], axis=1))
    names = tuple(format(v, f"0{k}b") for v in range(1 << k))
    return ColoredGraph(np.concatenate(pairs), 2 * ones <= k, names)
