"""``mpdp audit``: measure a party's privacy on its real publishing path and certify a lower bound on epsilon.

    mpdp audit --epsilon 1 --samples 1000000                       # the deployed (CSPRNG) party, 12-22 s
    mpdp audit --epsilon 1 --samples 1000000 --fault double-epsilon # a planted fault: flagged
    mpdp audit --epsilon 0.5 --delta 0.001 --releases 10 --samples 100000 --party-path simulation --plot a.png

A party configured for (epsilon, delta) answers signed round announcements for bit 0 and for bit 1, N
outputs each; every answer is signed, serialised, parsed and verified as the observer does and its symbols
recorded (a message carries a batch of outputs: the draws are independent, so the outputs are distributed as
separate answers). Every Neyman-Pearson threshold test on the output (000 Section 2) gets one-sided
Clopper-Pearson bounds (Bonferroni over the tests, family-wise level --alpha); the largest
log((P_lo(S) - delta) / P_hi(S)) is the epsilon the data certifies. With --releases K > 1 the guarantee is
the exact K-fold composition (000 Theorem 3.3) and the plot shows the measured tests against it, the DRV
bound and basic composition. A correct party is flagged with probability at most alpha; exit code 1 on a
violation, 0 otherwise.
"""

from __future__ import annotations

import argparse
import sys

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from mpdp.analysis.plot_style import save_figure
from mpdp.parties.api.audit import Audit, audit
from mpdp.parties.cli.args import count_value, emit, option_names, papers_epilog, plain_text, seed_value
from mpdp.parties.rr.audit import FAULTS, PARTY_PATHS, parse_fault
from mpdp.parties.session.output_paths import plot_file

__all__ = ["register", "run"]

#: Draws per second of the deployed sampler, for the up-front estimate (measured: 93,000 on a loaded 2-core VM,
#: 171,000 idle).
DEPLOYED_DRAWS_PER_SECOND = 100_000


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "audit", description=plain_text(__doc__), epilog=papers_epilog("000"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--epsilon", type=float, required=True,
                        help="the party's configured epsilon per release (nats)")
    parser.add_argument("--delta", type=float, default=0.0, help="the party's configured delta per release (default 0)")
    parser.add_argument("--samples", type=count_value, default=100_000,
                        help="N: outputs per input, for bit 0 and for bit 1 (default 100000; 10^6 to catch "
                             "small faults)")
    parser.add_argument("--releases", type=count_value, default=1,
                        help="K: releases (repetitions) per output; K > 1 audits the K-fold composition (default 1)")
    parser.add_argument("--party-path", choices=PARTY_PATHS, default="deployed",
                        help="deployed: the CSPRNG sampler of `mpdp party` (default); simulation: the seeded one")
    parser.add_argument("--fault", default="none", metavar="|".join(FAULTS),
                        help="plant a fault to see the audit catch it: double-epsilon (uses 2 epsilon) or leak:R "
                             "(sends its bit in the clear in a fraction R of its outputs); default none")
    parser.add_argument("--alpha", type=float, default=0.05, help="family-wise level of the certificate (default 0.05)")
    parser.add_argument("--seed", type=seed_value, help="seeds the simulation path and a planted leak")
    parser.add_argument("--plot", metavar="FILE", help="draw the measured tests over the privacy regions to FILE")
    parser.set_defaults(run=run)


def _text(result: Audit) -> str:
    """The human summary, from the estimate's numbers (the JSON document's infinities are strings)."""
    run, e = result.run, result.run.estimate
    verdict = "VIOLATION: the data certify more than the configured guarantee" if e.violation else \
        "within the configured guarantee"
    return "\n".join([
        f"party path {run.party_path}, fault {run.fault}: {e.samples:,} outputs per input of "
        f"{e.releases} release(s), {run.messages} signed messages through the observer's parser",
        f"configured epsilon = {e.epsilon:g} per release, delta = {e.delta:g}"
        + (f" (K-fold: {e.epsilon_composed:g})" if e.releases > 1 else ""),
        f"certified epsilon >= {e.epsilon_lower_bound:.6g} (level 1 - {e.alpha:g}, {e.tests} tests, "
        f"Bonferroni)",
        f"{verdict} ({run.seconds:.1f} s)",
    ])


def run(args: argparse.Namespace) -> int:
    """Audit, print text or JSON, write the plot; 1 on a violation, else 0."""
    plot = None if args.plot is None else plot_file(args.plot)
    parse_fault(args.fault)
    quiet = args.quiet or args.json is not None or not sys.stderr.isatty()
    rate = DEPLOYED_DRAWS_PER_SECOND if args.party_path == "deployed" else 20_000_000
    estimate = max(1, round(2 * args.samples * args.releases / rate))  # shown up front in the bar
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("outputs"),
                  TimeElapsedColumn(), console=Console(stderr=True), disable=quiet) as bar:
        task = bar.add_task(f"audit, {args.party_path} path (about {estimate} s)", total=2 * args.samples)
        with option_names(epsilon=("--epsilon", args.epsilon), delta=("--delta", args.delta),
                          alpha=("--alpha", args.alpha)):
            result = audit(args.epsilon, args.delta, args.samples, releases=args.releases,
                           party_path=args.party_path, fault=args.fault, alpha=args.alpha, seed=args.seed,
                           progress=lambda done, total: bar.update(task, completed=done))
    document = result.to_dict()
    if plot is not None:
        save_figure(result.plot(), plot)
        document["plot"] = str(plot)
    emit(args, document)
    print(_text(result))  # standard error with --json alone, nowhere with --quiet (args.command_output)
    if plot is not None:
        print(f"wrote {plot}")
    return 1 if result.violation else 0
