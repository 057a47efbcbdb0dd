"""Brute force over all inputs and transcripts (dense 2^k x m^k matrices): the independent reference."""

from __future__ import annotations

import itertools
from functools import reduce

import numpy as np
from scipy.optimize import linprog


def likelihood(channels: list[np.ndarray]) -> np.ndarray:
    """P[x, tau] = prod_i M_i[x_i, tau_i], by explicit enumeration (not np.kron)."""
    k = len(channels)
    xs = list(itertools.product([0, 1], repeat=k))
    taus = list(itertools.product(*[range(c.shape[1]) for c in channels]))
    return np.array([[np.prod([channels[i][x[i], t[i]] for i in range(k)]) for t in taus] for x in xs])


def rows_with_bit(k: int, i: int, b: int) -> np.ndarray:
    return np.array([x[i] == b for x in itertools.product([0, 1], repeat=k)])


def average_rule(p: np.ndarray, gain: np.ndarray) -> np.ndarray:
    """argmax_y sum_x P[x, tau] gain[x, y] for every transcript (002 eq. (5))."""
    return np.argmax(p.T @ gain, axis=1)


def per_input(p: np.ndarray, gain: np.ndarray, q: np.ndarray) -> np.ndarray:
    """A[x] = sum_tau P[x, tau] sum_y gain[x, y] Q[tau, y]."""
    return np.einsum("xt,xy,ty->x", p, gain, q)


def onehot(d: np.ndarray, ny: int) -> np.ndarray:
    return np.eye(ny)[d]


def lp(p: np.ndarray, gain: np.ndarray) -> float:
    """The dense LP of 002 eq. (6): max_Q min_x sum_tau,y P gain Q."""
    nx, nt = p.shape
    ny = gain.shape[1]
    nvar = nt * ny + 1
    a_ub = np.zeros((nx, nvar))
    for x in range(nx):
        a_ub[x, :-1] = -(p[x][:, None] * gain[x][None, :]).ravel()
        a_ub[x, -1] = 1.0
    a_eq = np.zeros((nt, nvar))
    for t in range(nt):
        a_eq[t, t * ny:(t + 1) * ny] = 1.0
    c = np.zeros(nvar)
    c[-1] = -1.0
    bounds = [(0, None)] * (nt * ny) + [(None, None)]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(nx), A_eq=a_eq, b_eq=np.ones(nt), bounds=bounds,
                  method="highs")
    assert res.status == 0
    return -res.fun


def observer_values(channels, table, w, observer=None):
    """(average of the average rule, its worst case, LP optimum) for the central observer or a party."""
    p = likelihood(channels)
    k = len(channels)
    gain = w[table]
    if observer is None:
        d = average_rule(p, gain)
        acc = per_input(p, gain, onehot(d, w.shape[0]))
        return acc.mean(), acc.min(), lp(p, gain)
    accs, lps = [], []
    for b in (0, 1):
        rows = rows_with_bit(k, observer, b)
        d = average_rule(p[rows], gain[rows])
        accs.append(per_input(p[rows], gain[rows], onehot(d, w.shape[0])))
        lps.append(lp(p[rows], gain[rows]))
    acc = np.concatenate(accs)
    return acc.mean(), acc.min(), min(lps)


def deterministic_worst_cases(p: np.ndarray, gain: np.ndarray) -> float:
    """max over all deterministic rules of the worst-case accuracy (|Y|^|T| rules)."""
    ny, nt = gain.shape[1], p.shape[1]
    best = -np.inf
    for rule in itertools.product(range(ny), repeat=nt):
        best = max(best, per_input(p, gain, onehot(np.array(rule), ny)).min())
    return best


def kron_all(channels):
    return reduce(np.kron, channels)
