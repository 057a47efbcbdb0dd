"""Optimal accuracy of any protocol given as its transcript matrix P (000 eqs. (9)-(14), 002 eqs. (1)-(6)).

For a protocol that is not randomized response (an interactive one, :mod:`mpdp.protocols.interactive.interactive`)
the engines' Kronecker structure is gone; what is left is the dense matrix ``P[x, tau] = P(tau | x)``,
shape (2^k, |T|). With the gain ``G[x, y] = w(f(x), y)``:

* average (000 eq. (13), party: eq. (10) with x_i fixed):  ``2^-k sum_tau max_y sum_x G[x, y] P[x, tau]``;
* worst case (000 eqs. (12), (14)): the LP ``max_Q min_x sum_tau,y P[x, tau] G[x, y] Q[tau, y]`` over
  stochastic Q, solved by HiGHS; a party solves one LP per own bit and its worst case is the smaller.

The worst-case value reported is the exact worst case of the rule the LP returned (a lower bound on the
optimum); ``upper_bound`` is the Bayes accuracy under the LP's dual weights over inputs (an upper bound,
because any prior's Bayes accuracy bounds the worst case from above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import linprog

from mpdp.protocols.errors import ParameterError, SolverError

__all__ = ["TranscriptAccuracy", "transcript_accuracy"]

_HIGHS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


@dataclass(frozen=True, slots=True)
class TranscriptAccuracy:
    """The optimal accuracies of one observer of a protocol.

    Attributes:
        average: the optimal average accuracy (exact).
        worst_case: the exact worst case of the LP's rule (the optimum, to the LP's tolerance).
        upper_bound: a certified upper bound on the optimal worst case (dual weights' Bayes accuracy).
    """

    average: float
    worst_case: float
    upper_bound: float


def _worst_case(p: NDArray[np.float64], gain: NDArray[np.float64]) -> tuple[float, float]:
    """(exact worst case of the LP rule, Bayes upper bound) for rows ``p`` (n_x, |T|), gain (n_x, |Y|)."""
    n_x, n_t = p.shape
    n_y = gain.shape[1]
    n_var = n_t * n_y + 1
    # t - sum_{tau, y} P[x, tau] G[x, y] Q[tau, y] <= 0 for every x
    coef = -(p[:, :, None] * gain[:, None, :]).reshape(n_x, -1)
    a_ub = np.hstack([coef, np.ones((n_x, 1))])
    a_eq = sp.hstack([sp.kron(sp.identity(n_t), np.ones((1, n_y))), sp.csr_matrix((n_t, 1))], format="csr")
    cost = np.zeros(n_var)
    cost[-1] = -1.0
    bounds = np.zeros((n_var, 2))
    bounds[:, 1] = 1.0
    bounds[-1] = (-np.inf, np.inf)
    # scipy-stubs types options as a private TypedDict and bounds as (min, max) pairs (as in worst_case.py)
    res = linprog(cost, A_ub=a_ub, b_ub=np.zeros(n_x), A_eq=a_eq, b_eq=np.ones(n_t),  # type: ignore[call-overload]
                  bounds=bounds, method="highs", options=_HIGHS)
    if res.status != 0 or res.x is None:
        raise SolverError(int(res.status), str(res.message))
    q = np.clip(res.x[:-1].reshape(n_t, n_y), 0.0, None)
    q /= q.sum(axis=1, keepdims=True)
    value = float(np.einsum("xt,xy,ty->x", p, gain, q).min())
    weights = np.abs(np.asarray(res.ineqlin.marginals, dtype=np.float64))
    weights = weights / weights.sum() if weights.sum() > 0 else np.full(n_x, 1.0 / n_x)
    upper = float(((weights[:, None] * p).T @ gain).max(axis=1).sum())
    return value, upper


def transcript_accuracy(p: NDArray[np.float64], table: NDArray[np.int64], measure: NDArray[np.float64],
                        observer: int | None = None) -> TranscriptAccuracy:
    """Optimal average and worst-case accuracy of the central observer or of party ``observer``.

    Args:
        p: float64 (2^k, |T|), P[x, tau] = P(tau | x), rows summing to 1.
        table: int (2^k,), f(x) in 0..|Y|-1 in input order (party 0 the most significant bit).
        measure: float64 (|Y|, |Y|), w[true, guess].
        observer: None (the central observer, sees tau) or a party index i (sees tau and x_i).

    Raises:
        ParameterError: shapes that do not match, or an observer outside 0..k-1.
        SolverError: HiGHS did not solve an LP to optimality.
    """
    p = np.asarray(p, dtype=np.float64)
    table = np.asarray(table, dtype=np.int64)
    measure = np.asarray(measure, dtype=np.float64)
    n_x = p.shape[0]
    k = n_x.bit_length() - 1
    if p.ndim != 2 or n_x != 1 << k or table.shape != (n_x,):
        raise ParameterError("p, table", (p.shape, table.shape), "P of shape (2^k, |T|) and a table of 2^k values")
    if measure.ndim != 2 or measure.shape[0] != measure.shape[1] or table.max() >= measure.shape[0]:
        raise ParameterError("measure", measure.shape, f"a square matrix with more than {table.max()} rows")
    if observer is not None and not 0 <= observer < k:
        raise ParameterError("observer", observer, f"None or a party index in 0..{k - 1}")
    gain = measure[table]
    xs = np.arange(n_x)
    views = [xs] if observer is None else [xs[((xs >> (k - 1 - observer)) & 1) == b] for b in (0, 1)]
    average = sum(float((p[v].T @ gain[v]).max(axis=1).sum()) for v in views) / n_x
    worst = [_worst_case(p[v], gain[v]) for v in views]
    return TranscriptAccuracy(average, min(w[0] for w in worst), min(w[1] for w in worst))
