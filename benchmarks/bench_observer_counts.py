"""The live observer's decision for identical pure parties (issue 23 item 1): from reported-one counts
(:mod:`mpdp.protocols.rules.count_gain`, one recurrence per round) against the per-count Poisson-binomial
posterior it replaced (O(k^2) per distinct count, timed on a few counts and scaled to the round's).

    python benchmarks/bench_observer_counts.py [--quick]

Rows: majority, epsilon 1, 200 repetitions, k = 10^4 and 10^5 (--quick: 10^4 only). Printed: CPU seconds
of the count path, the posterior path's (measured on ``SAMPLED`` distinct counts, times the round's
distinct counts), their ratio, whether the decisions agree on the sampled transcripts, and peak RSS.
CPU seconds, not wall clock: the machine is shared. Measured (2-core VM, load ~20, 2026-12-02): k = 10^4
0.02 s against ~10 s; k = 10^5 0.2 s against ~880 s.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpdp.protocols import RandomizedResponse, observer_average_rule, parse_function  # noqa: E402
from mpdp.protocols.rules.symmetric import argmax_decision, count_posterior  # noqa: E402

REPETITIONS = 200
SAMPLED = 3  # distinct counts the posterior path is timed on


def _row(k: int) -> str:
    rule = observer_average_rule([RandomizedResponse(1.0)] * k, parse_function("majority"), np.eye(2))
    symbols = np.random.default_rng(k).integers(0, 2, size=(REPETITIONS, k), dtype=np.uint8)
    start = time.process_time()
    decided = rule.decide(symbols)
    counts_cpu = time.process_time() - start
    counts, first = np.unique(symbols.sum(axis=1), return_index=True)
    picked = first[:SAMPLED]
    post = RandomizedResponse(1.0).posterior_one
    start = time.process_time()
    old = argmax_decision(count_posterior(post[symbols[picked].astype(np.int64)]) @ rule.gain)
    posterior_cpu = (time.process_time() - start) / picked.size * counts.size
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    agree = bool((old == decided[picked]).all())
    return (f"k={k:>7,}  counts {counts_cpu:7.2f} s CPU   posterior ~{posterior_cpu:8.1f} s CPU "
            f"({counts.size} distinct counts)   ratio {posterior_cpu / max(counts_cpu, 1e-9):8.0f}x   "
            f"same decisions {agree}   peak RSS {rss:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="k = 10^4 only")
    args = parser.parse_args()
    for k in (10_000,) if args.quick else (10_000, 100_000):
        print(_row(k), flush=True)


if __name__ == "__main__":
    main()
