"""Benchmark of the optimal-decision-rule engines against the targets of issue 3; prints one table.

    python benchmarks/bench_decision_rules.py [--quick] [--lp-max-k K]

Rows: general engine (any truth table: decision table + exact average and worst-case accuracy of the
average rule) at k = 20, 22; worst-case LP (general engine) at k = 10 for majority, XOR and a random table,
and the largest k under 60 s; the largest k of distinct four-output parties (heterogeneous (epsilon,
delta)) whose worst-case LP is solved within 60 s; symmetric engine, homogeneous majority: average rule at
k = 10,000, worst-case rule at k = 1,000. Each LP row shows the cost model's estimate
(:func:`mpdp.protocols.decision.worst_case.lp_cost`) next to the measured time; an LP the model puts over 60 s is
refused up front (the row says so) and ends that search. Peak memory is the process's maximum resident
set size.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpdp.protocols.decision.engines import build_problem  # noqa: E402
from mpdp.protocols.decision.worst_case import lp_cost  # noqa: E402
from mpdp.protocols.errors import CostLimitError, SolverError  # noqa: E402
from mpdp.protocols.functions import TruthTable, accuracy_measure, parse_function  # noqa: E402
from mpdp.protocols.randomization.mechanisms import RandomizedResponse  # noqa: E402
from mpdp.protocols.rules.optimal import optimal_rules  # noqa: E402

W = accuracy_measure("zero-one", 2)


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _run(label, target, fn, estimate=None):
    """One row; ``estimate`` = (mechanisms, function) of a worst-case LP: its model time is shown, and
    an LP the model refuses is reported (returns inf) instead of run."""
    model = "" if estimate is None else lp_cost(build_problem(estimate[0], estimate[1], W).views).seconds
    start = time.perf_counter()
    try:
        result = fn()
    except CostLimitError as exc:
        print(f"| {label:<44} | refused   | {'-':>8} | {target:6.0f} | {model:8.1f} | {exc} |", flush=True)
        return float("inf")
    except SolverError as exc:  # HiGHS stopped at the time limit: the model was too optimistic here
        print(f"| {label:<44} | stopped   | {time.perf_counter() - start:8.2f} | {target:6.0f} | "
              f"{model:8.1f} | {exc} |", flush=True)
        return float("inf")
    seconds = time.perf_counter() - start
    rep = result.average or result.worst_case
    ok = "ok" if seconds <= target else "MISSED"
    shown = f"{model:8.2f}" if model != "" else f"{'':8}"
    print(f"| {label:<44} | {result.engine:<9} | {seconds:8.2f} | {target:6.0f} | {shown} | {ok:<6} | "
          f"{rep.average_accuracy:.9f} | {rep.worst_case_accuracy:.9f} | {_peak_mb():7.0f} |", flush=True)
    return seconds


def _largest_within(label, make, ks, target=60.0):
    """Run the worst-case LP for k in ``ks`` (make(k) -> (mechanisms, function)) until one takes longer
    than ``target`` or is refused; print the largest k solved within it."""
    best = None
    for k in ks:
        mechs, f = make(k)
        took = _run(f"{label}, k={k}", target,
                    lambda: optimal_rules(mechs, f, W, rule="worst-case", engine="general", time_limit=target),
                    (mechs, f))
        if took > target:
            break
        best = k
    print(f"| largest k within {target:.0f} s: {label} | {best} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="skip k = 22 and the largest-k LP search")
    parser.add_argument("--lp-max-k", type=int, default=14)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print("| case | engine | seconds | target s | model s | | average acc. | worst-case acc. | peak MB |")
    print("|---|---|---|---|---|---|---|---|---|")
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
             lambda: optimal_rules(mechs, f, W, rule="worst-case", engine="general"), (mechs, f))
    four_output = lambda k: ([RandomizedResponse(0.5 + 0.1 * i, 0.05 + 0.01 * i, four_output=True)  # noqa: E731
                              for i in range(k)], parse_function("majority"))
    _largest_within("general LP, four-output distinct, majority", four_output, range(4, 5 if args.quick else 12))
    if not args.quick:
        for name in ("majority", "xor", "random"):
            def pure(k, name=name):
                f = (TruthTable(tuple(rng.integers(0, 2, 1 << k).tolist())) if name == "random"
                     else parse_function(name))
                return [RandomizedResponse(e) for e in np.linspace(0.5, 1.5, k)], f
            _largest_within(f"general LP, {name}", pure, range(11, args.lp_max_k + 1))
    homogeneous = [RandomizedResponse(0.1)] * 10_000
    _run("symmetric, majority, average rule, k=10000", 1,
         lambda: optimal_rules(homogeneous, parse_function("majority"), W, rule="average"))
    _run("symmetric, majority, worst-case rule, k=1000", 30,
         lambda: optimal_rules(homogeneous[:1000], parse_function("majority"), W, rule="worst-case"))
    _run("symmetric, majority, worst-case rule, k=10000", 600,
         lambda: optimal_rules(homogeneous, parse_function("majority"), W, rule="worst-case"))


if __name__ == "__main__":
    main()
