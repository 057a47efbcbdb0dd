"""``mpdp compare-central``: the optimal central mechanism (001) against randomized response with the
observer's optimal decision rule (002), for the majority of k voters at the same (epsilon, delta) each.

Prints average (uniform over the 2^k inputs) and worst-case accuracy for every k and epsilon.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.theory.central_vs_distributed import (
    check_comparison_voters,
    compare_majority,
    comparison_cost,
    plot_comparison,
)
from mpdp.parties.cli.args import add_time_limit, emit, papers_epilog, parse_number_list
from mpdp.parties.session.output_paths import plot_file
from mpdp.parties.session.progress import step_progress
from mpdp.protocols.numerics.cost import check_time_limit
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp compare-central --voters 1,3,5,11 --epsilon 0.5,1,2
  mpdp compare-central --voters 21 --epsilon 1 --delta 0.01 --json
  mpdp compare-central --voters 3,11,51 --plot central-vs-distributed.png

k is exact up to 401 voters (pure) or 25 (delta > 0, four-output randomized response); the central side
alone goes further with `mpdp mechanism --graph majority:N`. In JSON an infinite epsilon is "inf".
The time is estimated first (a table over --time-limit, default 60 s, is refused with its estimate) and
a progress bar counts the rows on a terminal.
""" + papers_epilog("001", "002")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare-central`` sub-command."""
    p = subparsers.add_parser("compare-central", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--voters", default="1,3,5,11,21,51",
                   help="comma-separated k values (default 1,3,5,11,21,51)")
    p.add_argument("--epsilon", default="0.1,0.5,1,2,4",
                   help="comma-separated epsilon values per voter (default 0.1,0.5,1,2,4)")
    p.add_argument("--delta", type=float, default=0.0, help="delta per voter in [0, 1) (four-output RR if > 0)")
    p.add_argument("--plot", metavar="FILE", help="draw accuracy against epsilon to FILE (.png, .pdf, .svg, ...)")
    add_time_limit(p, "the whole table (estimated from k and the number of rows before it starts)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compute the table; print it (or JSON); optionally plot."""
    delta = check_delta(args.delta, "--delta")
    voters = [check_comparison_voters(k, delta) for k in parse_number_list(args.voters, "--voters", int)]
    epsilons = [check_epsilon(e, "--epsilon") for e in parse_number_list(args.epsilon, "--epsilon")]
    plot = None if args.plot is None else plot_file(args.plot)
    estimate = comparison_cost(voters, epsilons, delta)
    estimate.check(check_time_limit(args.time_limit, "--time-limit"))
    rows = []
    with step_progress("rows", len(voters) * len(epsilons), estimate.describe(), not args.quiet) as advance:
        for k in voters:
            for eps in epsilons:
                rows.append(compare_majority(k, eps, delta))
                advance(1)
    if plot is not None:
        save_figure(plot_comparison(rows), plot)
    emit(args, {"rows": [asdict(r) for r in rows]} | ({} if plot is None else {"plot": str(plot)}))
    print(f"majority of k voters, delta = {delta:g}: P(correct) of the optimal central mechanism "
          "vs randomized response + optimal observer rule")
    print(f"{'k':>5} {'epsilon':>8} {'central avg':>12} {'distrib avg':>12} "
          f"{'central worst':>14} {'distrib worst':>14}")
    for r in rows:
        print(f"{r.voters:>5} {r.epsilon:>8g} {r.central_average:>12.6f} {r.distributed_average:>12.6f} "
              f"{r.central_worst:>14.6f} {r.distributed_worst:>14.6f}")
    if plot is not None:
        print(f"wrote {plot}")
    return 0
