"""Exact optimal homogeneous composition (000 Theorem 3.3) against Google's dp-accounting PLD accountant.

Prints one table: wall time of the exact optimum at k = 1e5 and 1e6 (best of a few runs) and of the
PLD accountant (pessimistic, value_discretization_interval 1e-4) at k = 1e5, measured in the same run,
with the epsilons each returns and the time ratio. Usage: python benchmarks/bench_composition.py
"""

from __future__ import annotations

import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

from mpdp.analysis.composition import optimal_epsilon  # noqa: E402

EPSILON = 0.01
DELTA_SLACK = 1e-6


def _best(fn, repeat: int) -> tuple[float, float]:
    best, value = float("inf"), float("nan")
    for _ in range(repeat):
        start = time.perf_counter()
        value = fn()
        best = min(best, time.perf_counter() - start)
    return best, value


def main() -> None:
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


if __name__ == "__main__":
    main()
