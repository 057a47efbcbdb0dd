"""``mpdp.mechanism``: the optimal (epsilon, delta)-DP mechanism for a binary function on a graph (001).

``graph`` is ``line:NB,NR`` (the (NB, NR)-line), a binary symmetric function of N voters -- ``majority:N``,
``and:N``, ``or:N``, ``xor:N``, ``threshold:T,N`` (f = 1 iff at least T YES votes, as ``--function
threshold:T``) -- whose vertices are the counts of YES votes (the hypercube collapses to the count line
without loss, :mod:`mpdp.protocols.colorings.majority_mechanism`; red = output 0, e.g. "majority NO"), or a JSON graph
file (vertices, edges, coloring, optionally boundary, eps, delta). The result's document is ``mpdp mechanism
--json``: ``feasible``, ``probabilities`` (P(output red) per vertex), ``red`` and, for lines and functions
with one color change (all but xor and constants), ``transition`` (tau of 001 Theorem 4); a function also
has ``function``, ``average_accuracy`` and ``worst_case_accuracy``.

Example:
    >>> import mpdp
    >>> r = mpdp.mechanism("majority:3", epsilon=0.6931, delta=0.1, balanced=True)
    >>> [round(p, 3) for p in r.probabilities.values()]
    [0.9, 0.7, 0.3, 0.1]
    >>> xor = mpdp.mechanism("xor:3", epsilon=1.0986122886681098)  # e^eps = 3: P(output = xor) = 3/4
    >>> [round(p, 3) for p in xor.probabilities.values()], "transition" in xor.to_dict()
    ([0.75, 0.25, 0.75, 0.25], False)
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mpdp.parties.api.graph_file import load_graph_file
from mpdp.parties.api.result import Result, strict_document
from mpdp.protocols.colorings.coloring_mechanisms import GraphMechanism, optimal_mechanism
from mpdp.protocols.colorings.line_mechanisms import (
    balanced_boundary_value,
    balanced_mechanism,
    boundary_homogeneous_mechanism,
    line_mechanism,
)
from mpdp.protocols.colorings.majority_mechanism import CentralMechanism, central_mechanism
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["COUNT_GRAPHS", "MAJORITY_RED", "Mechanism", "mechanism"]

#: What "red" is for majority:N (JSON ``red``, the table header); another function f: "output 0 (f = 0)".
MAJORITY_RED = "output 0 (majority NO)"

#: The functions ``NAME:N`` (``threshold:T,N``) solved on the count line by
#: :func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`.
COUNT_GRAPHS = ("majority", "and", "or", "xor", "threshold")

_GRAPHS = "line:NB,NR, majority:N, and:N, or:N, xor:N or threshold:T,N"


@dataclass(frozen=True)
class _Request:
    graph: str
    epsilon: float | None
    delta: float | None
    boundary: float | None
    balanced: bool


@dataclass(frozen=True, repr=False)
class Mechanism(Result):
    """The optimal mechanism (``mpdp mechanism --json``).

    Attributes:
        graph: the graph as given. document: the ``--json`` document (:meth:`to_dict`).
        solved: the mechanism on a graph file's vertices (None for ``line:`` and the functions, whose
            vertices lie on a line in :attr:`probabilities` order).
        central: a function's mechanism on the count line (None for a line or a graph file).
    """

    graph: str
    document: dict[str, Any]
    solved: GraphMechanism | None
    central: CentralMechanism | None = None

    @property
    def feasible(self) -> bool:
        """False when no (epsilon, delta)-DP mechanism has the boundary values (001 Theorem 2)."""
        return bool(self.document["feasible"])

    @property
    def probabilities(self) -> dict[str, float]:
        """P(output red) by vertex name (empty-valued for an infeasible boundary)."""
        return dict(self.document["probabilities"])

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per vertex: its name and P(output red)."""
        return [{"vertex": v, "red_probability": p} for v, p in self.document["probabilities"].items()]

    def summary(self) -> str:
        if not self.feasible:
            return f"{self.graph}: infeasible, edge {'-'.join(self.document['violated_edge'])} cannot be satisfied"
        return f"{self.graph}: {len(self.document['probabilities'])} vertices, red = {self.document['red']}"

    def draw(self, ax: Axes | None) -> Figure:
        """A line or a function: P(output red) against the vertex along the line (gid ``line``; a
        function's count line joins neighbouring counts c, c + 1, the image of the hypercube's edges), and
        for a function P(output = f(c)) (gid ``truthful``: flat for xor, whose optimum is the constant
        (e^eps + delta)/(1 + e^eps)); a graph file: the graph in a force-directed layout, vertices filled by
        P(output red), an infeasible edge highlighted (:func:`mpdp.analysis.figures.graph_figures.draw_colored_graph`),
        never joined in name order."""
        if self.solved is not None:
            from mpdp.analysis.figures.graph_figures import draw_colored_graph

            mech = self.solved
            title = f"optimal mechanism on {self.graph}: P(output red)"
            if mech.feasible:
                return draw_colored_graph(mech.graph, mech.red_probability, ax=ax, title=title)
            return draw_colored_graph(mech.graph, None, ax=ax, violated=mech.violated_edge,
                                      title=f"{self.graph}: infeasible, edge {'-'.join(mech.violated_edge or ())}")
        from mpdp.analysis.plot_style import new_axes

        names = list(self.document["probabilities"])
        figure, ax = new_axes(ax, (max(4.0, min(0.3 * len(names), 14.0)), 3.5))
        red = f"P(output red = {self.document['red']})"
        ax.plot(range(len(names)), list(self.document["probabilities"].values()), "o-", ms=3, gid="line", label=red)
        if len(names) <= 40:
            ax.set_xticks(range(len(names)), names, rotation=90 if len(names) > 12 else 0)
        if self.central is not None:
            ax.plot(range(len(names)), self.central.truthful, "s--", ms=3, gid="truthful",
                    label=f"P(output = {self.central.function}(c))")
            ax.legend(fontsize=8)
        ax.set_ylabel("probability" if self.central is not None else red)
        ax.set_xlabel(self.document.get("vertices", "vertex on the line"))
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"optimal mechanism on {self.graph}", fontsize=9)
        ax.grid(alpha=0.3)
        return figure


