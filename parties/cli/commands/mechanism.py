"""``mpdp mechanism``: the optimal (epsilon, delta)-DP mechanism for a binary function on a graph (001).

Prints P(output red) for every vertex (or JSON with ``feasible``, ``probabilities``, ``red`` (what
red means) and, for lines and majority, ``transition``: tau of 001 Theorem 4, the last blue step still in
the initial regime, null when there is none). For majority:N, red is output 0, "the majority votes NO".
An infeasible boundary is an answer (exit 0, ``feasible: false`` and the edge that cannot be satisfied),
not an error. JSON is strict: an infinite value is the string "inf".
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from mpdp.parties.cli.args import papers_epilog, plot_file, to_json_text
from mpdp.parties.cli.graph_file import load_graph_file
from mpdp.protocols.coloring_mechanisms import GraphMechanism, optimal_mechanism
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.line_mechanisms import (
    balanced_boundary_value,
    balanced_mechanism,
    boundary_homogeneous_mechanism,
    line_mechanism,
)
from mpdp.protocols.majority_mechanism import central_majority_mechanism
from mpdp.protocols.mechanisms import check_delta, check_epsilon

__all__ = ["MAJORITY_RED", "register"]

#: What "red" is for majority:N (JSON ``red``, the table header).
MAJORITY_RED = "output 0 (majority NO)"

EPILOG = """\
graphs:
  FILE          JSON with vertices, edges, coloring (B/R) and optionally boundary, eps, delta
  line:NB,NR    the (NB, NR)-line, nodes "1".."NB+NR", 1..NB blue; --boundary fixes R at node NB
                (NB + NR <= 2*10^6)
  majority:N    majority of N voters (N <= 10^6); vertices are the counts of YES votes (the hypercube
                collapses to the line without loss, Theorem 3); red = output 0, "majority NO";
                default: the average-optimal mechanism
mechanisms: the file's boundary -> Theorem 2; --boundary R -> R on all of dB (Theorems 3-5);
  --balanced -> the balanced mechanism (best worst-case accuracy).
examples:
  mpdp mechanism --graph line:4,3 --epsilon 0.2624 --delta 0.1 --boundary 0.8
  mpdp mechanism --graph majority:3 --epsilon 0.6931 --delta 0.1 --balanced --json
