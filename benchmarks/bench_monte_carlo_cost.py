"""Up-front estimate of a Monte Carlo accuracy estimate next to its measured time, in the same run.

Work: ``monte_carlo_accuracy`` of the central observer's posterior rule (zero-one measure), the fallback of
``mpdp accuracy`` where no exact engine fits, for majority, xor, and, sum and threshold:3 at k = 11, 101,
1,001 with pure randomized response:

* ``equal``: every epsilon 1 (the count-table path: one posterior per class, then binomial counts);
* ``distinct``: epsilons evenly spaced in [0.5, 2] (the per-party path: every transcript drawn and decided);

and four-output randomized response (epsilon 1, delta 0.01) at k = 40 (count table), 200 and 1,000 (per party,
one posterior per distinct count vector). Each row: samples (100,000, or fewer so that the estimate stays
under BUDGET seconds), the estimate (:func:`mpdp.analysis.theory.monte_carlo_cost.monte_carlo_cost`), the
measured wall time (the rule built and the estimate run, as ``mpdp accuracy`` does) and measured / estimate.
The old model (0.0022 ms * k^1.3 per transcript) is printed for comparison.

Run: python benchmarks/bench_monte_carlo_cost.py [K ...]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from mpdp.analysis.theory.accuracy import monte_carlo_accuracy
from mpdp.analysis.theory.monte_carlo_cost import monte_carlo_cost
from mpdp.protocols import RandomizedResponse, parse_function
from mpdp.protocols.functions import accuracy_measure
from mpdp.protocols.rules.symmetric import observer_average_rule

BUDGET = 15.0  # seconds one measured run may be estimated to take
FUNCTIONS = ("majority", "xor", "and", "sum", "threshold:3")


def _row(label: str, mechanisms: list[RandomizedResponse], name: str) -> tuple[float, float]:
    f = parse_function(name)
    k = len(mechanisms)
    w = accuracy_measure("zero-one", f.output_size(k))
    rule = observer_average_rule(mechanisms, f, w)
    samples = 100_000
    cost = monte_carlo_cost(rule, samples, "")
    if cost.seconds > BUDGET:
        samples = max(1, int(samples * BUDGET / cost.seconds))
        cost = monte_carlo_cost(rule, samples, "")
    start = time.perf_counter()
    monte_carlo_accuracy(observer_average_rule(mechanisms, f, w), f, w, samples, np.random.default_rng(0))
    measured = time.perf_counter() - start
    old = samples * 2.2e-6 * k ** 1.3
    print(f"{label:9s} {name:11s} {k:6,d} {samples:8,d} {cost.seconds:9.3f} {measured:9.3f} "
          f"{measured / cost.seconds:6.2f} {old:10.1f} {measured / old:8.4f}", flush=True)
    return cost.seconds, measured


def main() -> None:
    ks = [int(a) for a in sys.argv[1:]] or [11, 101, 1001]
    print(f"{'params':9s} {'function':11s} {'k':>6s} {'samples':>8s} {'estimate':>9s} {'measured':>9s} "
          f"{'ratio':>6s} {'old est.':>10s} {'old rat.':>8s}")
    ratios = []
    for k in ks:
        for name in FUNCTIONS:
            for label, mechs in (("equal", [RandomizedResponse(1.0)] * k),
                                 ("distinct", [RandomizedResponse(float(e)) for e in np.linspace(0.5, 2.0, k)])):
                est, measured = _row(label, mechs, name)
                ratios.append(measured / est)
    for k in (40, 200, 1000):
        for name in ("majority", "xor"):
            est, measured = _row("delta", [RandomizedResponse(1.0, 0.01, True)] * k, name)
            ratios.append(measured / est)
    print(f"measured / estimate: min {min(ratios):.2f}, max {max(ratios):.2f}")


if __name__ == "__main__":
    main()