def mechanism(graph: str | os.PathLike[str], epsilon: float | None = None, delta: float | None = None,
              boundary: float | None = None, balanced: bool = False) -> Mechanism:
    """The optimal (epsilon, delta)-DP mechanism on ``graph`` (001): Theorem 2 for a graph file's boundary
    values, Theorems 3-5 for one value R on the whole blue boundary (``boundary``), or the balanced
    mechanism (``balanced=True``, the best worst-case accuracy). An infeasible boundary is an answer
    (``feasible`` False, ``violated_edge`` in the document), not an error.

    Args:
        graph: ``line:NB,NR`` (NB + NR <= 2*10^6); ``majority:N``, ``and:N``, ``or:N``, ``xor:N`` or
            ``threshold:T,N`` (N <= 10^6 voters, T >= 0; :func:`mpdp.protocols.colorings.majority_mechanism
            .central_mechanism`, average-optimal unless ``boundary`` or ``balanced``); or a JSON graph file
            path.
        epsilon: >= 0 in nats (default: the file's eps). delta: in [0, 1) (default: the file's, else 0).
        boundary: P(output red) on the blue boundary (a function: P(output 0 | c = T), T its first count
            with f(c) = f(N); none for xor or a constant). balanced: the optimal balanced mechanism (a
            function: the best worst-case accuracy).

    Returns:
        :class:`Mechanism`.

    Raises:
        ParameterError: a bad graph spec (also one that is no str or path), epsilon, delta or boundary, or
            both boundary and balanced.
        SizeLimitError: a graph too large.

    Example:
        >>> mechanism("line:4,3", epsilon=0.2624, delta=0.1, boundary=0.8).document["transition"]
        1
    """
    if isinstance(graph, os.PathLike):
        graph = os.fspath(graph)
    if not isinstance(graph, str):
        raise ParameterError("graph", graph, f"{_GRAPHS} (a str), or a graph file's path")
    doc, solved = _solve(_Request(graph, epsilon, delta, boundary, balanced))
    inputs = {"graph": graph, "epsilon": epsilon, "delta": delta, "boundary": boundary, "balanced": balanced}
    document = strict_document(doc, "mechanism", inputs)
    if isinstance(solved, CentralMechanism):
        return Mechanism(graph, document, None, solved)
    return Mechanism(graph, document, solved if not graph.startswith("line:") else None)


def _privacy(request: _Request, eps: float | None, delta: float | None, *,
             eps_given_by_file: bool = False) -> tuple[float, float]:
    eps = request.epsilon if request.epsilon is not None else eps
    if eps is None:
        source = "the graph file gives no eps" if eps_given_by_file else f"{request.graph} gives none of its own"
        raise ParameterError("epsilon", None, f"a number >= 0 ({source})")
    delta = request.delta if request.delta is not None else (delta or 0.0)
    return check_epsilon(eps, "epsilon"), check_delta(delta, "delta")


