"""Every party's own decision rule, k parties: one rule per group of equal mechanisms against the per-party
construction it replaced, in the same run (docs/benchmarks.md).

Each case runs in a fresh interpreter: the parties' rules (majority, pure randomized response at epsilon 1,
one group), each party's decision on one transcript, and the exact theory of their rules on the true input
(what the observer's evaluation computes), with its CPU seconds, peak RSS and the estimate
(:func:`mpdp.protocols.decision.engine_cost.party_rules_cost`, one process) beside it:

* ``grouped``: :class:`mpdp.protocols.rules.party_rules.PartyRuleSet` and its
  :class:`~mpdp.protocols.rules.party_rules.TranscriptDecisions`, and
  :func:`mpdp.analysis.theory.party_theory.round_rule_theory`;
* ``per-party`` (the baseline): one ``decision_rule(..., observer=j, cache=...)`` per party (the cache shares
  the tables, each party gets its relabelled copy), kept in a list as the evaluation did, each applied to the
  transcript.

CPU seconds, not wall clock: the machine is shared; the load average is printed before and after.

Run: python benchmarks/bench_party_rules.py [--parties 4000 20000 100000] [--baseline 4000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE = r"""
import json, resource, sys, time
import numpy as np
from mpdp.analysis.theory.party_theory import round_rule_theory
from mpdp.protocols.decision.engine_cost import party_rules_cost
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, truth_and_flip
from mpdp.protocols.rules.party_rules import PartyRuleSet
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule

k, how = int(sys.argv[1]), sys.argv[2]
f, mech = parse_function("majority"), RandomizedResponse(1.0, 0.0, False)
mechs = (mech,) * k
rng = np.random.default_rng(0)
x = rng.integers(0, 2, k)
truth = truth_and_flip(1.0)[0]
symbols = np.where(rng.random(k) < truth, x, 1 - x)[None, :].astype(np.uint8)  # randomized response
estimate = party_rules_cost(mechs, f, 1, 1)
start = time.process_time()
cache = RuleCache()
if how == "grouped":
    rules = PartyRuleSet(mechs, f, cache=cache)
    view = rules.decisions(symbols)
    decided = [view.decide(j, int(x[j])) for j in range(k)]
    theory = round_rule_theory(mechs, x, f, "average", cache, central=False)
    built = rules.rules_built
else:
    kept = [decision_rule(mechs, f, observer=j, cache=cache) for j in range(k)]
    decided = [rule.decide(symbols, own_bits=int(x[j])) for j, rule in enumerate(kept)]
    built = len(kept)
cpu = time.process_time() - start
print(json.dumps({"k": k, "how": how, "cpu": cpu, "rules": built,
                  "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "estimate_s": estimate.seconds, "estimate_mb": estimate.memory_bytes / 2**20}))
"""


def _run(k: int, how: str) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", CASE, str(k), how], capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parties", type=int, nargs="+", default=[4000, 20000, 100000])
    parser.add_argument("--baseline", type=int, default=4000, help="k of the per-party construction")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.1f}")
    cases = [(args.baseline, "per-party")] + [(k, "grouped") for k in args.parties]
    print(f"{'k':>8} {'construction':>12} {'rules':>7} {'CPU s':>8} {'peak MB':>8} {'est. s':>8} {'est. MB':>8}")
    for k, how in cases:
        r = _run(k, how)
        print(f"{k:>8,} {how:>12} {int(r['rules']):>7,} {r['cpu']:>8.2f} {r['peak_mb']:>8.0f} "
              f"{r['estimate_s']:>8.2f} {r['estimate_mb']:>8.0f}")
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
