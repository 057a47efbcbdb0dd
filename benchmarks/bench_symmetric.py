"""Benchmark of the count engine (issue 12 item 8) against a plain numpy/scipy computation of the same values.

    python benchmarks/bench_symmetric.py [--quick]

Rows: majority with k identical parties (epsilon 0.1), the average rule's exact average and worst-case
accuracy, at k = 10^3, 10^4, 10^5 (target <= 10 s at 10^5); majority with k = 10^4 in two groups
(epsilon 0.1 and 0.5, target <= 10 s). Each row runs the engine (``mpdp.protocols.rules.count_threshold``) and
the baseline in the same process and prints both CPU times (the machine is shared: CPU seconds, not wall
clock, are the comparable figure), their ratio (target: engine <= 2x baseline) and the largest difference
of the values.

The baseline is what one writes with scipy.stats in twenty lines: the posterior P(S >= sigma | t) as a
band-limited sum of ``binom.pmf * binom.sf`` per reported count t in the window where Bin(k, 1/2) has mass,
the threshold by bisection, the worst case on the two inputs next to the threshold (one group) — and, for
two groups, the posterior on the count-vector window as one matrix product. It computes the average
accuracy for two groups (its worst case needs the rule everywhere: not in twenty lines).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.special import expit
from scipy.stats import binom

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mpdp.protocols.functions import accuracy_measure, parse_function  # noqa: E402
from mpdp.protocols.randomization.mechanisms import RandomizedResponse  # noqa: E402
from mpdp.protocols.rules.count_threshold import count_threshold_rule  # noqa: E402

W = accuracy_measure("zero-one", 2)
BAND = 12.0  # standard deviations kept by the baseline's sums (dropped mass < 1e-30)


def _band(n: int, mean: float, sd: float) -> np.ndarray:
    return np.arange(max(0, int(mean - BAND * sd - 2)), min(n, int(mean + BAND * sd + 2)) + 1)


def _posterior_pmf(t: int, n: int, p: float) -> tuple[np.ndarray, np.ndarray]:
    """(support, pmf) of Bin(t, p) + Bin(n - t, 1 - p) on its band, by np.convolve."""
    a = _band(t, t * p, math.sqrt(t * p * (1 - p)))
    b = _band(n - t, (n - t) * (1 - p), math.sqrt((n - t) * p * (1 - p)))
    return a[0] + b[0] + np.arange(a.size + b.size - 1), np.convolve(binom.pmf(a, t, p), binom.pmf(b, n - t, 1 - p))


def baseline_homogeneous(k: int, eps: float) -> tuple[float, float]:
    """Average and worst-case accuracy of the optimal average rule, majority, k parties at eps."""
    p, sigma = float(expit(eps)), k // 2 + 1

    def tail(t: int, m: int) -> float:  # P(Bin(t, p) + Bin(k - t, 1 - p) >= m)
        a = _band(t, t * p, math.sqrt(t * p * (1 - p)))
        return float(binom.pmf(a, t, p) @ binom.sf(m - 1 - a, k - t, 1 - p))

    lo, hi = 0, k + 1
    while lo < hi:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if tail(mid, sigma) > 0.5 else (mid + 1, hi)
    ts = _band(k, k / 2, math.sqrt(k) / 2)
    u = np.array([tail(int(t), sigma) for t in ts])
    average = float(binom.pmf(ts, k, 0.5) @ np.where(ts >= lo, u, 1 - u))
    return average, min(tail(sigma, lo), 1 - tail(sigma - 1, lo))


def baseline_two_groups(n1: int, e1: float, n2: int, e2: float) -> float:
    """Average accuracy of the optimal average rule, majority, two groups."""
    p1, p2, sigma = float(expit(e1)), float(expit(e2)), (n1 + n2) // 2 + 1
    t1s, t2s = _band(n1, n1 / 2, math.sqrt(n1) / 2), _band(n2, n2 / 2, math.sqrt(n2) / 2)
    post1 = np.zeros((t1s.size, n1 + 1))
    for row, t in enumerate(t1s):
        support, pmf = _posterior_pmf(int(t), n1, p1)
        post1[row, support] = pmf
    tails2 = np.zeros((n1 + 1, t2s.size))  # [u, t2] = P(S2(t2) >= sigma - u)
    for col, t in enumerate(t2s):
        support, pmf = _posterior_pmf(int(t), n2, p2)
        sf = np.zeros(n2 + 2)
        sf[support] = pmf
        sf = np.cumsum(sf[::-1])[::-1]
        tails2[:, col] = sf[np.clip(sigma - np.arange(n1 + 1), 0, n2 + 1)]
    u = post1 @ tails2
    return float(binom.pmf(t1s, n1, 0.5) @ np.maximum(u, 1 - u) @ binom.pmf(t2s, n2, 0.5))


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return out, time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="k = 10^3 and 10^4 only, two groups at 2,000")
    args = parser.parse_args()
    majority = parse_function("majority")
    print("| case | engine CPU s | baseline CPU s | ratio | target s | | max |difference| | average acc. |"
          " worst-case acc. |")
    print("|---|---|---|---|---|---|---|---|---|")
    for k in (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000):
        rule, t_engine = _cpu(lambda: count_threshold_rule([RandomizedResponse(0.1)] * k, majority, W))
        (avg, worst), t_base = _cpu(lambda: baseline_homogeneous(k, 0.1))
        diff = max(abs(avg - rule.average_accuracy), abs(worst - rule.worst_case_accuracy))
        ok = "ok" if t_engine <= 10 and t_engine <= 2 * t_base else "MISSED"
        print(f"| majority, k={k}, one group eps 0.1 | {t_engine:.2f} | {t_base:.2f} | {t_engine / t_base:.2f} |"
              f" 10 | {ok} | {diff:.1e} | {rule.average_accuracy:.12f} | {rule.worst_case_accuracy:.12f} |",
              flush=True)
    half = 1_000 if args.quick else 5_000
    mechs = [RandomizedResponse(0.1)] * half + [RandomizedResponse(0.5)] * half
    rule, t_engine = _cpu(lambda: count_threshold_rule(mechs, majority, W))
    avg, t_base = _cpu(lambda: baseline_two_groups(half, 0.1, half, 0.5))
    ok = "ok" if t_engine <= 10 and t_engine <= 2 * t_base else "MISSED"
    print(f"| majority, k={2 * half}, two groups eps 0.1 / 0.5 | {t_engine:.2f} | {t_base:.2f} | "
          f"{t_engine / t_base:.2f} | 10 | {ok} | {abs(avg - rule.average_accuracy):.1e} (average) | "
          f"{rule.average_accuracy:.12f} | {rule.worst_case_accuracy:.12g} |", flush=True)


if __name__ == "__main__":
    main()
