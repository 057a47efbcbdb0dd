"""The optimal (epsilon, delta)-DP randomized coloring given its values at the boundary (001 Theorem 2).

A mechanism on a colored graph is ``R[v] = P(output red | v)``; it is (epsilon, delta)-DP iff every edge
d ~ d' satisfies (001 eq. (1)) R_d <= step(R_d') and R_d' <= step(R_d), with ``step`` of
:mod:`mpdp.protocols.colorings.coloring_steps`. Write T_v = P(output f(v) | v) for the probability of the true color.

Theorem 2: fix R on the boundary of one color (say dB). Every edge joining the two colors then has a
fixed end, so each remaining constraint is either a constant bound on a free vertex or
``T_v <= step(T_w)`` between free vertices of the same color, increasing in T_w. The feasible set is a
lattice: either it is empty, or it has a unique maximal element M*, which dominates every other
feasible mechanism at every vertex (001 Definition 2) -- the optimal mechanism for every reasonable
utility. M* is the greatest fixed point::

    T_v = min( c_v , min_{w ~ v, same color, free} step(T_w) ),
    c_v = min(1, min_{fixed f ~ v} step(P_f(color of v))),

that is T_v = min_u step^{d(u, v)}(c_u) over free u of v's color, d the hop distance through free
vertices of that color. With an Abel function h of step (h(step(t)) = h(t) + 1) this is the multi-source
shortest path problem dist(v) = min_u (h(c_u) + d(u, v)), solved by Dijkstra (scipy.sparse.csgraph)
from a super-source; T_v is then re-evaluated exactly as step^d(c_u) from v's source u. It is feasible
iff M* meets the lower bounds 1 - T_v <= step(1 - P_f(color of v)) from every fixed neighbour f, and the
fixed values are DP among themselves; otherwise the report names an edge that cannot be satisfied.

Cost O((n + m) log n); any set of fixed vertices works as long as every blue-red edge has a fixed end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.sparse import csgraph

from mpdp.protocols.colorings.coloring_steps import ColoringStep
from mpdp.protocols.colorings.graphs import ColoredGraph
from mpdp.protocols.errors import ParameterError

__all__ = [
    "FEASIBILITY_TOLERANCE",
    "GraphMechanism",
    "optimal_mechanism",
    "privacy_violations",
]

#: Slack allowed when checking a DP inequality in floating point.
FEASIBILITY_TOLERANCE = 1e-12

#: Fixed values: vertex name (any key, compared as ``str``) -> P(red), or (int indices, float values).
Boundary = Mapping[Any, float] | tuple[NDArray[np.integer[Any]], NDArray[np.floating[Any]]]


@dataclass(frozen=True, slots=True, eq=False)
class GraphMechanism:
    """A randomized coloring, or the statement that none exists.

    Attributes:
        graph: the colored graph.
        epsilon, delta: the privacy level.
        feasible: False when no (epsilon, delta)-DP mechanism has the given boundary values.
        red_probability: float64 array (n,), P(output red | v); None when infeasible.
        violated_edge: when infeasible, the names of an edge whose constraint cannot be met.
    """

    graph: ColoredGraph = field(repr=False)
    epsilon: float
    delta: float
    feasible: bool
    red_probability: NDArray[np.float64] | None = field(default=None, repr=False)
    violated_edge: tuple[str, str] | None = None

    def probabilities(self) -> dict[str, float] | None:
        """vertex name -> P(output red); None when infeasible."""
        if self.red_probability is None:
            return None
        return dict(zip(self.graph.vertex_names, map(float, self.red_probability)))


def privacy_violations(
    graph: ColoredGraph, red_probability: NDArray[np.float64], epsilon: float, delta: float,
    tolerance: float = FEASIBILITY_TOLERANCE,
) -> NDArray[np.bool_]:
    """bool array (m,): the edges on which ``red_probability`` breaks (epsilon, delta)-DP (001 eq. (1))."""
    step = ColoringStep(epsilon, delta)
    r = np.asarray(red_probability, dtype=np.float64)
    u, v = graph.edges[:, 0], graph.edges[:, 1]
    return (r[u] > step(r[v]) + tolerance) | (r[v] > step(r[u]) + tolerance)


def _fixed_values(graph: ColoredGraph, boundary: Boundary) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    raw: list[float] | NDArray[np.float64]
    if isinstance(boundary, Mapping):
        idx = graph.indices_of(boundary.keys())
        raw = list(boundary.values())
        labels = [str(k) for k in boundary]
    else:
        idx = np.asarray(boundary[0], dtype=np.int64)
        raw = np.asarray(boundary[1], dtype=np.float64)
        labels = None
    values = np.asarray(raw, dtype=np.float64) if len(raw) else np.zeros(0)
    bad = ~((values >= 0.0) & (values <= 1.0))  # also NaN
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        name = labels[i] if labels else graph.vertex_names[idx[i]]
        raise ParameterError(f"boundary value at {name}", raw[i], "a probability in [0, 1]")
    if idx.size and (idx.min() < 0 or idx.max() >= graph.num_vertices):
        raise ParameterError("boundary vertex", int(idx.max()), "a vertex index of the graph")
    return idx, values


def _edge_names(graph: ColoredGraph, edge: NDArray[np.int64]) -> tuple[str, str]:
    names = graph.vertex_names
    return names[int(edge[0])], names[int(edge[1])]


def optimal_mechanism(
    graph: ColoredGraph, boundary: Boundary, epsilon: float, delta: float,
) -> GraphMechanism:
    """The unique maximal (epsilon, delta)-DP mechanism with the given values (001 Theorem 2).

    Args:
        graph: the colored graph.
        boundary: fixed P(output red) per vertex: a mapping name -> value, or (indices, values)
            arrays. Every blue-red edge needs a fixed end (fix dB, as in the paper, or dR).
        epsilon: 0 <= epsilon <= inf; delta: 0 <= delta < 1.

    Returns:
        a :class:`GraphMechanism`; ``feasible=False`` (with ``violated_edge``) when no mechanism has
        these boundary values -- an answer, not an error.

    Raises:
        ParameterError: bad epsilon/delta, a value outside [0, 1], an unknown vertex, or a blue-red edge
            with no fixed end (Theorem 2 needs the boundary values).
    """
    step = ColoringStep(epsilon, delta)
    idx, values = _fixed_values(graph, boundary)
    n, red, edges = graph.num_vertices, graph.red, graph.edges
    fixed = np.zeros(n, dtype=bool)
    fixed[idx] = True
    r = np.zeros(n)
    r[idx] = values
    u, v = edges[:, 0], edges[:, 1]
    cross = red[u] != red[v]
    loose = cross & ~fixed[u] & ~fixed[v]
    if loose.any():
        raise ParameterError("boundary", "missing at " + "-".join(_edge_names(graph, edges[loose][0])),
                             "a value at one end of every blue-red edge (e.g. all of dB)",
                             hint="Theorem 2 of 001 characterizes the optimum by its boundary values")
    infeasible = GraphMechanism(graph, step.epsilon, step.delta, False)
    both = fixed[u] & fixed[v]
    bad = both & ((r[u] > step(r[v]) + FEASIBILITY_TOLERANCE) | (r[v] > step(r[u]) + FEASIBILITY_TOLERANCE))
    if bad.any():
        return _infeasible(infeasible, edges[bad][0])
    # constant bounds on a free vertex w from each fixed neighbour f: p = P_f(color of w)
    one = fixed[u] != fixed[v]
    f = np.where(fixed[u], u, v)[one]
    w = np.where(fixed[u], v, u)[one]
    p = np.where(red[w], r[f], 1.0 - r[f])
    cap = np.ones(n)
    np.minimum.at(cap, w, step(p))
    same = ~fixed[u] & ~fixed[v] & ~cross
    truth = _propagate(step, n, edges[same], np.where(fixed, 1.0, cap))
    short = 1.0 - truth[w] > step(1.0 - p) + FEASIBILITY_TOLERANCE
    if short.any():
        k = int(np.flatnonzero(short)[0])
        return _infeasible(infeasible, np.array([f[k], w[k]]))
    result = np.where(fixed, r, np.where(red, truth, 1.0 - truth))
    result.setflags(write=False)
    return GraphMechanism(graph, step.epsilon, step.delta, True, result)


def _infeasible(template: GraphMechanism, edge: NDArray[np.int64]) -> GraphMechanism:
    return GraphMechanism(template.graph, template.epsilon, template.delta, False,
                          violated_edge=_edge_names(template.graph, edge))


def _propagate(
    step: ColoringStep, n: int, edges: NDArray[np.int64], cap: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Greatest T <= cap with T_v <= step(T_w) on ``edges``: T_v = min_u step^d(u,v)(cap_u)."""
    sources = np.flatnonzero(cap < 1.0)
    if sources.size == 0 or edges.size == 0 or np.isinf(step.epsilon):
        return cap.copy()  # eps = inf: step = 1, no propagation
    if step.is_identity:  # step = id: the minimum over each connected component
        adjacency = sp.coo_matrix((np.ones(len(edges)), (edges[:, 0], edges[:, 1])), shape=(n, n))
        _, labels = csgraph.connected_components(adjacency, directed=False)
        low = np.ones(labels.max() + 1)
        np.minimum.at(low, labels, cap)
        return low[labels]
    h = step.abel(cap[sources])
    finite = np.isfinite(h)
    floor = (h[finite].min() if finite.any() else 0.0) - (n + 2)  # orbits stuck at 0 beat all
    h = np.clip(np.where(finite, h, floor), -1e300, 1e300)
    weight = h - h.min() + 1.0
    hub = n
    rows = np.concatenate([edges[:, 0], np.full(sources.size, hub)])
    cols = np.concatenate([edges[:, 1], sources])
    data = np.concatenate([np.ones(len(edges)), weight])
    graph = sp.csr_matrix((data, (rows, cols)), shape=(n + 1, n + 1))
    graph.data[: graph.indptr[hub]] = 1.0  # parallel edges were summed: one hop each
    dist, pred = csgraph.dijkstra(graph, directed=False, indices=hub, return_predecessors=True)  # type: ignore[call-overload]  # scipy documents indices as array_like or int; scipy-stubs takes no int
    dist, pred = dist[:n], pred[:n]
    reached = np.isfinite(dist)
    root = np.where(reached & (pred != hub), pred, np.arange(n))
    while True:  # pointer jumping to the source at the top of each shortest-path tree
        up = root[root]
        if np.array_equal(up, root):
            break
        root = up
    start = np.zeros(n)
    start[sources] = weight
    hops = np.rint(np.where(reached, dist - start[root], 0.0))
    return np.where(reached, step.iterate(cap[root], hops), cap)
