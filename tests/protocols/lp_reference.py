"""An independent linear-programming formulation of optimal (epsilon, delta)-DP colorings (HiGHS).

Variables R_v = P(output red | v) in [0, 1] (fixed where a boundary value is given); for every edge and
both orientations the constraints of 001 eq. (1): R_d - a R_d' <= delta and (1 - R_d') - a (1 - R_d) <=
delta. Maximizes sum_v weight_v P(true color | v). Used only by the tests, as a cross-check.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from mpdp.protocols.colorings.graphs import ColoredGraph


def lp_optimal(graph: ColoredGraph, fixed: dict[int, float], epsilon: float, delta: float,
               weights: np.ndarray | None = None) -> np.ndarray | None:
    """The LP optimum R (float64 (n,)), or None if the LP is infeasible."""
    n = graph.num_vertices
    a = math.exp(epsilon)
    w = np.ones(n) if weights is None else np.asarray(weights, dtype=float)
    cost = np.where(graph.red, -w, w)  # minimize -sum T = sum_blue R - sum_red R + const
    e = np.concatenate([graph.edges, graph.edges[:, ::-1]])
    m = len(e)
    rows = np.repeat(np.arange(2 * m), 2)
    # R_d - a R_d' <= delta ;  a R_d - R_d' <= a - 1 + delta
    cols = np.concatenate([np.stack([e[:, 0], e[:, 1]], 1).ravel(), np.stack([e[:, 0], e[:, 1]], 1).ravel()])
    vals = np.concatenate([np.tile([1.0, -a], m), np.tile([a, -1.0], m)])
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(2 * m, n))
    b_ub = np.concatenate([np.full(m, delta), np.full(m, a - 1.0 + delta)])
    bounds = [(fixed[v], fixed[v]) if v in fixed else (0.0, 1.0) for v in range(n)]
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    if res.status == 2:
        return None
    assert res.status == 0, res.message
    return res.x
