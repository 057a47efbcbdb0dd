"""``mpdp compare``: randomized response, the trusted curator and secure computation, live, side by side.

The three protocols run one after the other on one broker with the same data, the same epsilon and the
same seed (rr's and the curator's draws; the mpc servers' draws are secret and never seeded), for the
majority. Per round: each protocol's exact theory and measured accuracy (rr: the observer's optimal rule,
002; curator and mpc: the optimal central mechanism, 001); then the cost of each: wall seconds per round,
bytes each party publishes per round, and for mpc each server's bytes in and out and CPU seconds per round.
"""

from __future__ import annotations

import argparse
import math
import sys

import numpy as np
from rich.console import Console
from rich.table import Table

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.reports.report import plot_models
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.cli.args import add_broker_options, broker_options, emit
from mpdp.parties.session.compare import ProtocolComparison, compare_live
from mpdp.parties.session.datasets import DATASET_NAMES, load_dataset
from mpdp.parties.session.output_paths import plot_file
from mpdp.protocols.numerics.cost import noun

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp compare --dataset house-votes-84 --epsilon 1 --repetitions 50 --seed 7 --plot models.png
  mpdp compare --dataset house-votes-84 --epsilon 0.5 --servers 5 --threshold 2 --json models.json

rr = randomized response, no one trusted (the observer decides with the optimal rule); curator = a trusted
curator sees every vote and releases the optimal central mechanism's output; mpc = the same release
computed by --servers compute servers in MPyC, no server sees a vote (T < M/2 may collude). The run takes
about three times a single `mpdp simulate`.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``compare`` sub-command."""
    p = subparsers.add_parser("compare", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="house-votes-84", metavar="NAME|PATH",
                   help=f"{' or '.join(DATASET_NAMES)}, or a CSV of 1/0 (default: house-votes-84)")
    p.add_argument("--epsilon", type=float, default=1.0, metavar="E", help="every party's epsilon (default: 1)")
    p.add_argument("--delta", type=float, default=0.0, metavar="D", help="every party's delta (default: 0)")
    p.add_argument("--repetitions", type=int, default=50, metavar="N",
                   help="independent releases or privatizations per round (default: 50)")
    p.add_argument("--seed", type=int, default=None, help="make rr's and the curator's draws reproducible")
    p.add_argument("--servers", type=int, default=3, metavar="M", help="mpc compute servers (default: 3)")
    p.add_argument("--threshold", type=int, default=1, metavar="T",
                   help="mpc colluding servers tolerated, T < M/2 (default: 1)")
    add_broker_options(p, "URL|embedded|mosquitto", "where to publish (default: $MPDP_BROKER_URL, else start "
                                                    "our own)")
    p.add_argument("--workers", type=int, default=None, metavar="W", help="worker processes per run")
    p.add_argument("--round-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="a live round closes once no new answer came for this long (default: 60)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="family-wise level of each protocol's consistency tests (default: 0.05)")
    p.add_argument("--plot", metavar="FILE", help="draw theory and measured accuracy per round (.png/.pdf/.svg)")
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    run = SimulationConfig.of(None, {name: getattr(args, name) for name in (
        "dataset", "epsilon", "delta", "repetitions", "seed", "servers", "threshold", "workers", "round_timeout",
        "alpha")} | {"protocol": "mpc"}, "mpdp compare")  # each option checked as mpdp simulate checks it
    epsilon, delta = float(args.epsilon), run.delta
    plot = None if args.plot is None else plot_file(args.plot)
    broker = BrokerSettings.from_url(**broker_options(args))
    dataset = load_dataset(args.dataset)
    human = sys.stdout  # standard error with --json alone (mpdp.parties.cli.args.command_output)
    if not args.quiet:
        print(f"{dataset.name}: {dataset.num_parties} {noun(dataset.num_parties, 'party', 'parties')}, {len(dataset.round_names)} {noun(len(dataset.round_names), 'round')}, three runs "
              f"(rr, curator, mpc with {args.servers} servers) ...", file=human)

    def progress(protocol: str, done: int) -> None:
        if not args.quiet:
            print(f"  {protocol}: round {done}/{len(dataset.round_names)}", file=human, flush=True)

    runs = compare_live(dataset, epsilon, delta=delta, repetitions=run.repetitions, seed=run.seed,
                        servers=run.servers, threshold=run.threshold, broker=broker, workers=run.workers,
                        round_timeout=args.round_timeout, alpha=run.alpha, progress=progress)
    _print(runs, dataset.name, epsilon, args.repetitions, Console(file=human, width=None if human.isatty() else 150))
    if plot is not None:
        save_figure(plot_models(dataset.round_names, [(r.protocol, [e.result for e in r.rounds]) for r in runs],
                                title=f"{dataset.name}: majority, epsilon {epsilon:g}, {args.repetitions} "
                                      "repetitions"), plot)
        print(f"figure: {plot}", file=human)
    emit(args, _document(runs, dataset.name, epsilon, delta, args), indent=2)
    return 0 if all(e.result.consistent for r in runs for e in r.rounds) else 1


def _print(runs: tuple[ProtocolComparison, ...], name: str, epsilon: float, repetitions: int,
           console: Console) -> None:
    table = Table(title=f"{name}: majority, epsilon {epsilon:g}, {repetitions} repetitions per round: "
                        "theory / measured accuracy")
    table.add_column("round")
    table.add_column("yes/voting", justify="right")
    for run in runs:
        table.add_column(run.protocol, justify="right")
    for i, first in enumerate(runs[0].rounds):
        cells = [f"{r.rounds[i].result.theoretical_accuracy:.3f} / {r.rounds[i].result.empirical_accuracy:.3f}"
                 + ("" if r.rounds[i].result.consistent else " [bold red]NO[/]") for r in runs]
        table.add_row(first.result.round, f"{first.result.yes_count}/{first.result.n_parties}", *cells)
    table.add_row("mean", "", *[f"{np.mean([e.result.theoretical_accuracy for e in r.rounds]):.3f} / "
                                f"{np.mean([e.result.empirical_accuracy for e in r.rounds]):.3f}" for r in runs])
    console.print(table)
    cost = Table(title="cost per round")
    for column in ("protocol", "wall s/round", "bytes/party", "bytes in/server", "bytes out/server", "CPU s/server"):
        cost.add_column(column, justify="left" if column == "protocol" else "right")
    for run in runs:
        c = run.cost
        cost.add_row(run.protocol, f"{c.seconds_per_round:.2f}", f"{c.party_bytes:.0f}",
                     *["-" if v is None else f"{v:.0f}" for v in (c.server_bytes_in, c.server_bytes_out)],
                     "-" if c.server_cpu is None else f"{c.server_cpu:.3f}")
    console.print(cost)
    consistent = sum(e.result.consistent for r in runs for e in r.rounds)
    console.print(f"{consistent}/{sum(len(r.rounds) for r in runs)} rounds consistent with theory (exact binomial "
                  "tests per protocol, Bonferroni); mpc's theory is the curator's (the same release, computed securely).")


def _document(runs: tuple[ProtocolComparison, ...], name: str, epsilon: float, delta: float,
              args: argparse.Namespace) -> dict[str, object]:
    return {
        "dataset": name, "function": "majority", "epsilon": epsilon if math.isfinite(epsilon) else "inf",
        "delta": delta, "repetitions": args.repetitions, "seed": args.seed, "servers": args.servers,
        "threshold": args.threshold, "alpha": args.alpha,
        "protocols": [{"protocol": r.protocol, "cost": {
            "seconds_per_round": r.cost.seconds_per_round, "wall_time_s": r.cost.wall_time,
            "party_bytes_per_round": r.cost.party_bytes, "server_bytes_in_per_round": r.cost.server_bytes_in,
            "server_bytes_out_per_round": r.cost.server_bytes_out, "server_cpu_s_per_round": r.cost.server_cpu},
            "rounds": [{"round": e.result.round, "voting": e.result.n_parties, "yes": e.result.yes_count,
                        "theory": e.result.theoretical_accuracy, "measured": e.result.empirical_accuracy,
                        "ci": [e.result.ci_low, e.result.ci_high], "consistent": e.result.consistent}
                       for e in r.rounds]} for r in runs],
    }
