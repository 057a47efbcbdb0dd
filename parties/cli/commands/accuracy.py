"""``mpdp accuracy``: optimal decision rules and their exact accuracy (002 §2-3).

    mpdp accuracy --epsilon 0.5,1,1.5 --function majority [--delta LIST] [--measure zero-one]
                  [--party I] [--rule average|worst-case|both] [--engine auto|general|symmetric] [--json]

Lists take one value per party, or ``VALUE*COUNT`` pieces (``--epsilon 1*1000,2*5``); a single delta
applies to every party. ``--function table:@FILE`` reads f's values (input order) from FILE. For a
symmetric f too large for the exact engines (many distinct parameters), the average rule's accuracy is a
Monte Carlo estimate with its interval, labelled as such. Long work is estimated first: the worst-case LP
is skipped (default) or refused (--rule worst-case), and a Monte Carlo estimate refused, when the estimate
exceeds --time-limit SECONDS (default 60); the message names the estimate and what to do instead. JSON is strict: an infinite value is "inf".
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

from mpdp.analysis.accuracy import monte_carlo_accuracy
from mpdp.parties.cli.args import (
    add_time_limit,
    papers_epilog,
    parse_number_list,
    plain_text,
    seed_value,
    to_json_text,
)
from mpdp.parties.cli.params import warn_if_no_privacy
from mpdp.protocols.cost import check_time_limit
from mpdp.protocols.engines import ENGINES
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import MEASURE_NAMES, accuracy_measure, parse_function
from mpdp.protocols.mechanisms import RandomizedResponse
from mpdp.protocols.optimal import RULE_CHOICES, optimal_rules, worst_case_refusal
from mpdp.protocols.symmetric import decide_cost, observer_average_rule

__all__ = ["parse_list", "register"]


def _piece(text: str, name: str) -> list[float]:
    value, star, count = text.partition("*")
    try:
        number = float(value)
        times = int(count) if star else 1
    except ValueError:
        raise ParameterError(name, text, "numbers, or VALUE*COUNT, comma-separated") from None
    if times < 1 or times > 10_000_000:
        raise ParameterError(name, text, "a count between 1 and 10^7")
    return [number] * times


def parse_list(text: str, name: str) -> list[float]:
    """``"0.5,1,2*3"`` -> [0.5, 1.0, 2.0, 2.0, 2.0].

    Raises:
        ParameterError: a malformed piece, or an empty one (``"1,,2"``; see
            :func:`mpdp.parties.cli.args.parse_number_list`).
    """
    pieces = parse_number_list(text.replace(" ", ""), name, lambda piece: _piece(piece, name))
    return [value for piece in pieces for value in piece]


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
    deltas = parse_list(args.delta, "--delta") if args.delta else [0.0]
    if len(deltas) == 1:
        deltas = deltas * len(eps)
    if len(deltas) != len(eps):
        raise ParameterError("--delta", f"{len(deltas)} values", f"1 or {len(eps)} (one per party)")
    four = any(d > 0 for d in deltas)
    mechs = [RandomizedResponse(e, d, four_output=four) for e, d in zip(eps, deltas)]
    k = len(mechs)
    function = _function(args.function)
    w = accuracy_measure(args.measure, function.output_size(k))
    observer = args.party
    started = time.perf_counter()
    report: dict = {"k": k, "function": function.name, "measure": args.measure,
                    "observer": "central" if observer is None else observer}
    check_time_limit(args.time_limit, "--time-limit")
    if args.rule == "both":  # the default: the worst-case LP only where it fits, and say so
        refusal = worst_case_refusal(mechs, function, w, observer, args.engine, args.time_limit)
        if refusal is not None:
            args.rule = "average"
            report["worst_case_skipped"] = str(refusal)
    try:
        result = optimal_rules(mechs, function, w, observer, args.rule, args.engine, args.measure,
                               args.time_limit)
    except SizeLimitError:
        if function.count_values(k) is None or args.rule != "average" or args.engine != "auto":
            raise
        decide_cost(k, args.samples, "the Monte Carlo accuracy estimate",
                    "fewer samples (--samples N; the interval widens as 1/sqrt(N)), fewer distinct "
                    "(epsilon, delta), or allow more time (--time-limit SECONDS)").check(args.time_limit)
        rule = observer_average_rule(mechs, function, w, observer)
        est = monte_carlo_accuracy(rule, function, w, args.samples, np.random.default_rng(args.seed))
        assert est.interval is not None  # the Monte Carlo estimate always has its interval
        report.update(engine="posterior-monte-carlo", rules={"average": {
            "average_accuracy": est.average, "worst_case_accuracy": None, "exact": False,
            "interval": list(est.interval), "confidence": est.confidence, "samples": est.samples}})
    else:
        report["engine"] = result.engine
        rules = {}
        for key, rep in (("average", result.average), ("worst_case", result.worst_case)):
            if rep is None:
                continue
            rules[key] = {"average_accuracy": rep.average_accuracy,
                          "worst_case_accuracy": rep.worst_case_accuracy, "exact": True}
            if rep.upper_bound is not None:
                rules[key]["worst_case_upper_bound"] = rep.upper_bound
        report["rules"] = rules
    report["seconds"] = round(time.perf_counter() - started, 4)
    if args.json:
        print(to_json_text(report))
        return 0
    who = "central observer" if observer is None else f"party {observer}"
    print(f"k={k}  function={function.name}  measure={args.measure}  observer={who}  "
          f"engine={report['engine']}  ({report['seconds']} s)")
    for key, vals in report["rules"].items():
        label = f"{key.replace('_', '-')} rule"
        if vals["exact"]:
            line = (f"  {label:<16} average accuracy {vals['average_accuracy']:.12g}   "
                    f"worst-case accuracy {vals['worst_case_accuracy']:.12g}")
            if "worst_case_upper_bound" in vals:
                line += f"   (LP bound {vals['worst_case_upper_bound']:.12g})"
        else:
            lo, hi = vals["interval"]
            line = (f"  {label:<16} average accuracy ~ {vals['average_accuracy']:.6g} "
                    f"[{lo:.6g}, {hi:.6g}] ({vals['confidence']:.0%} Hoeffding, {vals['samples']} "
                    f"samples: an estimate)   worst-case accuracy: not estimated")
        print(line)
    if "worst_case_skipped" in report:
        print(f"  worst-case rule  not computed: {report['worst_case_skipped']}")
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
    parser.add_argument("--engine", default="auto", choices=ENGINES,
                        help="exact engine: general (every transcript), symmetric (count classes, for "
                             "symmetric f), or auto (default: the one that fits)")
    add_time_limit(parser, "the worst-case LP (estimated from its size before it starts)")
    parser.add_argument("--samples", type=int, default=100_000,
                        help="Monte Carlo transcripts when no exact engine fits")
    parser.add_argument("--seed", type=seed_value, default=None, help="seed of the Monte Carlo estimate")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(run=_run)
