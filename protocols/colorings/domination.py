"""Domination between mechanisms for a binary function on a colored graph (001 Definition 2).

M dominates M' when at every dataset d it outputs the true color at least as often:
``P(M(d) = f(d)) >= P(M'(d) = f(d))`` for all d. Then M is at least as good for every reasonable utility; the
relation is a partial order, and two mechanisms can be incomparable (each better somewhere): e.g. on the
(1, 1)-line at (log 2, 0), the balanced mechanism (R = 1/3, 2/3) and the constant "always blue" (R = 0, 0)
are both DP and neither dominates the other. 001 Theorem 2's optimum dominates every (eps, delta)-DP
mechanism with the same boundary values.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.colorings.graphs import ColoredGraph
from mpdp.protocols.errors import ParameterError

__all__ = ["COMPARISONS", "compare_mechanisms", "truth_probability"]

#: What :func:`compare_mechanisms` answers.
COMPARISONS = ("equal", "dominates", "dominated", "incomparable")


def truth_probability(graph: ColoredGraph, red_probability: NDArray[np.float64]) -> NDArray[np.float64]:
    """P(M(d) = f(d)) per vertex, float64 (n,), from P(output red) (n,).

    Raises:
        ParameterError: a shape other than (n,) or values outside [0, 1].
    """
    r = np.asarray(red_probability, dtype=np.float64)
    if r.shape != (graph.num_vertices,) or not ((r >= 0) & (r <= 1)).all():
        raise ParameterError("red_probability", r.shape, f"probabilities in [0, 1] of shape ({graph.num_vertices},)")
    truth: NDArray[np.float64] = np.where(graph.red, r, 1.0 - r)
    return truth


def compare_mechanisms(graph: ColoredGraph, first: NDArray[np.float64], second: NDArray[np.float64],
                       atol: float = 1e-12) -> str:
    """How ``first`` compares with ``second`` under 001 Definition 2: one of :data:`COMPARISONS`
    (``dominates``: first is at least as good everywhere and better somewhere, beyond ``atol``).

    Raises:
        ParameterError: a mechanism of the wrong shape or with values outside [0, 1].
    """
    diff = truth_probability(graph, first) - truth_probability(graph, second)
    better, worse = bool((diff > atol).any()), bool((diff < -atol).any())
    return {(False, False): "equal", (True, False): "dominates", (False, True): "dominated"}.get(
        (better, worse), "incomparable")
