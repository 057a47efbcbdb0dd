"""``mpdp accuracy``: optimal decision rules and their exact accuracy (002 §2-3).

    mpdp accuracy --epsilon 0.5,1,1.5 --function majority [--delta LIST] [--measure zero-one]
                  [--party I] [--rule average|worst-case|both] [--engine auto|general|symmetric|counts]
                  [--json]

Lists take one value per party, or ``VALUE*COUNT`` pieces (``--epsilon 1*1000,2*5``); a single delta
applies to every party. ``--function table:@FILE`` reads f's values (input order) from FILE. A monotone
binary symmetric f (majority, and, or, threshold:T) with pure randomized response in one or two groups of
equal epsilon goes to the count engine (the average rule as a threshold on the groups' reported-one counts,
exact, 10^5 parties in a fraction of a second) when its estimate is below the symmetric engine's for the
average rule alone, when the exact engines do not fit, or with ``--engine counts``: the engine is chosen by
the cost estimates, which the output prints, never by a number of parties. Any other
symmetric f too large for the exact engines gets a Monte Carlo estimate of the average rule's accuracy
with its interval, labelled as such (a progress bar on standard error counts its transcripts; none with
--quiet). Long work is estimated first: the worst-case LP is skipped (default)
or refused (--rule worst-case), and a Monte Carlo estimate refused, when the estimate exceeds --time-limit
SECONDS (default 60); the message names the estimate and what to do instead. JSON is strict: an infinite
value is "inf".
"""

from __future__ import annotations

import argparse
import pathlib

from mpdp.parties.api.accuracies import accuracy
from mpdp.parties.api.value_lists import parse_list
from mpdp.parties.cli.args import (
    add_time_limit,
    count_value,
    emit,
    option_names,
    papers_epilog,
    plain_text,
    seed_value,
)
from mpdp.parties.cli.errors import options_spelt
from mpdp.parties.session.epsilons import warn_if_no_privacy
from mpdp.parties.session.progress import step_progress
from mpdp.protocols.decision.engines import ENGINES
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import MEASURE_NAMES, parse_function
from mpdp.protocols.rules.optimal import RULE_CHOICES

__all__ = ["register"]


def _function(spec: str):
    if spec.strip().lower().startswith("table:@"):
        path = pathlib.Path(spec.strip()[len("table:@"):])
        try:
            content = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError("--function", spec, "a readable UTF-8 text file", hint=str(exc)[:200]) from None
        return parse_function("table:" + ",".join(content.replace(",", " ").split()))
    return parse_function(spec)


def _run(args: argparse.Namespace) -> int:
    eps = parse_list(args.epsilon, "--epsilon")
    warn_if_no_privacy(eps)
    deltas = parse_list(args.delta, "--delta") if args.delta else 0.0
    with option_names(epsilon=("--epsilon", args.epsilon), delta=("--delta", args.delta),
                      function=("--function", args.function), party=("--party", args.party),
                      time_limit=("--time-limit", args.time_limit), samples=("--samples", args.samples),
                      engine=("--engine", args.engine)), \
            step_progress("Monte Carlo transcripts", args.samples, enabled=not args.quiet,
                          hidden_until_started=True) as advance:
        report = accuracy(eps, _function(args.function), deltas, measure=args.measure, party=args.party,
                          rule=args.rule, engine=args.engine, time_limit=args.time_limit, samples=args.samples,
                          seed=args.seed, progress=advance).to_dict()
    emit(args, report)
    who = "central observer" if args.party is None else f"party {args.party}"
    print(f"k={report['k']}  function={report['function']}  measure={args.measure}  observer={who}  "
          f"engine={report['engine']}  ({report['seconds']} s)")
    for key, vals in report["rules"].items():
        label = f"{key.replace('_', '-')} rule"
        if vals["exact"]:
            line = (f"  {label:<16} average accuracy {vals['average_accuracy']:.12g}   "
                    f"worst-case accuracy {vals['worst_case_accuracy']:.12g}")
            if "worst_case_upper_bound" in vals:
                line += f"   (upper bound {vals['worst_case_upper_bound']:.12g})"  # the LP dual's, or XOR's Bayes bound
        else:
            lo, hi = vals["interval"]
            line = (f"  {label:<16} average accuracy ~ {vals['average_accuracy']:.6g} "
                    f"[{lo:.6g}, {hi:.6g}] ({vals['confidence']:.0%} Hoeffding, {vals['samples']} "
                    f"samples: an estimate)   worst-case accuracy: not estimated")
        print(line)
    for key, text in report.get("estimates", {}).items():
        print(f"  {key.replace('_', '-') + ' rule':<16} estimated before it ran: {text}")
    if "worst_case_skipped" in report:  # the API's words (in --json too), its keywords named as the options here
        why = options_spelt(report["worst_case_skipped"], {"time_limit": "--time-limit", "rule": "--rule"})
        print(f"  worst-case rule  not computed: {why}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``accuracy`` sub-command."""
    parser = subparsers.add_parser(
        "accuracy", description=plain_text(__doc__), epilog=papers_epilog("002"),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epsilon", required=True, help="privacy levels, one per party (VALUE*COUNT ok)")
    parser.add_argument("--delta", help="delta per party, or one for all (four-output RR when > 0)")
    parser.add_argument("--function", required=True,
                        help="xor, and, or, majority, threshold:T, sum, table:V0,V1,... or table:@FILE")
    parser.add_argument("--measure", default="zero-one", choices=MEASURE_NAMES,
                        help="how an answer is scored (default: zero-one = the probability of the right "
                             "answer); absolute-error and squared-error accuracies are minus the expected "
                             "error, so they print as numbers <= 0 (0 is perfect)")
    parser.add_argument("--party", type=int, default=None,
                        help="the deciding party (0-based); default: the central observer")
    parser.add_argument("--rule", default="both", choices=RULE_CHOICES,
                        help="the optimal average-case rule (002 eq. (4)), the optimal worst-case rule (LP, "
                             "002 eq. (6)), or both (default; the LP only where it fits)")
    parser.add_argument("--engine", default="auto", choices=ENGINES + ("counts",),
                        help="exact engine: general (every transcript), symmetric (count classes, for "
                             "symmetric f), counts (the average rule as a threshold on per-group counts: "
                             "monotone binary symmetric f, 1 or 2 pure epsilon groups, 10^5 parties), or "
                             "auto (default: the cheapest by the cost estimates that fits)")
    add_time_limit(parser, "the worst-case LP or the Monte Carlo estimate")
    parser.add_argument("--samples", type=count_value, default=100_000,
                        help="Monte Carlo transcripts when no exact engine fits")
    parser.add_argument("--seed", type=seed_value, default=None, help="seed of the Monte Carlo estimate")
    parser.set_defaults(run=_run)
