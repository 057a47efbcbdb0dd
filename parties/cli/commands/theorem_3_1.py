"""``mpdp theorem-3-1``: interaction does not help (002 Theorem 3.1; 000 §5.2 with delta > 0), shown.

Draws N random interactive protocols of K parties (each party's messages may depend on everything
broadcast before; every view is checked to be (eps_i, delta_i)-DP exactly, with the set-wise criterion),
random functions f, accuracy measures w and observers, and prints the margins of each protocol's optimal
average and worst-case accuracy over randomized response at the same privacy with its optimal rule.
The theorem says every margin is <= 0; ``max`` shows how close the closest protocol came.
"""

from __future__ import annotations

import argparse

import numpy as np

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.theory.interaction import plot_margins, theorem_3_1_trials
from mpdp.parties.cli.args import emit, papers_epilog, seed_value
from mpdp.parties.session.output_paths import plot_file
from mpdp.protocols.randomization.mechanisms import check_delta

__all__ = ["register", "run"]

EPILOG = """\
examples:
  mpdp theorem-3-1 --parties 3 --trials 200
  mpdp theorem-3-1 --parties 2 --trials 100 --delta 0.05 --json
  mpdp theorem-3-1 --parties 3 --trials 100 --plot margins.png

Per trial: budgets eps_i ~ U(0.1, 2), 2 rounds, 3 symbols per message (4 with --delta), a truth table with
2 or 3 outputs, w[y, y] = 1 and other entries ~ U(0, 0.5); compared at the protocol's exact privacy.
""" + papers_epilog("000", "002")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``theorem-3-1`` sub-command."""
    p = subparsers.add_parser("theorem-3-1", description=__doc__, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parties", type=int, default=3, help="K, 1..4 (default 3)")
    p.add_argument("--trials", type=int, default=100, help="N random protocols (default 100)")
    p.add_argument("--delta", type=float, default=0.0, help="each party's delta budget in [0, 1) (default 0: pure DP)")
    p.add_argument("--seed", type=seed_value, default=0, help="seed of every random draw (default 0)")
    p.add_argument("--plot", metavar="FILE", help="draw the margins' histogram to FILE (.png, .svg, ...)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Run the trials; print a summary (or JSON with every margin); optionally plot. Returns 0."""
    delta = check_delta(args.delta, "--delta")
    plot = None if args.plot is None else plot_file(args.plot)
    margins = theorem_3_1_trials(args.parties, args.trials, np.random.default_rng(args.seed), delta=delta)
    average = np.array([m.average for m in margins])
    worst = np.array([m.worst_case for m in margins])
    document: dict[str, object] = {
        "parties": args.parties, "trials": args.trials, "delta": delta, "seed": args.seed,
        "max_average_margin": float(average.max()), "max_worst_case_margin": float(worst.max()),
        "beaten": int(np.sum((average > 1e-12) | (worst > 1e-12))),
        "margins": [{"average": m.average, "worst_case": m.worst_case, "epsilons": list(m.epsilons),
                     "deltas": list(m.deltas), "observer": m.observer} for m in margins],
    }
    if plot is not None:
        title = f"002 Theorem 3.1: {args.trials} random {args.parties}-party protocols, delta={delta:g}, seed {args.seed}"
        save_figure(plot_margins(margins, title=title), plot)
        document["plot"] = str(plot)
    emit(args, document)
    print(f"{args.trials} random interactive {args.parties}-party protocols (delta budget {delta:g}, seed {args.seed}): "
          "margin = protocol - randomized response, optimal rules")
    for name, values in (("average", average), ("worst-case", worst)):
        print(f"  {name:<10} max {values.max():+.3e}  median {np.median(values):+.3e}  min {values.min():+.3e}")
    print(f"  beaten by more than 1e-12: {document['beaten']} of {args.trials}")
    if plot is not None:
        print(f"wrote {plot}")
    return 0
