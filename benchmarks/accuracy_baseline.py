"""A plain numpy/scipy baseline for the central observer's optimal majority accuracy (issue 23 item 1),
independent of mpdp (it imports nothing from it): the bench script runs it beside ``mpdp accuracy``.

    python benchmarks/accuracy_baseline.py N[,N2] EPSILON[,EPSILON2]

Each group g of n_g parties answers by pure randomized response at epsilon_g (p_g = e^eps / (1 + e^eps)).
Under the uniform prior the reported-one counts t_g are Binomial(n_g, 1/2), and given t_g the group's
true ones are ``Bin(t_g, p_g) + Bin(n_g - t_g, 1 - p_g)`` (Bayes, one party at a time). The optimal rule
answers the likelier value of majority (more than k/2 ones) given the counts, so its average accuracy is
``sum_t P(t) max(U(t), 1 - U(t))`` with ``U(t) = P(true ones > k/2 | t)``, computed here directly as a sum
of binomial pmfs (scipy.stats.binom) on the windows that hold all but < 1e-13 of the mass. Prints one
line: the accuracy (repr) and this process's CPU seconds.
"""

from __future__ import annotations

import sys
import time

import numpy as np
from scipy.stats import binom

REACH = 9.0  # standard deviations kept on each side: the mass outside is < 1e-18


def window(n: int, p: float) -> np.ndarray:
    """The counts within REACH standard deviations of Bin(n, p)'s mean."""
    mean, sd = n * p, (n * p * (1 - p)) ** 0.5
    return np.arange(max(0, int(mean - REACH * sd) - 1), min(n, int(mean + REACH * sd) + 2) + 1)


def ones_pmf(n: int, t: int, p: float) -> tuple[int, np.ndarray]:
    """(first count, pmf) of the true ones of n parties given t reported ones: Bin(t, p) + Bin(n - t, 1 - p)."""
    a, b = window(t, p), window(n - t, 1 - p)
    return int(a[0] + b[0]), np.convolve(binom.pmf(a, t, p), binom.pmf(b, n - t, 1 - p))


def one_group(n: int, eps: float) -> float:
    p = np.exp(eps) / (1 + np.exp(eps))
    need = n // 2 + 1  # majority: more than n/2 ones
    ts = window(n, 0.5)
    u = np.empty(ts.size)
    for i, t in enumerate(ts):  # U = sum_a P(Bin(t, p) = a) P(Bin(n - t, 1 - p) >= need - a)
        a, b = window(int(t), p), window(n - int(t), 1 - p)
        tail_b = np.append(np.cumsum(binom.pmf(b, n - t, 1 - p)[::-1])[::-1], 0.0)
        tail_b = np.insert(tail_b, 0, 1.0)  # below the window: 1; above it: 0
        u[i] = binom.pmf(a, t, p) @ tail_b[np.clip(need - a - b[0] + 1, 0, b.size + 1)]
    return float(binom.pmf(ts, n, 0.5) @ np.maximum(u, 1 - u))


def two_groups(n1: int, eps1: float, n2: int, eps2: float) -> float:
    p1, p2 = (np.exp(e) / (1 + np.exp(e)) for e in (eps1, eps2))
    need = (n1 + n2) // 2 + 1
    t1s, t2s = window(n1, 0.5), window(n2, 0.5)
    # tail2[j, c] = P(group 2 has >= c true ones | t2s[j] reported), c = 0..n2 + 1
    tail2 = np.zeros((t2s.size, n2 + 2))
    for j, t in enumerate(t2s):
        start, pmf = ones_pmf(n2, int(t), p2)
        tail2[j, start: start + pmf.size] = pmf
    tail2 = np.cumsum(tail2[:, ::-1], axis=1)[:, ::-1]
    u = np.empty((t1s.size, t2s.size))
    for i, t in enumerate(t1s):
        start, pmf = ones_pmf(n1, int(t), p1)
        c = np.clip(need - (start + np.arange(pmf.size)), 0, n2 + 1)
        u[i] = tail2[:, c] @ pmf
    prior = np.outer(binom.pmf(t1s, n1, 0.5), binom.pmf(t2s, n2, 0.5))
    return float((prior * np.maximum(u, 1 - u)).sum())


def main() -> None:
    sizes = [int(s) for s in sys.argv[1].split(",")]
    epsilons = [float(e) for e in sys.argv[2].split(",")]
    accuracy = one_group(sizes[0], epsilons[0]) if len(sizes) == 1 else two_groups(sizes[0], epsilons[0],
                                                                                   sizes[1], epsilons[1])
    print(repr(accuracy), time.process_time())


if __name__ == "__main__":
    main()
