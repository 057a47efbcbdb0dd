"""Benchmark: Theorem 2 on 10^6 vertices / 10^7 edges, and the majority line for 10^5 voters (001).

Prints one table: task, size, seconds (wall), and a correctness check. Targets: <= 10 s and <= 1 s.
The big graph is a banded random graph (vertex i joined to i + 1..i + 20 at random offsets, wrapping),
blue for i < n/2, with R = 0.3 fixed on the blue boundary: its solution must equal the pullback of the
line (Theorem 3), which is checked.
"""

from __future__ import annotations

import math
import time

import numpy as np

from mpdp.protocols.colorings.coloring_mechanisms import optimal_mechanism
from mpdp.protocols.colorings.graphs import ColoredGraph
from mpdp.protocols.colorings.line_mechanisms import boundary_homogeneous_mechanism
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism


def main() -> None:
    rng = np.random.default_rng(2024)
    n, m, eps, delta = 10**6, 10**7, 0.05, 1e-3
    rows = []
    t0 = time.perf_counter()
    u = rng.integers(0, n, m)
    v = (u + rng.integers(1, 21, m)) % n
    graph = ColoredGraph(np.stack([u, v], axis=1), np.arange(n) >= n // 2)
    bnd = np.flatnonzero(graph.blue_boundary)
    t1 = time.perf_counter()
    mech = optimal_mechanism(graph, (bnd, np.full(bnd.size, 0.3)), eps, delta)
    t2 = time.perf_counter()
    homog = boundary_homogeneous_mechanism(graph, 0.3, eps, delta)
    t3 = time.perf_counter()
    err = float(np.abs(mech.red_probability - homog.red_probability).max())
    rows.append(("build graph (10^6 v, 10^7 e)", f"{t1 - t0:.2f}", "-"))
    rows.append(("Theorem 2 propagation", f"{t2 - t1:.2f}", f"feasible={mech.feasible}"))
    rows.append(("Theorem 3 pullback (same graph)", f"{t3 - t2:.2f}", f"max diff {err:.1e}"))
    for voters in (100_001, 100_000):
        t4 = time.perf_counter()
        maj = central_majority_mechanism(voters, 0.01, 1e-6)
        t5 = time.perf_counter()
        rows.append((f"majority line, {voters} voters", f"{t5 - t4:.3f}",
                     f"avg acc {maj.average_accuracy():.6f}"))
    a = math.exp(0.01)
    assert abs(central_majority_mechanism(100_001, 0.01, 1e-6).worst_case_accuracy()
               - (a + 1e-6) / (a + 1)) < 1e-12
    width = max(len(r[0]) for r in rows)
    print(f"{'task':<{width}}  {'seconds':>8}  check")
    for task, sec, check in rows:
        print(f"{task:<{width}}  {sec:>8}  {check}")


if __name__ == "__main__":
    main()