def _ints(spec: str, count: int, lowest: int = 1) -> list[int]:
    """The ``count`` integers after ``line:``/``majority:``/... in ``spec`` (the whole --graph value), the
    first at least ``lowest`` (threshold's T >= 0), the others >= 1."""
    try:
        values = [int(v) for v in spec.split(":", 1)[1].split(",")]
    except ValueError:
        values = []
    if len(values) != count or values[0] < lowest or min(values[1:], default=1) < 1:
        raise ParameterError("graph", spec, f"{_GRAPHS} with integers >= 1 (T >= 0), or a graph file")
    return values


def _transition(tau: int) -> int | None:
    """tau of 001 Theorem 4 for JSON: None when no blue step is in the initial regime (tau = -1)."""
    return None if tau < 0 else int(tau)


def _solve(request: _Request) -> tuple[dict[str, Any], GraphMechanism | CentralMechanism | None]:
    """The JSON document and (for graphs and lines) the mechanism; a size limit names the graph."""
    try:
        return _solve_graph(request)
    except SizeLimitError as exc:
        raise SizeLimitError("graph", request.graph, exc.limit, exc.alternative) from None


def _solve_function(request: _Request, name: str) -> tuple[dict[str, Any], CentralMechanism]:
    """A binary symmetric function of N voters on its count line (``central_mechanism``); red = output 0."""
    if name == "threshold":
        threshold, voters = _ints(request.graph, 2, lowest=0)
        name = f"threshold:{threshold}"
    else:
        (voters,) = _ints(request.graph, 1)
    eps, delta = _privacy(request, None, None)
    try:
        central = central_mechanism(name, voters, eps, delta, red_at_boundary=request.boundary,
                                    criterion="worst-case" if request.balanced else "average")
    except ParameterError as exc:
        if exc.name != "red_at_boundary":
            raise
        raise ParameterError("boundary", request.boundary, exc.allowed, exc.hint) from None
    doc: dict[str, Any] = {"feasible": True, "function": name, "vertices": "count of YES votes",
                           "red": MAJORITY_RED if name == "majority" else f"output 0 ({name} = 0)",
                           "probabilities": {str(c): float(1.0 - p) for c, p in enumerate(central.release_one)}}
    if central.line is not None:  # one color change: the boundary line's tau
        doc["transition"] = _transition(central.line.transition)
    doc.update(average_accuracy=central.average_accuracy(), worst_case_accuracy=central.worst_case_accuracy())
    return doc, central


def _solve_graph(request: _Request) -> tuple[dict[str, Any], GraphMechanism | CentralMechanism | None]:
    if request.balanced and request.boundary is not None:
        raise ParameterError("balanced", True, "either balanced or boundary, not both")
    spec = request.graph
    if spec.startswith("line:"):
        n_blue, n_red = _ints(spec, 2)
        eps, delta = _privacy(request, None, None)
        if request.boundary is None and not request.balanced:
            raise ParameterError("boundary", None, "a probability for node NB (or balanced)")
        r = balanced_boundary_value(eps, delta) if request.balanced or request.boundary is None else request.boundary
        line = line_mechanism(n_blue, n_red, r, eps, delta)
        mech = line.as_graph_mechanism()
        return {"feasible": True, "red": "color R", "probabilities": mech.probabilities(),
                "transition": _transition(line.transition)}, mech
    name = spec.split(":", 1)[0]
    if ":" in spec and name in COUNT_GRAPHS:
        return _solve_function(request, name)
    file = load_graph_file(spec)
    graph = file.graph()
    eps, delta = _privacy(request, file.eps, file.delta, eps_given_by_file=True)
    if request.balanced:
        mech = balanced_mechanism(graph, eps, delta)
    elif request.boundary is not None:
        mech = boundary_homogeneous_mechanism(graph, request.boundary, eps, delta)
    elif file.boundary is not None:
        mech = optimal_mechanism(graph, file.boundary, eps, delta)
    else:
        raise ParameterError("boundary", None, "a value (or balanced, or 'boundary' in the file)")
    doc: dict[str, Any] = {"feasible": mech.feasible, "red": "color R", "probabilities": mech.probabilities()}
    if mech.violated_edge is not None:  # set exactly when infeasible
        doc["violated_edge"] = list(mech.violated_edge)
    return doc, mech
