""""Interaction does not help" (002 Theorem 3.1; 000 §5.2 for (epsilon, delta)), run on random protocols.

For a protocol whose party i's view is (eps_i, delta_i)-DP (checked exactly,
:func:`mpdp.protocols.interactive.interactive.view_epsilon` / :func:`~mpdp.protocols.interactive.interactive.view_delta`), the
theorem says randomized response at (eps_i, delta_i) with the optimal rule is at least as accurate, for
every f, w, observer and both notions of accuracy. :func:`compare_with_randomized_response` measures the
*margins* ``protocol - randomized response`` (the theorem: <= 0); :func:`theorem_3_1_trials` draws random
interactive protocols, random truth tables and random accuracy measures and collects the margins. The
comparison is made at the tightest parameters the protocol has: its exact eps_i (pure), or the exact
delta_i at its budget eps_i.

Protocol values come from the dense transcript matrix (:mod:`mpdp.protocols.interactive.transcript_rules`); those of
randomized response from the engines (:func:`mpdp.protocols.rules.optimal.optimal_rules`): two independent codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.plot_style import COLORS, new_axes
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import TruthTable
from mpdp.protocols.interactive.interactive import (
    InteractiveProtocol,
    random_protocol,
    view_delta,
    view_epsilon,
)
from mpdp.protocols.interactive.transcript_rules import transcript_accuracy
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "Margins",
    "compare_with_randomized_response",
    "plot_margins",
    "protocol_privacy",
    "theorem_3_1_trials",
]


@dataclass(frozen=True, slots=True)
class Margins:
    """Protocol minus randomized response for one (protocol, f, w, observer); <= 0 by the theorem.

    Attributes:
        average: optimal average accuracy, protocol minus randomized response.
        worst_case: optimal worst-case accuracy (the LP rules' exact values), protocol minus RR.
        epsilons, deltas: the privacy levels of randomized response it was compared with.
        observer: None (central observer) or the party index.
    """

    average: float
    worst_case: float
    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    observer: int | None


def protocol_privacy(protocol: InteractiveProtocol,
                     budgets: Sequence[float] | None = None) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The exact privacy of every party's view: ``(epsilons, deltas)``.

    With ``budgets`` None: the smallest pure eps_i of each view (deltas all 0). With budgets: eps_i =
    budgets[i] and delta_i the smallest delta at that eps (the set-wise criterion).

    Raises:
        ParameterError: budgets of the wrong length or a bad epsilon.
    """
    p = protocol.transcript_matrix()
    k = protocol.k
    if budgets is None:
        return tuple(view_epsilon(p, k, i) for i in range(k)), (0.0,) * k
    if len(budgets) != k:
        raise ParameterError("budgets", list(budgets), f"one epsilon per party ({k})")
    return tuple(float(b) for b in budgets), tuple(view_delta(p, k, i, b) for i, b in enumerate(budgets))


def compare_with_randomized_response(protocol: InteractiveProtocol, table: NDArray[np.int64],
                                     measure: NDArray[np.float64], epsilons: Sequence[float],
                                     deltas: Sequence[float] | None = None,
                                     observer: int | None = None) -> Margins:
    """Margins of ``protocol`` over randomized response at (epsilons, deltas) for f = ``table``, w = ``measure``.

    Args:
        protocol: the competitor. table: int (2^k,), f in input order. measure: float64 (|Y|, |Y|).
        epsilons, deltas: randomized response's parameters, one per party (deltas None: all 0).
        observer: None (central observer) or a party index.

    Raises:
        ParameterError: mismatched sizes or bad parameters. SolverError: an LP HiGHS did not solve.
    """
    k = protocol.k
    deltas = (0.0,) * k if deltas is None else tuple(deltas)
    if len(epsilons) != k or len(deltas) != k:
        raise ParameterError("epsilons, deltas", (len(epsilons), len(deltas)), f"one value per party ({k})")
    mine = transcript_accuracy(protocol.transcript_matrix(), table, measure, observer)
    mechanisms = [RandomizedResponse(e, d) for e, d in zip(epsilons, deltas, strict=True)]
    rr = optimal_rules(mechanisms, TruthTable(tuple(int(v) for v in table)), measure, observer)
    assert rr.average is not None and rr.worst_case is not None  # rule="both"
    return Margins(mine.average - rr.average.average_accuracy, mine.worst_case - rr.worst_case.worst_case_accuracy,
                   tuple(float(e) for e in epsilons), deltas, observer)


def theorem_3_1_trials(k: int, trials: int, rng: np.random.Generator, *, delta: float = 0.0,
                       rounds: int = 2) -> list[Margins]:
    """Margins of ``trials`` random interactive protocols over randomized response.

    Each trial draws per-party budgets eps_i ~ U(0.1, 2) (and delta_i = ``delta``), a protocol of
    ``rounds`` rounds (:func:`random_protocol`; 3 symbols, 4 with a delta), a truth table with |Y| in
    {2, 3}, an accuracy measure with w[y, y] = 1 and
    other entries ~ U(0, 0.5), and an observer (central or a party), and
    compares at the protocol's exact privacy (:func:`protocol_privacy`).

    Raises:
        ParameterError: k (``parties``) outside 1..4, trials < 1, a bad delta or rounds.
    """
    if not 1 <= k <= 4:
        raise ParameterError("parties", k, "1..4 (the transcript matrix is dense)")
    if trials < 1:
        raise ParameterError("trials", trials, "an integer >= 1")
    margins = []
    for _ in range(trials):
        budgets = rng.uniform(0.1, 2.0, k).tolist()
        deltas = None if delta == 0 else [delta] * k
        protocol = random_protocol(budgets, rng, deltas=deltas, rounds=rounds, symbols=3 if delta == 0 else 4)
        outputs = int(rng.integers(2, 4))
        table = rng.integers(0, outputs, 1 << k)
        table[0], table[-1] = 0, outputs - 1  # every output occurs
        measure = rng.uniform(0.0, 0.5, (outputs, outputs))
        np.fill_diagonal(measure, 1.0)
        observer = int(rng.integers(-1, k))
        eps, dl = protocol_privacy(protocol, None if delta == 0 else budgets)
        margins.append(compare_with_randomized_response(protocol, table, measure, eps, dl,
                                                        None if observer < 0 else observer))
    return margins


def plot_margins(margins: Sequence[Margins], ax: Axes | None = None, title: str = "") -> Figure:
    """Histogram of the margins (average and worst case) with the theorem's bound 0 marked.

    Args:
        margins: from :func:`theorem_3_1_trials`. ax: draw there, or on a new figure. title: the axes' title.

    Returns:
        the Figure drawn on (nothing is written; the caller saves it).
    """
    figure, ax = new_axes(ax, (6.5, 4.0))
    values = [np.array([m.average for m in margins]), np.array([m.worst_case for m in margins])]
    low = min(float(v.min()) for v in values)
    bins = np.linspace(min(low, -1e-3), 1e-3, 41)
    ax.hist(values, bins=bins.tolist(), label=["average accuracy", "worst-case accuracy"], color=list(COLORS[:2]))
    ax.axvline(0.0, color="k", lw=1, ls="--", label="randomized response (margin 0)")
    ax.set_xlabel("protocol minus randomized response (optimal rules)")
    ax.set_ylabel("protocols")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return figure
