"""``mpdp compose``: the privacy of k composed (epsilon, delta)-DP mechanisms (000, Theorems 3.1-3.4).

    mpdp compose --epsilon 0.1 --delta 0.001 -k 30 --delta-slack 1e-5 [--json]
    mpdp compose --epsilon 0.1,0.5,0.5 --delta 0 --delta-slack 1e-6 --json   # heterogeneous
    mpdp compose --epsilon 0.01,0.02,0.05 --total-delta 1e-5 --rel-width 0.001  # epsilon at total delta
    mpdp compose --plot fig3.png                                               # 000's Figure 3

A single epsilon with ``-k`` is the homogeneous case (exact optimum of Theorem 3.3); a list is the
heterogeneous case (exact where tractable, else certified bounds; ``method`` says which ran).
--delta-slack defaults to 1e-6 (as ``mpdp simulate``); --total-delta D instead asks for the epsilon at
a total delta D (the slack is what the mechanisms' own deltas leave of D). Certified bounds are refined to
a relative width (--rel-width, default 0.5%) within --time-limit seconds, or computed once at a given
--resolution; the bracket [lower, upper] is printed. In JSON an infinite epsilon is the string "inf".
"""

from __future__ import annotations

import argparse

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.privacy.composition import BOUND_NAMES, CompositionResult
from mpdp.analysis.privacy.heterogeneous import DEFAULT_REL_WIDTH
from mpdp.parties.api.composition import compose
from mpdp.parties.api.value_lists import parse_list
from mpdp.parties.cli.args import add_time_limit, emit, option_names, papers_epilog, plain_text
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK
from mpdp.parties.session.output_paths import plot_file
from mpdp.protocols.errors import ParameterError

__all__ = ["register", "run"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compose",
        description=plain_text(__doc__), epilog=papers_epilog("000"),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--epsilon", help="one epsilon (with -k) or a comma-separated list (VALUE*COUNT ok)")
    parser.add_argument("--delta", default="0", help="one delta for all, or a list as long as --epsilon (default 0)")
    parser.add_argument("-k", type=int, help="number of compositions of a single (epsilon, delta)")
    parser.add_argument("--delta-slack", type=float, default=None,
                        help=f"delta_tilde in [0, 1): the extra delta spent (default {DEFAULT_DELTA_SLACK:g})")
    parser.add_argument("--total-delta", type=float, default=None, metavar="D",
                        help="instead of --delta-slack: the epsilon of the composition at total delta D")
    parser.add_argument("--rel-width", type=float, default=DEFAULT_REL_WIDTH,
                        help=f"heterogeneous bounds: refine until (upper - lower) / upper <= this "
                             f"(default {DEFAULT_REL_WIDTH:g})")
    parser.add_argument("--resolution", type=float, default=None, metavar="H",
                        help="heterogeneous bounds: one pass at lattice step H nats (default: adaptive)")
    add_time_limit(parser, "refining the heterogeneous bounds (the bracket reached is reported)")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw the privacy regions of Theorems 3.1-3.3 for the k-fold composition of the given "
                             "(epsilon, delta) (alone: 000 Figure 3, 30-fold (0.1, 0.001)) to FILE "
                             "(.png, .pdf, .svg, ...)")
    parser.set_defaults(run=run)


def _text(result: CompositionResult) -> str:
    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.10g}"

    lines = [
        f"k = {result.k}, delta_slack = {result.delta_slack:g}, delta_total = {result.delta_total:.6g}",
        f"epsilon_tilde ({result.method}) = {fmt(result.epsilon_tilde)}",
    ]
    if result.method == "bounds":
        lines.append(f"  certified: {fmt(result.lower)} <= optimum <= {fmt(result.upper)} (gap {fmt(result.gap)},"
                     f" relative {fmt(None if not result.upper else (result.gap or 0.0) / result.upper)})")
    lines.extend(f"  {name:<12} {fmt(result.bounds.get(name))}" for name in BOUND_NAMES)
    lines.append(f"  ({result.detail})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Compute (with --epsilon) and/or plot (with --plot); print text or JSON. Returns 0."""
    plot = None if args.plot is None else plot_file(args.plot)
    if args.epsilon is None and plot is None:
        raise ParameterError("--epsilon", None, "one epsilon (with -k) or a list (or only --plot FILE)")
    epsilons = parse_list(args.epsilon, "--epsilon") if args.epsilon is not None else [0.1]
    deltas = parse_list(args.delta, "--delta") if args.epsilon is not None else [0.001]
    if plot is not None and (len(epsilons) > 1 or len(deltas) > 1 or (args.epsilon is not None and args.k is None)):
        raise ParameterError("--plot", args.plot, "a plot of k-fold homogeneous composition: one "
                             "--epsilon, one --delta and -k (or --plot alone for 000's Figure 3)")
    with option_names(epsilon=("--epsilon", args.epsilon), delta=("--delta", args.delta), k=("-k", args.k),
                      delta_slack=("--delta-slack", args.delta_slack), total_delta=("--total-delta", args.total_delta),
                      rel_width=("--rel-width", args.rel_width), resolution=("--resolution", args.resolution),
                      time_limit=("--time-limit", args.time_limit)):
        result = compose(epsilons if len(epsilons) > 1 else epsilons[0], deltas if len(deltas) > 1 else deltas[0],
                         args.k if args.epsilon is not None else 30, args.delta_slack, total_delta=args.total_delta,
                         rel_width=args.rel_width, resolution=args.resolution, time_limit=args.time_limit)
    document = result.to_dict() if args.epsilon is not None else {}
    if plot is not None:
        save_figure(result.plot(), plot)
        document["plot"] = str(plot)
    emit(args, document)
    if args.epsilon is not None:
        print(_text(result.result))
    if plot is not None:
        print(f"wrote {document['plot']}")
    return 0
