"""Benchmark of the optimal-decision-rule engines against the targets of issue 3; prints one table.

    python benchmarks/bench_decision_rules.py [--quick] [--lp-max-k K]

Rows: general engine (any truth table: decision table + exact average and worst-case accuracy of the
average rule) at k = 20, 22; worst-case LP (general engine) at k = 10 for majority, XOR and a random table,
and the largest k under 60 s; symmetric engine, homogeneous majority: average rule at k = 10,000,
worst-case rule at k = 1,000. Peak memory is the process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpdp.protocols.functions import TruthTable, accuracy_measure, parse_function  # noqa: E402
from mpdp.protocols.mechanisms import RandomizedResponse  # noqa: E402
from mpdp.protocols.optimal import optimal_rules  # noqa: E402

W = accuracy_measure("zero-one", 2)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(label, target, fn):
    start = time.perf_counter()
    result = fn()
    seconds = time.perf_counter() - start
    rep = result.average or result.worst_case
    ok = "ok" if seconds <= target else "MISSED"
    print(f"| {label:<44} | {result.engine:<9} | {seconds:8.2f} | {target:6.0f} | {ok:<6} | "
          f"{rep.average_accuracy:.9f} | {rep.worst_case_accuracy:.9f} | {_peak_mb():7.0f} |", flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip k = 22 and the largest-k LP search")
    parser.add_argument("--lp-max-k", type=int, default=12)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| case | engine | seconds | target s | | average acc. | worst-case acc. | peak MB |")
    print("|---|---|---|---|---|---|---|---|")
    for k, target in ((20, 2), (22, 10)):
        if args.quick and k == 22:
            continue
        mechs = [RandomizedResponse(e) for e in rng.uniform(0.2, 2.0, k)]
        table = TruthTable(tuple(rng.integers(0, 2, 1 << k).tolist()))
        _run(f"general, random table, average rule, k={k}", target,
             lambda: optimal_rules(mechs, table, W, rule="average", engine="general"))
    for name in ("majority", "xor", "random"):
        k = 10
        mechs = [RandomizedResponse(e) for e in np.linspace(0.5, 1.5, k)]
        f = TruthTable(tuple(rng.integers(0, 2, 1 << k).tolist())) if name == "random" else parse_function(name)
        _run(f"general LP, {name}, k={k}", 30,
             lambda: optimal_rules(mechs, f, W, rule="worst-case", engine="general"))
    if not args.quick:
        for name in ("majority", "xor", "random"):
            for k in range(11, args.lp_max_k + 1):
                mechs = [RandomizedResponse(e) for e in np.linspace(0.5, 1.5, k)]
                f = (TruthTable(tuple(rng.integers(0, 2, 1 << k).tolist())) if name == "random"
                     else parse_function(name))
                took = _run(f"general LP, {name}, k={k} (largest under 60 s?)", 60,
                            lambda: optimal_rules(mechs, f, W, rule="worst-case", engine="general"))
                if took > 60:
                    break
    homogeneous = [RandomizedResponse(0.1)] * 10_000
    _run("symmetric, majority, average rule, k=10000", 1,
         lambda: optimal_rules(homogeneous, parse_function("majority"), W, rule="average"))
    _run("symmetric, majority, worst-case rule, k=1000", 30,
         lambda: optimal_rules(homogeneous[:1000], parse_function("majority"), W, rule="worst-case"))
    _run("symmetric, majority, worst-case rule, k=10000", 600,
         lambda: optimal_rules(homogeneous, parse_function("majority"), W, rule="worst-case"))


if __name__ == "__main__":
    main()
