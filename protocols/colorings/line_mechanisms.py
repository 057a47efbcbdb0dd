"""Closed forms: the (n_B, n_R)-line (001 Theorem 4), boundary-homogeneous mechanisms of any colored graph
(Theorems 3 and 5) and balanced mechanisms (001 §IV).

On the (n_B, n_R)-line with R_{n_B} = r fixed, the optimal (epsilon, delta)-DP mechanism of Theorem 2 is,
with a = e^eps, s = delta / (a - 1) and the transition point theta = (1 - delta) / (a + 1):

* blue nodes, i = 0..n_B-1 steps from the boundary (B = 1 - R, the probability of the true color):
  - initial behaviour (i <= tau + 1):  B_{n_B-i} = a^i (1 - r) + delta (a^i - 1)/(a - 1);
  - terminal behaviour (i > tau + 1):  1 - B_{n_B-i} = a^-(i-tau-1) (1 - B_{n_B-tau-1} + s) - s, floored at 0;
  - the transition parameter tau is the last step i with B_{n_B-i} <= theta, i.e. R_{n_B-i} >=
    (a + delta)/(a + 1) (-1 if none, at most n_B - 1): the last node from which the next step is still
    in the initial regime. If r <= 1/2 (blue is the likelier output at dB) then tau = -1: only the
    terminal recurrence acts (001 §IV).
* red nodes, j = 0..n_R-1 steps from dR: R_{n_B+1+j} = step^(j+1)(r), by the same two regimes.

Theorem 3: the optimal boundary-homogeneous mechanism (the same R = r on all of dB) of any colored graph
is the pullback of this line mechanism by the boundary morphism; Theorem 5 is the resulting closed form,
R_v = (line value at distance dist(v, boundary)). A balanced mechanism gives no preference at the
boundary: P(true color) is the same on dB and dR; the optimal one has r = theta = (1 - delta)/(1 + a)
(so the true color has probability (a + delta)/(a + 1) on the boundary) and, d steps inside,
P(wrong color) = max(0, [a^-d (a - 1 + 2 delta)/(a + 1) - delta]/(a - 1)) (001 §IV).
Vertices with no path to the boundary (one-colored components) output their color with probability 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.colorings.coloring_mechanisms import GraphMechanism
from mpdp.protocols.colorings.coloring_steps import ColoringStep
from mpdp.protocols.colorings.graphs import ColoredGraph, check_line_shape, line_graph
from mpdp.protocols.colorings.morphisms import boundary_distances
from mpdp.protocols.errors import ParameterError, SizeLimitError

__all__ = [
    "MAX_LINE_NODES",
    "LineMechanism",
    "balanced_boundary_value",
    "balanced_mechanism",
    "boundary_homogeneous_mechanism",
    "initial_behaviour",
    "line_mechanism",
    "terminal_behaviour",
    "transition_parameter",
]


def _check_probability(name: str, value: float) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "a probability in [0, 1]") from None
    if not 0.0 <= x <= 1.0:
        raise ParameterError(name, value, "a probability in [0, 1]")
    return x


#: Largest n_B + n_R of :func:`line_mechanism` (about 1.5 s and 0.5 GB with the graph at the limit).
MAX_LINE_NODES = 2_000_000


def transition_parameter(red_at_boundary: float, epsilon: float, delta: float,
                         n_blue: int | None = None) -> int:
    """tau of 001 Theorem 4: the last blue step i with R_{n_B-i} >= (a + delta)/(a + 1); -1 if none.

    Capped at n_B - 1 when ``n_blue`` is given (every step of the line in the initial regime);
    otherwise may be a large int (the orbit never leaves the initial regime only if it is stuck at 0:
    then returns -1 + 2^62 as "never")."""
    step = ColoringStep(epsilon, delta)
    r = _check_probability("red_at_boundary", red_at_boundary)
    m = float(step.regime_one_steps(1.0 - r))
    tau = (2**62 if math.isinf(m) else int(m)) - 1
    return tau if n_blue is None else min(tau, int(n_blue) - 1)


def initial_behaviour(
    red_at_boundary: float, steps: NDArray[np.int64], epsilon: float, delta: float
) -> NDArray[np.float64]:
    """R_{n_B-i} = 1 - [a^i (1 - r) + delta (a^i - 1)/(a - 1)] for i <= tau + 1 (001 Theorem 4).

    Args: steps: int array of i values. Returns float64 array of the same shape."""
    step = ColoringStep(epsilon, delta)
    return 1.0 - step.initial(1.0 - _check_probability("red_at_boundary", red_at_boundary), steps)


def terminal_behaviour(
    red_at_boundary: float, steps: NDArray[np.int64], epsilon: float, delta: float
) -> NDArray[np.float64]:
    """R_{n_B-i} for i > tau + 1 (001 Theorem 4): from R_{n_B-tau-1}, (R + s) shrinks by a per step,
    floored at 0. Args: steps: int array of i > tau + 1. Returns float64 array of the same shape."""
    step = ColoringStep(epsilon, delta)
    r = _check_probability("red_at_boundary", red_at_boundary)
    first = transition_parameter(r, epsilon, delta) + 1
    turn = step.initial(1.0 - r, first)
    return 1.0 - step.terminal(turn, np.asarray(steps, dtype=np.float64) - first)


@dataclass(frozen=True, slots=True, eq=False)
class LineMechanism:
    """The optimal mechanism on the (n_B, n_R)-line given R_{n_B} (001 Theorem 4).

    Attributes:
        n_blue, n_red: the line's shape; epsilon, delta: the privacy level; red_at_boundary: R_{n_B}.
        red_probability: float64 array (n_B + n_R,), entry j-1 = P(node j outputs red).
        transition: tau of Theorem 4 (-1 .. n_B - 1).
    """

    n_blue: int
    n_red: int
    epsilon: float
    delta: float
    red_at_boundary: float
    red_probability: NDArray[np.float64] = field(repr=False)
    transition: int

    def as_graph_mechanism(self) -> GraphMechanism:
        """The same mechanism on :func:`mpdp.protocols.colorings.graphs.line_graph` (n_B, n_R)."""
        return GraphMechanism(line_graph(self.n_blue, self.n_red), self.epsilon, self.delta, True,
                              self.red_probability)


def line_mechanism(n_blue: int, n_red: int, red_at_boundary: float, epsilon: float,
                   delta: float) -> LineMechanism:
    """The optimal (epsilon, delta)-DP mechanism on the (n_B, n_R)-line with R_{n_B} fixed (Theorem 4).

    O(n_B + n_R), vectorized; always feasible (the line has one blue-red edge).

    Raises:
        ParameterError: n_B or n_R < 1, R_{n_B} outside [0, 1], bad epsilon or delta.
        SizeLimitError: n_B + n_R > MAX_LINE_NODES.
    """
    if isinstance(n_blue, (int, np.integer)) and isinstance(n_red, (int, np.integer)) \
            and n_blue + n_red > MAX_LINE_NODES:
        raise SizeLimitError("n_B + n_R", int(n_blue) + int(n_red), MAX_LINE_NODES,
                             "a shorter line, or ColoringStep(epsilon, delta).iterate(t, n): the value n steps "
                             "from the boundary in closed form (001 Theorem 4)")
    check_line_shape(n_blue, n_red)
    step = ColoringStep(epsilon, delta)
    r = _check_probability("red_at_boundary", red_at_boundary)
    blue = 1.0 - step.iterate(1.0 - r, np.arange(n_blue - 1, -1, -1))  # nodes 1..n_B
    red = step.iterate(r, np.arange(1, n_red + 1))  # nodes n_B+1..n_B+n_R
    probs = np.concatenate([blue, red])
    probs[n_blue - 1] = r
    probs.setflags(write=False)
    return LineMechanism(int(n_blue), int(n_red), step.epsilon, step.delta, r, probs,
                         transition_parameter(r, epsilon, delta, n_blue))


def boundary_homogeneous_mechanism(graph: ColoredGraph, red_at_boundary: float, epsilon: float,
                                   delta: float) -> GraphMechanism:
    """The optimal boundary-homogeneous mechanism with R = r on all of dB (001 Theorems 3 and 5).

    The pullback of :func:`line_mechanism` on the boundary graph by the boundary morphism; vertices with
    no path to the boundary output their own color with probability 1. O(n + m).

    Raises:
        ParameterError: a graph without a blue-red edge, r outside [0, 1], bad epsilon or delta.
    """
    dist = boundary_distances(graph)
    if not graph.boundary.any():
        raise ParameterError("graph", "no blue-red edge", "a colored graph with a boundary")
    n_blue = int(dist[~graph.red].max()) + 1
    n_red = int(dist[graph.red].max()) + 1
    line = line_mechanism(n_blue, n_red, red_at_boundary, epsilon, delta).red_probability
    node = np.where(graph.red, n_blue + dist, n_blue - 1 - dist)
    probs = np.where(dist < 0, graph.red.astype(np.float64), line[np.maximum(node, 0)])
    probs.setflags(write=False)
    return GraphMechanism(graph, float(epsilon), float(delta), True, probs)


def balanced_boundary_value(epsilon: float, delta: float) -> float:
    """R on dB of the optimal balanced mechanism: (1 - delta)/(1 + e^eps) (= theta; 001 §IV)."""
    return ColoringStep(epsilon, delta).theta


def balanced_mechanism(graph: ColoredGraph, epsilon: float, delta: float) -> GraphMechanism:
    """The optimal balanced (epsilon, delta)-DP mechanism of a colored graph (001 §IV).

    It is also the best mechanism for the worst case over vertices: on any blue-red edge
    min(T_d, T_d') <= (a + delta)/(a + 1), which it attains."""
    return boundary_homogeneous_mechanism(graph, balanced_boundary_value(epsilon, delta), epsilon, delta)
