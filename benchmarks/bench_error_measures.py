"""``sum`` under an error measure: the |Y| x |Y| table path against the closed forms, in the same run.

For each size, two fresh interpreters run the exact average rule of ``sum`` (``optimal_rules(...,
rule="average")``, the symmetric engine, the central observer): one with the measure's table
(``accuracy_measure``: the engine's column sums over every output), one with its formula
(``error_measure``: the posterior mean or median, :mod:`mpdp.protocols.decision.error_rules`). Each prints
its CPU seconds, its peak RSS, the RSS before the call, the engine's estimate (``symmetric_rule_cost`` with
that measure) and the average accuracy; the two accuracies and decision tables are compared. CPU, not wall
clock: the machine is shared; the load average is printed before and after.

Run: python benchmarks/bench_error_measures.py [--measure squared-error] [--sizes 2000,20000] [--formula-only]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE = r"""
import hashlib, json, resource, sys, time
from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.protocols.functions import accuracy_measure, error_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules

path, measure, k = sys.argv[1], sys.argv[2], int(sys.argv[3])
mechs, f = [RandomizedResponse(1.0)] * k, parse_function("sum")
cost = symmetric_rule_cost(mechs, f, measure=measure if path == "formula" else "zero-one")
with open("/proc/self/statm") as fh:
    before_rss = int(fh.read().split()[1]) * 4096
start = time.process_time()
w = accuracy_measure(measure, k + 1) if path == "table" else error_measure(measure, k + 1)
rules = optimal_rules(mechs, f, w, None, "average", "symmetric", time_limit=None).average
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
digest = hashlib.sha256(rules.rule.tables[0].tobytes()).hexdigest()[:16]
print(json.dumps([cost.seconds, cost.memory_bytes, cpu, peak, before_rss, rules.average_accuracy,
                  rules.worst_case_accuracy, digest]))
"""


def _run(path: str, measure: str, k: int) -> list:
    done = subprocess.run([sys.executable, "-c", CASE, path, measure, str(k)], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--measure", default="squared-error", choices=("squared-error", "absolute-error"))
    parser.add_argument("--sizes", default="2000", help="comma-separated numbers of parties")
    parser.add_argument("--formula-only", action="store_true", help="skip the table path (sizes it cannot hold)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    for k in (int(s) for s in args.sizes.split(",")):
        results = {}
        for path in ("formula",) if args.formula_only else ("table", "formula"):
            est_s, est_b, cpu, peak, before, avg, worst, digest = _run(path, args.measure, k)
            results[path] = (avg, worst, digest)
            print(f"{args.measure} k={k:,} {path:>7}: CPU {cpu:.2f} s (estimate {est_s:.2f} s, {cpu / est_s:.2f}x), "
                  f"peak RSS {peak / 1e6:,.0f} MB (growth {(peak - before) / 1e6:,.0f} MB, estimate "
                  f"{est_b / 1e6:,.0f} MB); average {avg!r}, worst case {worst!r}, decisions {digest}")
        if len(results) == 2:
            (a, wa, da), (b, wb, db) = results["table"], results["formula"]
            print(f"  same decisions: {da == db}; average relative difference {abs(a - b) / abs(a):.2e}, "
                  f"worst case {abs(wa - wb) / abs(wa):.2e}")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
