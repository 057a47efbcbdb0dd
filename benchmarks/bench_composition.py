"""Exact optimal homogeneous composition (000 Theorem 3.3) against Google's dp-accounting PLD accountant.

Prints one table: wall time of the exact optimum at k = 1e5 and 1e6 (best of a few runs) and of the
PLD accountant (pessimistic, value_discretization_interval 1e-4) at k = 1e5, measured in the same run,
with the epsilons each returns and the time ratio. Then heterogeneous composition (issue 12, item 9): k
distinct epsilons drawn uniformly from [0.01, 0.1] (seed 0): mpdp's certified bracket at the default 0.5%
relative width, and dp-accounting's PLD accountant (pessimistic, interval 1e-4, composing the k
distributions) in the same run. Usage: python benchmarks/bench_composition.py [--hetero-k K] (default
1000; the issue's 10^4 takes the PLD accountant minutes).
"""

from __future__ import annotations

import argparse
import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

import numpy as np  # noqa: E402

from mpdp.analysis.privacy.composition import optimal_epsilon  # noqa: E402
from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous  # noqa: E402

EPSILON = 0.01
DELTA_SLACK = 1e-6


def _best(fn, repeat: int) -> tuple[float, float]:
    best, value = float("inf"), float("nan")
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def heterogeneous(k: int) -> None:
    """mpdp's adaptive certified bracket against the PLD accountant for k distinct epsilons."""
    from dp_accounting.pld import common, privacy_loss_distribution

    eps = np.random.default_rng(0).uniform(0.01, 0.1, k)

    def pld() -> float:
        total = None
        for e in eps:
            one = privacy_loss_distribution.from_privacy_parameters(
                common.DifferentialPrivacyParameters(float(e), 0.0), value_discretization_interval=1e-4)
            total = one if total is None else total.compose(one)
        assert total is not None
        return float(total.get_epsilon_for_delta(DELTA_SLACK))

    t_mpdp, result = _best(lambda: compose_heterogeneous(eps, 0.0, DELTA_SLACK), 1)
    t_pld, v_pld = _best(pld, 1)
    print(f"\nheterogeneous: k = {k} epsilons uniform in [0.01, 0.1], delta_slack = {DELTA_SLACK}")
    print(f"{'method':<32}{'time [s]':>10}  result")
    print(f"{'certified bracket (mpdp)':<32}{t_mpdp:>10.2f}  [{result.lower:.6g}, {result.upper:.6g}] "
          f"(relative width {(result.upper - result.lower) / result.upper:.2%}; {result.method})")
    print(f"{'PLD accountant (dp-accounting)':<32}{t_pld:>10.2f}  {v_pld:.6g} "
          f"({'below' if v_pld < result.lower else 'inside' if v_pld <= result.upper else 'above'} the bracket)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hetero-k", type=int, default=1000)
    args = parser.parse_args()
    from dp_accounting.pld import common, privacy_loss_distribution

    def pld(k: int) -> float:
        one = privacy_loss_distribution.from_privacy_parameters(common.DifferentialPrivacyParameters(EPSILON, 0.0))
        return one.self_compose(k).get_epsilon_for_delta(DELTA_SLACK)

    rows = []
    for k in (10**5, 10**6):
        t, v = _best(lambda k=k: optimal_epsilon(EPSILON, k, DELTA_SLACK), 5)
        rows.append(("exact optimum (mpdp)", k, t, v))
    t_pld, v_pld = _best(lambda: pld(10**5), 1)
    rows.append(("PLD accountant (dp-accounting)", 10**5, t_pld, v_pld))
    print(f"epsilon = {EPSILON}, delta_slack = {DELTA_SLACK}; {platform.processor() or platform.machine()}, "
          f"python {platform.python_version()}")
    print(f"{'method':<32}{'k':>10}{'time [ms]':>12}{'epsilon_tilde':>20}")
    for name, k, t, v in rows:
        print(f"{name:<32}{k:>10}{1000 * t:>12.1f}{v:>20.12g}")
    print(f"time ratio PLD / exact at k = 1e5: {t_pld / rows[0][2]:.0f}x;"
          f" relative difference of epsilons: {(v_pld - rows[0][3]) / rows[0][3]:.2e}")
    heterogeneous(args.hetero_k)


if __name__ == "__main__":
    main()
