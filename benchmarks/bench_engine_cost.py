"""Each engine's up-front estimate next to its measured cost, in the same run (issue 23 item 1).

``mpdp accuracy`` picks its engine and refuses work by these estimates (and prints them: the document's
``estimates``); this prints, per engine and size, the estimate, the CPU seconds and the peak RSS measured in
a fresh interpreter (the call only, with the modules its engine imports on first use, as the estimate
counts them), and measured / estimate:

* the exact average rule (``symmetric_rule_cost``; engine ``symmetric``): majority and sum, majority's banded
  likelihoods of 20,000-100,000 parties (one group, and one beside a second group of 4), xor's parity
  product form at 10^5 and 10^6;
* the count engine, one group (``count_threshold_cost(k)``) and two (``count_threshold_cost(n1, n2)``);
* the worst-case LP (``worst_case_estimate``): the symmetric engine's (one group) and the general
  engine's (distinct epsilons), solved in the process (``time_limit=None``) so that its CPU is counted;
* the Monte Carlo fallback (``monte_carlo_cost``; more cases in ``bench_monte_carlo_cost.py``).

The memory estimates of the count engine include the interpreter (1e8 bytes); the others do not (compare
them to the growth, the peak minus the RSS before the call). CPU seconds, not wall clock: the machine is
shared; the load average is printed before and after.

Run: python benchmarks/bench_engine_cost.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

CASE = r"""
import json, resource, sys, time
import mpdp
from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.analysis.theory.monte_carlo_cost import monte_carlo_cost
from mpdp.parties.api.params import function_of, randomized_responses
from mpdp.protocols.functions import accuracy_measure
from mpdp.protocols.rules.count_threshold import count_engine_cost
from mpdp.protocols.rules.optimal import worst_case_estimate
from mpdp.protocols.rules.symmetric import observer_average_rule

kind, spec, function = sys.argv[1:4]
mechs, f = randomized_responses(spec, 0.0, None), function_of(function)
if kind == "exact":
    cost, call = symmetric_rule_cost(mechs, f), dict(rule="average", engine="symmetric")
elif kind == "counts":
    cost, call = count_engine_cost(mechs), dict(rule="average", engine="counts")
elif kind.endswith("lp"):
    engine = kind.split("-")[0]
    cost, call = worst_case_estimate(mechs, f, None, None, engine, None)[0], dict(rule="worst-case", engine=engine)
else:  # Monte Carlo
    w = accuracy_measure("zero-one", f.output_size(len(mechs)))
    cost = monte_carlo_cost(observer_average_rule(mechs, f, w), 20_000, "")
    call = None
run = mpdp.estimate if call is None else mpdp.accuracy  # the API's modules imported before the clock; what an
# engine imports on first use (scipy.signal, scipy.optimize) is inside it, as in its estimate
with open("/proc/self/statm") as fh:
    before_rss = int(fh.read().split()[1]) * 4096
start = time.process_time()
if call is None:
    run(spec, None, function, samples=20_000, seed=1, time_limit=None)
else:
    run(spec, function, time_limit=None, **call)
cpu = time.process_time() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps([cost.seconds, cost.memory_bytes, cpu, peak, before_rss, cost.summary()]))
"""


#: Large banded groups (the slow cases: up to ~45 s and 5 GB each).
LARGE_BANDS = ("0.1*20000", "8*50000", "1*50000", "3*100000", "1*100000")


def _cases(quick: bool) -> list[tuple[str, str, str]]:
    def distinct(k: int) -> str:
        return ",".join(f"{0.5 + 1.5 * i / (k - 1):.3f}" for i in range(k))

    big = not quick
    return [
        *(("exact", f"1*{k}", "majority") for k in (300, 1000, 3000, *((10_000,) if big else ()))),
        *(("exact", f"1*{k}", "sum") for k in (300, 1000, *((2000,) if big else ()))),
        # banded groups (issue 23: no size cap; epsilon sets the band's width, 8 its narrow per-row path)
        *(("exact", spec, "majority") for spec in ("1*20000", "1*30000,2*4", *(LARGE_BANDS if big else ()))),
        *(("exact", f"1*{k}", "xor") for k in (100_000, *((1_000_000,) if big else ()))),  # parity product form
        *(("counts", f"1*{k}", "majority") for k in (10_000, 100_000, *((1_000_000,) if big else ()))),
        *(("counts", spec, "majority") for spec in ("0.5*1000,1.5*1000", "1*3000,2*2000",
                                                   *(("0.5*5000,1.5*5000", "0.5*20000,1*6000") if big else ()))),
        *(("symmetric-lp", f"1*{k}", "majority") for k in (30, 300, *((1000,) if big else ()))),
        *(("general-lp", distinct(k), "majority") for k in (6, 8, *((10,) if big else ()))),
        *(("monte-carlo", distinct(k), "majority") for k in (101, 301)),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the smaller sizes only")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'engine':13s} {'parties':>20s} {'function':9s} {'est. s':>8s} {'CPU s':>8s} {'ratio':>6s} "
          f"{'est. MB':>8s} {'peak MB':>8s} {'growth MB':>9s}")
    ratios = []
    for kind, spec, function in _cases(args.quick):
        out = subprocess.run([sys.executable, "-c", CASE, kind, spec, function], capture_output=True, text=True,
                             check=True).stdout
        est_s, est_b, cpu, peak, before, _ = json.loads(out.strip().splitlines()[-1])
        ratios.append(cpu / est_s)
        label = spec if len(spec) <= 20 else f"{spec.count(',') + 1} distinct"
        print(f"{kind:13s} {label:>20s} {function:9s} {est_s:8.3g} {cpu:8.3g} {cpu / est_s:6.2f} "
              f"{est_b / 1e6:8.1f} {peak / 1e6:8.1f} {(peak - before) / 1e6:9.1f}", flush=True)
    print(f"CPU / estimate: min {min(ratios):.2f}, max {max(ratios):.2f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
