"""``mpdp compose``: the privacy of k composed (epsilon, delta)-DP mechanisms (000, Theorems 3.1-3.4).

    mpdp compose --epsilon 0.1 --delta 0.001 -k 30 --delta-slack 1e-5 [--json]
    mpdp compose --epsilon 0.1,0.5,0.5 --delta 0 --delta-slack 1e-6 --json   # heterogeneous
    mpdp compose --plot fig3.png                                               # 000's Figure 3

A single epsilon with ``-k`` is the homogeneous case (exact optimum of Theorem 3.3); a list is the
heterogeneous case (exact where tractable, else certified bounds; ``method`` says which ran).
"""

from __future__ import annotations

import argparse
import json

from analysis.composition import BOUND_NAMES, CompositionResult, compose_homogeneous
from analysis.composition_plot import plot_figure_3
from analysis.heterogeneous import compose_heterogeneous
from protocols.errors import ParameterError

__all__ = ["register", "run"]


def _floats(text: str, name: str) -> list[float]:
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise ParameterError(name, text, "a comma-separated list of numbers, e.g. 0.1,0.5") from None
    if not values:
        raise ParameterError(name, text, "at least one number")
    return values


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "compose",
        help="privacy of k composed (epsilon, delta)-DP mechanisms: exact optimum and bounds",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--epsilon", help="one epsilon (with -k) or a comma-separated list")
    parser.add_argument("--delta", default="0", help="one delta for all, or a list as long as --epsilon (default 0)")
    parser.add_argument("-k", type=int, help="number of compositions of a single (epsilon, delta)")
    parser.add_argument("--delta-slack", type=float, help="delta_tilde in [0, 1]: the extra delta spent")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="FILE",
                        help="draw the regions of Theorems 3.1-3.3 (000 Figure 3; default 30-fold (0.1, 0.001))")
    parser.set_defaults(run=run)


def _compute(args: argparse.Namespace) -> CompositionResult:
    if args.epsilon is None or args.delta_slack is None:
        raise ParameterError("--epsilon/--delta-slack", None, "both given (or only --plot)")
    epsilons = _floats(args.epsilon, "--epsilon")
    deltas = _floats(args.delta, "--delta")
    if len(epsilons) == 1 and len(deltas) == 1:
        return compose_homogeneous(epsilons[0], deltas[0], 1 if args.k is None else args.k, args.delta_slack)
    if args.k is not None and args.k != len(epsilons):
        raise ParameterError("-k", args.k, f"omitted or equal to the length of --epsilon ({len(epsilons)})")
    if len(epsilons) == 1:
        raise ParameterError("--delta", args.delta, "one value when --epsilon has one value")
    return compose_heterogeneous(epsilons, deltas if len(deltas) > 1 else deltas[0], args.delta_slack)


def _text(result: CompositionResult) -> str:
    def fmt(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.10g}"

    lines = [
        f"k = {result.k}, delta_slack = {result.delta_slack:g}, delta_total = {result.delta_total:.6g}",
        f"epsilon_tilde ({result.method}) = {fmt(result.epsilon_tilde)}",
    ]
    if result.method == "bounds":
        lines.append(f"  certified: {fmt(result.lower)} <= optimum <= {fmt(result.upper)} (gap {fmt(result.gap)})")
    lines.extend(f"  {name:<12} {fmt(result.bounds.get(name))}" for name in BOUND_NAMES)
    lines.append(f"  ({result.detail})")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Compute (and/or plot); print text or JSON. Returns 0."""
    if args.plot:
        epsilon = _floats(args.epsilon, "--epsilon")[0] if args.epsilon else 0.1
        delta = _floats(args.delta, "--delta")[0] if args.epsilon else 0.001
        path = plot_figure_3(args.plot, epsilon, delta, 30 if args.k is None else args.k)
        if args.delta_slack is None:
            print(json.dumps({"plot": str(path)}) if args.json else f"wrote {path}")
            return 0
    result = _compute(args)
    print(json.dumps(result.as_dict()) if args.json else _text(result))
    return 0
