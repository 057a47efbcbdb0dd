"""``mpdp mechanism``: the optimal (epsilon, delta)-DP mechanism for a binary function on a graph (001).

Prints P(output red) for every vertex (or JSON with ``feasible``, ``probabilities`` and, for lines,
``transition``). An infeasible boundary is an answer (exit 0, ``feasible: false`` and the edge that
cannot be satisfied), not an error.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from parties.graph_file import load_graph_file
from protocols.coloring_mechanisms import GraphMechanism, optimal_mechanism
from protocols.errors import ParameterError
from protocols.line_mechanisms import (balanced_boundary_value, balanced_mechanism,
                                       boundary_homogeneous_mechanism, line_mechanism)
from protocols.majority_mechanism import central_majority_mechanism
from protocols.mechanisms import check_delta, check_epsilon

__all__ = ["register"]

EPILOG = """\
graphs:
  FILE          JSON with vertices, edges, coloring (B/R) and optionally boundary, eps, delta
  line:NB,NR    the (NB, NR)-line, nodes "1".."NB+NR", 1..NB blue; --boundary fixes R at node NB
  majority:N    majority of N voters; vertices are the counts of YES votes (the hypercube collapses
                to the line without loss, Theorem 3); default: the average-optimal mechanism
mechanisms: the file's boundary -> Theorem 2; --boundary R -> R on all of dB (Theorems 3-5);
  --balanced -> the balanced mechanism (best worst-case accuracy).
examples:
  mpdp mechanism --graph line:4,3 --epsilon 0.2624 --delta 0.1 --boundary 0.8
  mpdp mechanism --graph majority:3 --epsilon 0.6931 --delta 0.1 --balanced --json
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``mechanism`` sub-command."""
    p = subparsers.add_parser("mechanism", help="optimal DP mechanism for a binary function on a graph",
                              description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", required=True, help="FILE, line:NB,NR or majority:N")
    p.add_argument("--epsilon", type=float, help="epsilon >= 0 (default: the file's eps)")
    p.add_argument("--delta", type=float, help="delta in [0, 1) (default: the file's delta, else 0)")
    p.add_argument("--boundary", type=float, help="P(output red) on the blue boundary dB")
    p.add_argument("--balanced", action="store_true", help="the optimal balanced mechanism")
    p.add_argument("--plot", metavar="FILE", help="write a PNG of P(output red) per vertex")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(run=run)


def _privacy(args: argparse.Namespace, eps: float | None, delta: float | None) -> tuple[float, float]:
    eps = args.epsilon if args.epsilon is not None else eps
    if eps is None:
        raise ParameterError("--epsilon", None, "a number >= 0 (the graph file has no eps)")
    delta = args.delta if args.delta is not None else (delta or 0.0)
    return check_epsilon(eps, "--epsilon"), check_delta(delta, "--delta")


def _ints(spec: str, count: int) -> list[int]:
    try:
        values = [int(v) for v in spec.split(",")]
    except ValueError:
        values = []
    if len(values) != count or min(values) < 1:
        raise ParameterError("--graph", spec, "line:NB,NR or majority:N with integers >= 1")
    return values


def _solve(args: argparse.Namespace) -> tuple[dict, GraphMechanism | None]:
    """The JSON document and (for graphs and lines) the mechanism."""
    if args.balanced and args.boundary is not None:
        raise ParameterError("--balanced", True, "either --balanced or --boundary, not both")
    spec = args.graph
    if spec.startswith("line:"):
        n_blue, n_red = _ints(spec[5:], 2)
        eps, delta = _privacy(args, None, None)
        if args.boundary is None and not args.balanced:
            raise ParameterError("--boundary", None, "a probability for node NB (or --balanced)")
        r = balanced_boundary_value(eps, delta) if args.balanced else args.boundary
        line = line_mechanism(n_blue, n_red, r, eps, delta)
        mech = line.as_graph_mechanism()
        return {"feasible": True, "probabilities": mech.probabilities(), "transition": line.transition}, mech
    if spec.startswith("majority:"):
        (voters,) = _ints(spec[9:], 1)
        eps, delta = _privacy(args, None, None)
        maj = central_majority_mechanism(voters, eps, delta, red_at_boundary=args.boundary,
                                         criterion="worst-case" if args.balanced else "average")
        red = 1.0 - maj.release_one
        return {"feasible": True, "vertices": "count of YES votes",
                "probabilities": {str(c): float(p) for c, p in enumerate(red)},
                "transition": maj.line.transition, "average_accuracy": maj.average_accuracy(),
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
    doc: dict = {"feasible": mech.feasible, "probabilities": mech.probabilities()}
    if not mech.feasible:
        doc["violated_edge"] = list(mech.violated_edge)
    return doc, mech


def _plot(doc: dict, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(doc["probabilities"])
    fig, ax = plt.subplots(figsize=(max(4.0, min(0.3 * len(names), 14.0)), 3.5))
    ax.plot(range(len(names)), list(doc["probabilities"].values()), "o-", ms=3)
    if len(names) <= 40:
        ax.set_xticks(range(len(names)), names, rotation=90 if len(names) > 12 else 0)
    ax.set_ylabel("P(output red)")
    ax.set_xlabel(doc.get("vertices", "vertex"))
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def run(args: argparse.Namespace) -> int:
    """Solve, then print a table or JSON; exit 0 also when the boundary is infeasible."""
    doc, _ = _solve(args)
    if args.plot and doc["feasible"]:
        _plot(doc, args.plot)
    if args.json:
        print(json.dumps(doc, indent=1))
        return 0
    if not doc["feasible"]:
        print("infeasible: no (epsilon, delta)-DP mechanism has these boundary values; "
              f"edge {'-'.join(doc['violated_edge'])} cannot be satisfied")
        return 0
    if "transition" in doc:
        print(f"transition parameter tau = {doc['transition']}")
    width = max(len(v) for v in doc["probabilities"])
    print(f"{doc.get('vertices', 'vertex'):>{width}}  P(output red)")
    for v, p in doc["probabilities"].items():
        print(f"{v:>{width}}  {np.round(p, 12):.12g}")
    return 0