""" + papers_epilog("001")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``mechanism`` sub-command."""
    p = subparsers.add_parser("mechanism", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", required=True, help="FILE, line:NB,NR or majority:N")
    p.add_argument("--epsilon", type=float, help="epsilon >= 0 (default: the file's eps)")
    p.add_argument("--delta", type=float, help="delta in [0, 1) (default: the file's delta, else 0)")
    p.add_argument("--boundary", type=float, help="P(output red) on the blue boundary dB")
    p.add_argument("--balanced", action="store_true", help="the optimal balanced mechanism")
    p.add_argument("--plot", metavar="FILE", help="draw P(output red) per vertex to FILE (.png, .pdf, .svg, ...)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def _privacy(args: argparse.Namespace, eps: float | None, delta: float | None) -> tuple[float, float]:
    eps = args.epsilon if args.epsilon is not None else eps
    if eps is None:
        raise ParameterError("--epsilon", None, "a number >= 0 (the graph file has no eps)")
    delta = args.delta if args.delta is not None else (delta or 0.0)
    return check_epsilon(eps, "--epsilon"), check_delta(delta, "--delta")


def _ints(spec: str, count: int) -> list[int]:
    """The ``count`` integers after ``line:``/``majority:`` in ``spec`` (the whole --graph value)."""
    try:
        values = [int(v) for v in spec.split(":", 1)[1].split(",")]
    except ValueError:
        values = []
    if len(values) != count or min(values) < 1:
        raise ParameterError("--graph", spec, "line:NB,NR or majority:N with integers >= 1")
    return values


def _transition(tau: int) -> int | None:
    """tau of 001 Theorem 4 for JSON: None when no blue step is in the initial regime (tau = -1)."""
    return None if tau < 0 else int(tau)


def _solve(args: argparse.Namespace) -> tuple[dict, GraphMechanism | None]:
    """The JSON document and (for graphs and lines) the mechanism; a size limit names --graph."""
    try:
        return _solve_graph(args)
    except SizeLimitError as exc:
        raise SizeLimitError("--graph", args.graph, exc.limit, exc.alternative) from None


def _solve_graph(args: argparse.Namespace) -> tuple[dict, GraphMechanism | None]:
    if args.balanced and args.boundary is not None:
        raise ParameterError("--balanced", True, "either --balanced or --boundary, not both")
    spec = args.graph
    if spec.startswith("line:"):
        n_blue, n_red = _ints(spec, 2)
        eps, delta = _privacy(args, None, None)
        if args.boundary is None and not args.balanced:
            raise ParameterError("--boundary", None, "a probability for node NB (or --balanced)")
        r = balanced_boundary_value(eps, delta) if args.balanced else args.boundary
        line = line_mechanism(n_blue, n_red, r, eps, delta)
        mech = line.as_graph_mechanism()
        return {"feasible": True, "red": "color R", "probabilities": mech.probabilities(),
                "transition": _transition(line.transition)}, mech
    if spec.startswith("majority:"):
        (voters,) = _ints(spec, 1)
        eps, delta = _privacy(args, None, None)
        maj = central_majority_mechanism(voters, eps, delta, red_at_boundary=args.boundary,
                                         criterion="worst-case" if args.balanced else "average")
        red = 1.0 - maj.release_one
        return {"feasible": True, "vertices": "count of YES votes", "red": MAJORITY_RED,
                "probabilities": {str(c): float(p) for c, p in enumerate(red)},
                "transition": _transition(maj.line.transition), "average_accuracy": maj.average_accuracy(),
                "worst_case_accuracy": maj.worst_case_accuracy()}, None
    file = load_graph_file(spec)
    graph = file.graph()
    eps, delta = _privacy(args, file.eps, file.delta)
    if args.balanced:
        mech = balanced_mechanism(graph, eps, delta)
    elif args.boundary is not None:
        mech = boundary_homogeneous_mechanism(graph, args.boundary, eps, delta)
    elif file.boundary is not None:
        mech = optimal_mechanism(graph, file.boundary, eps, delta)
    else:
        raise ParameterError("--boundary", None, "a value (or --balanced, or 'boundary' in the file)")
    doc: dict = {"feasible": mech.feasible, "red": "color R", "probabilities": mech.probabilities()}
    if mech.violated_edge is not None:  # set exactly when infeasible
        doc["violated_edge"] = list(mech.violated_edge)
    return doc, mech


def _plot(doc: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["probabilities"])
    fig, ax = plt.subplots(figsize=(max(4.0, min(0.3 * len(names), 14.0)), 3.5))
    ax.plot(range(len(names)), list(doc["probabilities"].values()), "o-", ms=3)
    if len(names) <= 40:
        ax.set_xticks(range(len(names)), names, rotation=90 if len(names) > 12 else 0)
    ax.set_ylabel(f"P(output red = {doc['red']})")
    ax.set_xlabel(doc.get("vertices", "vertex"))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    """Solve, then print a table or JSON; exit 0 also when the boundary is infeasible."""
    plot = None if args.plot is None else plot_file(args.plot)
    doc, _ = _solve(args)
    if plot is not None and doc["feasible"]:
        _plot(doc, plot)
        doc["plot"] = str(plot)
    if args.json:
        print(to_json_text(doc, indent=1))
        return 0
    if not doc["feasible"]:
        print("infeasible: no (epsilon, delta)-DP mechanism has these boundary values; "
              f"edge {'-'.join(doc['violated_edge'])} cannot be satisfied")
        return 0
    if "transition" in doc:
        tau = doc["transition"]
        print("transition parameter tau = " + ("none (no blue step in the initial regime)" if tau is None
                                               else str(tau)))
    width = max(len(v) for v in doc["probabilities"])
    print(f"{doc.get('vertices', 'vertex'):>{width}}  P(output red = {doc['red']})")
    for v, p in doc["probabilities"].items():
        print(f"{v:>{width}}  {np.round(p, 12):.12g}")
    if "plot" in doc:
        print(f"wrote {doc['plot']}")
    return 0
