"""Observer-side cost of the end-to-end run: decisions and exact theory at House size.

Prints one table: the average-case rule's decisions for 200 transcripts of k parties (the
Poisson-binomial posterior, heterogeneous epsilons), and the exact per-input accuracy
(homogeneous: one count class per number of reported ones) against the Monte Carlo fallback.
Run: python benchmarks/bench_observer.py
"""

from __future__ import annotations

import time

import numpy as np

from mpdp.analysis import observer_accuracy_on_input
from mpdp.protocols import (
    RandomizedResponse,
    observer_average_rule,
    parse_function,
    sample_protocol,
)


def _timed(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    rng = np.random.default_rng(0)
    f, w = parse_function("majority"), np.eye(2)
    rows = []
    for k in (435, 2000):
        x = (rng.random(k) < 0.52).astype(int)
        hetero = [RandomizedResponse(e) for e in rng.uniform(0.5, 2.0, k)]
        symbols = sample_protocol(hetero, x, 200, rng)
        rule = observer_average_rule(hetero, f, w)
        t, _ = _timed(lambda: rule.decide(symbols))
        rows.append((f"decide 200 transcripts, heterogeneous, k={k}", t))
        homo = [RandomizedResponse(1.0)] * k
        t, res = _timed(lambda: observer_accuracy_on_input(homo, x, f, w))
        rows.append((f"exact accuracy on x, homogeneous, k={k} ({res.method})", t))
        t, res = _timed(lambda: observer_accuracy_on_input(hetero, x, f, w, rng=rng), repeat=1)
        rows.append((f"Monte Carlo accuracy on x, heterogeneous, k={k} (4000 transcripts)", t))
    width = max(len(name) for name, _ in rows)
    print(f"{'benchmark':<{width}}  seconds")
    for name, seconds in rows:
        print(f"{name:<{width}}  {seconds:8.4f}")


if __name__ == "__main__":
    main()
