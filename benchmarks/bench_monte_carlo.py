"""Monte Carlo accuracy engine against a plain numpy baseline doing the same work, in the same run.

Work: the central observer's optimal average-case rule for majority at k = 435 (the House), zero-one
measure, x uniform; each repetition draws the input and the transcript and scores the decision.

* homogeneous (epsilon = 1 for all): baseline = per repetition a ~ Bin(k, 1/2) ones, reported ones
  Bin(a, p) + Bin(k - a, q), decision "more than k/2 reported ones" (the optimal rule of a homogeneous odd
  k), score; mpdp = ``monte_carlo_accuracy`` with the rule from ``decision_rule`` (table on count classes).
* heterogeneous, three privacy tiers (epsilon 0.5, 1, 2; 145 parties each): baseline = one binomial count
  per tier and a lookup of the rule's decision per class (the same table), score; mpdp as above.
* heterogeneous, 435 distinct epsilons (uniform in [0.5, 2]): baseline = vectorized Bernoulli draws of
  every party and the posterior rule's decision (``SymmetricAverageRule.decide``, O(k^2) per transcript);
  mpdp = ``monte_carlo_accuracy`` (per-party path).

Prints party-repetitions per second (k x repetitions / wall seconds, one core) and the ratio.
Run: python benchmarks/bench_monte_carlo.py
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from mpdp.analysis.statistics.monte_carlo import count_table
from mpdp.analysis.theory.accuracy import monte_carlo_accuracy
from mpdp.protocols import RandomizedResponse, parse_function
from mpdp.protocols.randomization.mechanisms import truth_and_flip
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.symmetric import observer_average_rule

K = 435
F = parse_function("majority")
W = np.eye(2)


def _rate(work: Callable[[], object], party_reps: int, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return party_reps / best


def _homogeneous_baseline(n: int, rng: np.random.Generator) -> int:
    p, q = truth_and_flip(1.0)
    a = rng.binomial(K, 0.5, n)
    reported = rng.binomial(a, p) + rng.binomial(K - a, q)
    return int(((reported > K // 2) == (a > K // 2)).sum())


def _tiers_baseline(table: np.ndarray, tiers: list[float], size: int, n: int, rng: np.random.Generator) -> int:
    ones = np.zeros(n, dtype=np.int64)
    index = np.zeros(n, dtype=np.int64)
    for eps in tiers:
        p, q = truth_and_flip(eps)
        a = rng.binomial(size, 0.5, n)
        ones += a
        index = index * (size + 1) + rng.binomial(a, p) + rng.binomial(size - a, q)
    return int((table[index] == (ones > K // 2)).sum())


def _distinct_baseline(epsilons: np.ndarray, n: int, rng: np.random.Generator) -> int:
    rule = observer_average_rule([RandomizedResponse(e) for e in epsilons], F, W)
    q = np.array([truth_and_flip(e)[1] for e in epsilons])
    x = rng.integers(0, 2, (n, K))
    symbols = (x ^ (rng.random((n, K)) < q)).astype(np.uint8)
    return int((rule.decide(symbols) == (x.sum(axis=1) > K // 2)).sum())


def main() -> None:
    rng = np.random.default_rng(0)
    rows = []
    n = 2_000_000
    homo = decision_rule([RandomizedResponse(1.0)] * K, F)
    rows.append(("homogeneous, k=435",
                 _rate(lambda: monte_carlo_accuracy(homo, F, W, n, rng), K * n),
                 _rate(lambda: _homogeneous_baseline(n, rng), K * n)))
    tiers = [0.5, 1.0, 2.0]
    tier_mechs = [RandomizedResponse(e) for e in tiers for _ in range(K // 3)]
    tiered = decision_rule(tier_mechs, F)
    table = count_table(tiered)
    assert table is not None
    rows.append(("heterogeneous, 3 tiers of 145",
                 _rate(lambda: monte_carlo_accuracy(tiered, F, W, n, rng), K * n),
                 _rate(lambda: _tiers_baseline(table.decisions[0], tiers, K // 3, n, rng), K * n)))
    epsilons = rng.uniform(0.5, 2.0, K)
    distinct = decision_rule([RandomizedResponse(e) for e in epsilons], F)
    m = 4_000
    rows.append(("heterogeneous, 435 distinct epsilons",
                 _rate(lambda: monte_carlo_accuracy(distinct, F, W, m, rng), K * m, repeat=1),
                 _rate(lambda: _distinct_baseline(epsilons, m, rng), K * m, repeat=1)))
    width = max(len(r[0]) for r in rows)
    print(f"{'work':<{width}}  {'mpdp party-reps/s':>18}  {'numpy baseline':>15}  {'baseline/mpdp':>13}")
    for name, ours, base in rows:
        print(f"{name:<{width}}  {ours:18.3g}  {base:15.3g}  {base / ours:13.2f}")


if __name__ == "__main__":
    main()
