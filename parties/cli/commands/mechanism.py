"""``mpdp mechanism``: the optimal (epsilon, delta)-DP mechanism for a binary function on a graph (001).

Prints P(output red) for every vertex (or JSON with ``feasible``, ``probabilities``, ``red`` (what
red means) and, for lines and functions with one color change, ``transition``: tau of 001 Theorem 4, the
last blue step still in the initial regime, null when there is none). For a function of N voters
(majority:N, and:N, or:N, xor:N, threshold:T,N) red is output 0 ("the majority votes NO"), the vertices are
the counts of YES votes, and the JSON also has ``function``, ``average_accuracy`` and ``worst_case_accuracy``.
An infeasible boundary is an answer (exit 0, ``feasible: false`` and the edge that cannot be satisfied),
not an error. JSON is strict: an infinite value is the string "inf".
"""

from __future__ import annotations

import argparse

import numpy as np

from mpdp.analysis.plot_style import save_figure
from mpdp.parties.api.mechanisms import MAJORITY_RED, mechanism
from mpdp.parties.cli.args import emit, option_names, papers_epilog
from mpdp.parties.session.output_paths import plot_file

__all__ = ["MAJORITY_RED", "register"]

EPILOG = """\
graphs:
  FILE          JSON with vertices, edges, coloring (B/R) and optionally boundary, eps, delta
  line:NB,NR    the (NB, NR)-line, nodes "1".."NB+NR", 1..NB blue; --boundary fixes R at node NB
                (NB + NR <= 2*10^6)
  majority:N    majority of N voters (N <= 10^6); vertices are the counts of YES votes (the hypercube
                collapses to the line without loss, Theorem 3); red = output 0, "majority NO";
                default: the average-optimal mechanism
  and:N, or:N   all / at least one of N voters YES (as majority:N: the count line, red = output 0)
  threshold:T,N at least T of N voters YES (--function threshold:T); --boundary fixes P(output 0) at c = T
  xor:N         parity of N voters: every count changes color; the optimum is constant in P(output =
                xor) = (e^eps + delta)/(1 + e^eps), the same for --balanced (no --boundary)
mechanisms: the file's boundary -> Theorem 2; --boundary R -> R on all of dB (Theorems 3-5);
  --balanced -> the balanced mechanism (best worst-case accuracy).
examples:
  mpdp mechanism --graph line:4,3 --epsilon 0.2624 --delta 0.1 --boundary 0.8
  mpdp mechanism --graph majority:3 --epsilon 0.6931 --delta 0.1 --balanced --json
  mpdp mechanism --graph threshold:2,5 --epsilon 1 --balanced --plot threshold.png
  mpdp mechanism --graph xor:4 --epsilon 1 --delta 0.05
""" + papers_epilog("001")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``mechanism`` sub-command."""
    p = subparsers.add_parser("mechanism", description=__doc__.split("\n\n")[0].split(": ", 1)[1],
                              epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--graph", required=True,
                   help="FILE, line:NB,NR, majority:N, and:N, or:N, xor:N or threshold:T,N (see below)")
    p.add_argument("--epsilon", type=float, help="epsilon >= 0 (default: the file's eps)")
    p.add_argument("--delta", type=float, help="delta in [0, 1) (default: the file's delta, else 0)")
    p.add_argument("--boundary", type=float, help="P(output red) on the blue boundary dB")
    p.add_argument("--balanced", action="store_true", help="the optimal balanced mechanism")
    p.add_argument("--plot", metavar="FILE", help="draw P(output red) per vertex to FILE (.png, .pdf, .svg, ...)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Solve, then print a table or JSON; exit 0 also when the boundary is infeasible."""
    plot = None if args.plot is None else plot_file(args.plot)
    with option_names(graph=("--graph", args.graph), epsilon=("--epsilon", args.epsilon),
                      delta=("--delta", args.delta), boundary=("--boundary", args.boundary),
                      balanced=("--balanced", args.balanced)):
        result = mechanism(args.graph, args.epsilon, args.delta, args.boundary, args.balanced)
    doc = result.to_dict()
    if plot is not None and doc["feasible"]:
        save_figure(result.plot(), plot)
        doc["plot"] = str(plot)
    emit(args, doc)
    if not doc["feasible"]:
        print("infeasible: no (epsilon, delta)-DP mechanism has these boundary values; "
              f"edge {'-'.join(doc['violated_edge'])} cannot be satisfied")
        return 0
    if "transition" in doc:
        tau = doc["transition"]
        print("transition parameter tau = " + ("none (no blue step in the initial regime)" if tau is None
                                               else str(tau)))
    rounded = np.round(np.fromiter(doc["probabilities"].values(), np.float64), 12)  # one call: N = 10^6 in 0.1 s
    rows = _runs([(v, f"{p:.12g}") for v, p in zip(doc["probabilities"], rounded.tolist())])
    width = max(len(v) for v, _ in rows)
    print(f"{doc.get('vertices', 'vertex'):>{width}}  P(output red = {doc['red']})")
    for v, text in rows:
        print(f"{v:>{width}}  {text}")
    if "plot" in doc:
        print(f"wrote {doc['plot']}")
    return 0


def _runs(rows: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """``(vertex, value)`` rows with runs of consecutive counts that print the same value joined as
    ``first-last`` (a count line of a million voters is a few lines, not a million); named vertices as they are."""
    joined: list[tuple[str, str, str]] = []
    for vertex, text in rows:
        if joined and joined[-1][2] == text and vertex.isdigit() and joined[-1][1].isdigit() \
                and int(vertex) == int(joined[-1][1]) + 1:
            joined[-1] = (joined[-1][0], vertex, text)
        else:
            joined.append((vertex, vertex, text))
    return [(first if first == last else f"{first}-{last}", text) for first, last, text in joined]
