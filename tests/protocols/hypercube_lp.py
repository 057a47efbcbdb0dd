"""Brute force for the central model, independent of 001's constructions: the best (epsilon, delta)-DP
release of a binary f over the FULL hypercube {0,1}^k by a linear program (HiGHS).

Variables p_x = P(release 1 | x) for all 2^k inputs x (no symmetry assumed); for every edge x ~ x' (one bit
flipped, both orientations) and both outputs the constraints of 001 eq. (1): p_x <= e^eps p_x' + delta and
(1 - p_x) <= e^eps (1 - p_x') + delta. Objective: the average of P(release = f(x) | x) over uniform x, or its
minimum over x (one more variable m <= P(true | x) for every x). Used only by the tests.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog


def hypercube_optimum(truth: np.ndarray, epsilon: float, delta: float, worst_case: bool = False) -> float:
    """The optimal average (or worst-case) accuracy of a release of f, ``truth`` = f on all 2^k inputs
    in ``itertools.product([0, 1], repeat=k)`` order."""
    truth = np.asarray(truth, dtype=np.int64)
    n = truth.size
    k = n.bit_length() - 1
    a = math.exp(epsilon)
    inputs = np.array(list(itertools.product([0, 1], repeat=k)), dtype=np.int64)
    index = inputs @ (1 << np.arange(k - 1, -1, -1))
    edges = [(int(index[x]), int(index[x] ^ (1 << (k - 1 - i)))) for x in range(n) for i in range(k)]
    rows, cols, vals, rhs = [], [], [], []
    for row, (u, v) in enumerate(edges):  # both orientations: every (u, v) and (v, u) appear
        rows += [2 * row, 2 * row, 2 * row + 1, 2 * row + 1]
        cols += [u, v, u, v]
        vals += [1.0, -a, -1.0, a]  # p_u - a p_v <= delta ;  -p_u + a p_v <= a - 1 + delta
        rhs += [delta, a - 1.0 + delta]
    sign = np.where(truth == 1, 1.0, -1.0)  # P(true | x) = (1 - truth_x) + sign_x p_x
    width = n + 1 if worst_case else n
    a_ub = sp.csr_matrix((vals, (rows, cols)), shape=(2 * len(edges), width))
    b_ub = np.array(rhs)
    if worst_case:  # maximize m subject to m - sign_x p_x <= 1 - truth_x
        cut = sp.hstack([sp.diags(-sign), np.ones((n, 1))])
        a_ub = sp.vstack([a_ub, cut]).tocsr()
        b_ub = np.concatenate([b_ub, 1.0 - truth])
        cost = np.zeros(width)
        cost[-1] = -1.0
        bounds = [(0.0, 1.0)] * width
    else:
        cost, bounds = -sign / n, [(0.0, 1.0)] * n
    res = linprog(cost, A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs",
                  options={"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10})
    assert res.status == 0, res.message
    return float(-res.fun) if worst_case else float(-res.fun + (1 - truth).mean())
