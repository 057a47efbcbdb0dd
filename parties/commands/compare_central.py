"""``mpdp compare-central``: the optimal central mechanism (001) against randomized response with the
observer's optimal decision rule (002), for the majority of k voters at the same (epsilon, delta) each.

Prints average (uniform over the 2^k inputs) and worst-case accuracy for every k and epsilon.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from analysis.central_vs_distributed import compare_majority, plot_comparison
from protocols.errors import ParameterError

__all__ = ["register"]


def _list(kind: type, name: str):
    def parse(text: str) -> list:
        try:
            return [kind(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name}: a comma-separated list, got {text!r}") from None
    return parse


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare-central`` sub-command."""
    p = subparsers.add_parser("compare-central", help="central (trusted curator) vs distributed accuracy",
                              description=__doc__.split("\n\n")[0].split(": ", 1)[1])
    p.add_argument("--voters", type=_list(int, "--voters"), default=[1, 3, 5, 11, 21, 51],
                   help="comma-separated k values (default 1,3,5,11,21,51)")
    p.add_argument("--epsilon", type=_list(float, "--epsilon"), default=[0.1, 0.5, 1.0, 2.0, 4.0],
                   help="comma-separated epsilon values per voter")
    p.add_argument("--delta", type=float, default=0.0, help="delta per voter (four-output RR if > 0)")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of accuracy against epsilon")
    p.add_argument("--json", action="store_true", help="print JSON rows")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Compute the table; print it (or JSON); optionally plot."""
    if not args.voters or not args.epsilon:
        raise ParameterError("--voters/--epsilon", "", "at least one value each")
    rows = [compare_majority(k, eps, args.delta) for k in args.voters for eps in args.epsilon]
    if args.plot:
        plot_comparison(rows, args.plot)
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=1))
        return 0
    print(f"majority of k voters, delta = {args.delta:g}: P(correct) of the optimal central mechanism "
          "vs randomized response + optimal observer rule")
    print(f"{'k':>5} {'epsilon':>8} {'central avg':>12} {'distrib avg':>12} "
          f"{'central worst':>14} {'distrib worst':>14}")
    for r in rows:
        print(f"{r.voters:>5} {r.epsilon:>8g} {r.central_average:>12.6f} {r.distributed_average:>12.6f} "
              f"{r.central_worst:>14.6f} {r.distributed_worst:>14.6f}")
    return 0
