"""Morphisms of colored graphs, the pullback of a mechanism, the boundary morphism and boundary graph.

001 §III: g: D1 -> D2 is a morphism if d ~ d' implies g(d) ~ g(d') or g(d) = g(d') (weaker than a
graph homomorphism). The pullback g*M = M o g of an (epsilon, delta)-DP mechanism
M on D2 is (epsilon, delta)-DP on D1. g is color preserving if f1 = f2 o g.

The boundary graph (001 §IV) of a colored graph is the (n_B, n_R)-line with n_B - 1 the largest
distance of a blue vertex to dB and n_R - 1 the largest distance of a red vertex to dR; the boundary
morphism g_d sends a blue vertex at distance i from dB to node n_B - i and a red vertex at distance j
from dR to node n_B + 1 + j (Fig. 2). Distances are hop counts through vertices of the same color (a
shortest path to the boundary never leaves its color).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse import csgraph

from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph
from mpdp.protocols.errors import ParameterError

__all__ = ["Morphism", "boundary_distances", "boundary_graph", "boundary_morphism"]


@dataclass(frozen=True, slots=True, eq=False)
class Morphism:
    """A morphism g: domain -> codomain of graphs (001 §III).

    Args:
        domain, codomain: colored graphs.
        mapping: int64 array (domain.num_vertices,), ``mapping[v]`` = index of g(v) in the codomain.

    Raises:
        ParameterError: a wrong shape, an index outside the codomain, or an edge d ~ d' whose images
            are neither equal nor adjacent (named).
    """

    domain: ColoredGraph = field(repr=False)
    codomain: ColoredGraph = field(repr=False)
    mapping: NDArray[np.int64] = field(repr=False)

    def __post_init__(self) -> None:
        g = np.asarray(self.mapping, dtype=np.int64)
        if g.shape != (self.domain.num_vertices,):
            raise ParameterError("mapping", g.shape, f"shape ({self.domain.num_vertices},)")
        m = self.codomain.num_vertices
        if g.size and (g.min() < 0 or g.max() >= m):
            raise ParameterError("mapping", int(g.max()), f"codomain vertex indices 0..{m - 1}")
        a, b = g[self.domain.edges[:, 0]], g[self.domain.edges[:, 1]]
        ce = np.sort(self.codomain.edges, axis=1)
        keys = ce[:, 0] * m + ce[:, 1]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        broken = (a != b) & ~np.isin(lo * m + hi, keys)
        if broken.any():
            d = self.domain.edges[broken][0]
            names = self.domain.vertex_names
            raise ParameterError("mapping", f"edge {names[d[0]]}-{names[d[1]]}",
                                 "images of neighbours that are equal or neighbours (a morphism)")
        g.setflags(write=False)
        object.__setattr__(self, "mapping", g)

    @property
    def color_preserving(self) -> bool:
        """True iff f_domain = f_codomain o g."""
        return bool(np.array_equal(self.domain.red, self.codomain.red[self.mapping]))

    def pullback(self, red_probability: NDArray[np.float64]) -> NDArray[np.float64]:
        """g*M: the mechanism ``R[g(v)]`` on the domain; float64 array (domain.num_vertices,).

        Args:
            red_probability: float64 array (codomain.num_vertices,), P(output red) on the codomain.
        """
        r = np.asarray(red_probability, dtype=np.float64)
        if r.shape != (self.codomain.num_vertices,):
            raise ParameterError("red_probability", r.shape, f"shape ({self.codomain.num_vertices},)")
        pulled: NDArray[np.float64] = r[self.mapping]
        return pulled


def boundary_distances(graph: ColoredGraph) -> NDArray[np.int64]:
    """Hop distance of each vertex to the boundary of its own color (0 on dB and dR).

    Returns:
        int64 array (n,); -1 for a vertex with no path to the boundary (a connected component of one
        color: no DP constraint ties it to the other color).
    """
    n = graph.num_vertices
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    same = ~graph.cross_edges
    hub = n  # super-source joined to every boundary vertex
    bnd = np.flatnonzero(graph.boundary)
    rows = np.concatenate([u[same], np.full(bnd.size, hub)])
    cols = np.concatenate([v[same], bnd])
    adjacency = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(n + 1, n + 1))
    dist = csgraph.dijkstra(adjacency, directed=False, indices=hub, unweighted=True)[:n] - 1.0  # type: ignore[call-overload]  # scipy documents indices as array_like or int; scipy-stubs takes no int
    return np.where(np.isfinite(dist), dist, -1.0).astype(np.int64)


def _line_shape(graph: ColoredGraph, dist: NDArray[np.int64]) -> tuple[int, int]:
    if not graph.boundary.any():
        raise ParameterError("graph", "no blue-red edge", "a colored graph with a boundary "
                             "(at least one edge between a blue and a red vertex)")
    n_blue = int(dist[~graph.red].max()) + 1
    n_red = int(dist[graph.red].max()) + 1
    return n_blue, n_red


def boundary_graph(graph: ColoredGraph) -> ColoredGraph:
    """The (n_B, n_R)-line that is the boundary graph of ``graph`` (001 §IV, Fig. 2)."""
    return line_graph(*_line_shape(graph, boundary_distances(graph)))


def boundary_morphism(graph: ColoredGraph) -> Morphism:
    """The color-preserving boundary morphism g_d: graph -> its boundary graph (001 §IV, Fig. 2).

    Raises:
        ParameterError: no boundary, or a vertex with no path to the boundary (a one-colored
            component; it needs no mechanism: it can output its color with probability 1).
    """
    dist = boundary_distances(graph)
    n_blue, n_red = _line_shape(graph, dist)
    if (dist < 0).any():
        name = graph.vertex_names[int(np.flatnonzero(dist < 0)[0])]
        raise ParameterError("graph", f"vertex {name} not joined to the boundary",
                             "every vertex joined to the boundary by vertices of its color")
    node = np.where(graph.red, n_blue + dist, n_blue - 1 - dist)
    return Morphism(graph, line_graph(n_blue, n_red), node)
