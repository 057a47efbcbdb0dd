"""``mpdp calibrate``: noise for k queries under a total (epsilon, delta) (000 §4).

Prints each query's (epsilon_0, delta_0) by Corollary 4.1 (corrected delta_tilde = delta/2; total epsilon
<= 0.9 only) and by the exact optimum of Theorem 3.3 (delta_0 = delta/(2k), and delta_0 = 0 for the pure
mechanisms), then the noise each mechanism needs on each budget with its variance: Laplace, staircase,
geometric (integer queries, sensitivity 1: exactly Theorem 3.3's composition), Gaussian (per query, and
by the exact k-fold Gaussian composition).
"""

from __future__ import annotations

import argparse

from mpdp.analysis.privacy.calibration_plan import CalibrationPlan, calibration_plan
from mpdp.parties.cli.args import emit, papers_epilog

__all__ = ["register", "run"]

EPILOG = """\
examples:
  mpdp calibrate --epsilon 0.5 --delta 1e-5 -k 100
  mpdp calibrate --epsilon 1 --delta 1e-6 -k 16 --json          # the House: 16 counting queries
  mpdp calibrate --epsilon 2 --delta 1e-6 -k 10 --sensitivity 5
""" + papers_epilog("000")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``calibrate`` sub-command."""
    p = subparsers.add_parser("calibrate", description=__doc__, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epsilon", type=float, required=True, help="total epsilon after the k queries (finite > 0)")
    p.add_argument("--delta", type=float, required=True, help="total delta after the k queries, in (0, 1)")
    p.add_argument("-k", type=int, required=True, help="number of queries")
    p.add_argument("--sensitivity", type=float, default=1.0, help="sensitivity Delta of each query (default 1)")
    p.set_defaults(run=run)


def _text(plan: CalibrationPlan) -> str:
    head = f"{plan.k} queries of sensitivity {plan.sensitivity:g}, total (epsilon, delta) = ({plan.epsilon:g}, {plan.delta:g})"
    lines = [head, "per-query budgets:"]
    for name, b in plan.budgets.items():
        lines.append(f"  {name:<14} epsilon_0 = {b.epsilon0:.6g}  delta_0 = {b.delta0:.4g}  "
                     f"(delta_tilde {b.delta_slack:.4g})")
    if "corollary_4_1" in plan.budgets:
        ratio = plan.budgets["exact"].epsilon0 / plan.budgets["corollary_4_1"].epsilon0
        lines.append(f"  the exact optimum allows {ratio:.2f}x the epsilon_0 of Corollary 4.1")
    else:
        lines.append("  (Corollary 4.1 holds for a total epsilon <= 0.9 only)")
    lines.append(f"noise per query:\n  {'mechanism':<10} {'budget':<15} {'parameter':<14} {'value':>12} "
                 f"{'std dev':>11} {'variance':>12}")
    for n in plan.noise:
        lines.append(f"  {n.mechanism:<10} {n.budget:<15} {n.parameter:<14} {n.value:>12.6g} "
                     f"{n.variance ** 0.5:>11.5g} {n.variance:>12.6g}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Compute the plan; print text or JSON. Returns 0."""
    plan = calibration_plan(args.epsilon, args.delta, args.k, args.sensitivity)
    emit(args, plan.as_dict())
    print(_text(plan))
    return 0
