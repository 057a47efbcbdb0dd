"""Central versus distributed privacy for the majority of k voters, at the same (epsilon, delta) per voter.

* Central (a trusted curator sees the votes): the optimal (epsilon, delta)-DP mechanism of 001 for the
  majority (:func:`mpdp.protocols.central_majority_mechanism`, the average-optimal one; balanced for odd k).
* Distributed (no one is trusted): every voter releases its bit by randomized response (four-output when
  delta > 0) and the central observer applies its optimal average-case decision rule (002 eq. (5));
  exact accuracy per input from :func:`mpdp.analysis.theory.theory.observer_accuracy_on_input`.

The live curator protocol (``mpdp simulate --protocol curator``) releases the central mechanism's output
on the real votes, for the majority or any other binary symmetric function
(:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`): :func:`curator_release_probability` is what
it samples, :func:`curator_accuracy_on_input` its exact accuracy on one input.

Accuracy is 0-1: average over all 2^k inputs (uniform, 002 eq. (1)) and worst case over inputs (eq. (3)).
Both depend on x only through the count c, so each is a sum or minimum over c = 0..k.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from mpdp.analysis.plot_style import COLORS, EPSILON_LABEL, MARKERS, figure_of, new_figure
from mpdp.analysis.theory.theory import AccuracyOnInput, observer_accuracy_on_input
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism, central_mechanism
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.numerics.cost import CostEstimate, PowerLaw, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = [
    "DISTRIBUTED_MAX_VOTERS",
    "ROW_SECONDS",
    "comparison_cost",
    "CentralVersusDistributed",
    "check_comparison_voters",
    "compare_majority",
    "curator_accuracy_on_input",
    "curator_release_probability",
    "plot_comparison",
]

#: Largest k for the exact distributed accuracy (k + 1 inputs, each O(k^2); four-output O(k^3)).
DISTRIBUTED_MAX_VOTERS = {False: 401, True: 25}


#: Seconds of one :func:`compare_majority` row from k, pure (delta = 0) and four-output (delta > 0): the
#: exponents from k = 201 / 401 (13 s, 57 s) and k = 13 / 25 four-output (0.8 s, 9.6 s) measured on the
#: project's 2-core machine under heavy load; the scale from an unloaded run (issue 10: 5 rows at k = 401
#: in 30 s), four-output scaled by the same load factor.
ROW_SECONDS = {False: PowerLaw(6.0 / 401**2.1, (2.1,)), True: PowerLaw(2.0 / 25**3.8, (3.8,))}


def comparison_cost(voters: Sequence[int], epsilons: Sequence[float], delta: float) -> CostEstimate:
    """The estimated time of every :func:`compare_majority` row (each k with each epsilon); memory is
    small (O(k^2) floats per row)."""
    rows = len(voters) * len(epsilons)
    seconds = len(epsilons) * sum(ROW_SECONDS[delta > 0](k) for k in voters)
    size = f"{rows} {noun(rows, 'row')} up to k = {max(voters, default=0)}"
    return CostEstimate("the comparison", size, seconds,
                        8.0 * (max(voters, default=0) + 1) ** 2 * 8 + 5e7,
                        "fewer or smaller voters, fewer epsilon values, or allow more time "
                        "(time_limit=SECONDS)")


@dataclass(frozen=True, slots=True)
class CentralVersusDistributed:
    """One row of the comparison: accuracies in [0, 1] for k voters at (epsilon, delta) each."""

    voters: int
    epsilon: float
    delta: float
    central_average: float
    central_worst: float
    distributed_average: float
    distributed_worst: float


def check_comparison_voters(voters: int, delta: float) -> int:
    """Return ``int(voters)`` if :func:`compare_majority` can compute it exactly at this delta.

    Raises:
        ParameterError: voters not an integer >= 1.
        SizeLimitError: voters > DISTRIBUTED_MAX_VOTERS[delta > 0] (401 pure, 25 four-output).
    """
    if not isinstance(voters, (int, np.integer)) or voters < 1:
        raise ParameterError("voters", voters, "an integer >= 1")
    limit = DISTRIBUTED_MAX_VOTERS[delta > 0]
    if voters > limit:
        raise SizeLimitError("voters", int(voters), limit, "the exact observer accuracy enumerates the "
                             "count classes; the central mechanism alone (`mpdp mechanism --graph "
                             "majority:N`) goes up to 10^6 voters")
    return int(voters)


def _distributed(voters: int, epsilon: float, delta: float) -> NDArray[np.float64]:
    """P(observer decides the true majority | c ones), float64 array (k + 1,)."""
    mech = RandomizedResponse(epsilon, delta)
    voters = check_comparison_voters(voters, mech.delta)
    parties = [mech] * voters
    majority, zero_one = parse_function("majority"), accuracy_measure("zero-one", 2)
    return np.array([
        observer_accuracy_on_input(parties, np.array([1] * c + [0] * (voters - c)), majority, zero_one,
                                   max_classes=10**7).value
        for c in range(voters + 1)
    ])


@lru_cache(maxsize=256)
def _release_one(function: str, voters: int, epsilon: float, delta: float) -> NDArray[np.float64]:
    """``central_mechanism(function, voters, epsilon, delta).release_one`` (read-only), cached: a curator
    asks once per round, and the average-optimal boundary value is a 1-D search."""
    return central_mechanism(function, voters, epsilon, delta).release_one


def _count_values(function: str, voters: int) -> NDArray[np.int64]:
    """f's value per count of ones, int64 (voters + 1,).

    Raises:
        ParameterError: ``function`` is no symmetric function of any number of voters (a truth table).
    """
    values = parse_function(function).count_values(voters)
    if values is None:
        raise ParameterError("function", function, "a binary symmetric function (majority, and, or, xor, "
                             "threshold:T)")
    return values


def curator_release_probability(ones: int, voters: int, epsilon: float, delta: float,
                                function: str = "majority") -> float:
    """P(the curator releases 1 | ``ones`` ones among ``voters`` votes) for the optimal central mechanism
    of the binary symmetric ``function`` (001 Theorems 2-5; parity's constant optimum):
    ``central_mechanism(function, voters, epsilon, delta).release_one[ones]`` (the average-optimal one).
    With no voters it is f of the empty input (majority, or, xor, threshold:T >= 1: 0; and, threshold:0: 1),
    exactly: releasing it depends on no one's data.

    Args:
        ones, voters: the count of ones and of votes, 0 <= ones <= voters.
        epsilon, delta: the mechanism's privacy level per vote.
        function: a name of :func:`mpdp.protocols.functions.parse_function` with two outputs and a
            central optimum (majority, passed, and, or, xor, threshold:T).

    Raises:
        ParameterError: ``ones`` outside 0..voters, voters < 0, a function :func:`central_mechanism`
            refuses (e.g. ``sum``), or a bad epsilon/delta.
    """
    if not 0 <= ones <= voters:
        raise ParameterError("ones", ones, f"a count in 0..{voters}")
    if voters == 0:
        return float(_count_values(function, 0)[0])
    return float(_release_one(function, int(voters), float(epsilon), float(delta))[ones])


def curator_accuracy_on_input(x: NDArray[np.integer[Any]], epsilon: float, delta: float,
                              function: str = "majority") -> AccuracyOnInput:
    """Exact accuracy of the curator on one input x (n votes, s = |x| ones):
    P(correct | x) = release_one[s] if f(x) = 1 else 1 - release_one[s]
    (:func:`curator_release_probability`).

    Args:
        x: int array (n,) of the true votes (0/1) of the parties taking part.
        epsilon, delta: the mechanism's privacy level per vote.
        function: the binary symmetric f the curator releases (as :func:`curator_release_probability`).

    Raises:
        ParameterError: x not a 1-D array of 0/1, a function the curator cannot release, or a bad
            epsilon/delta.
    """
    x = np.asarray(x)
    if x.ndim != 1 or not np.isin(x, (0, 1)).all():
        raise ParameterError("x", x, "a 1-D array of votes, each 0 or 1")
    voters, ones = int(x.size), int(x.sum())
    release = curator_release_probability(ones, voters, epsilon, delta, function)
    truth = int(_count_values(function, voters)[ones])
    value = release if truth == 1 else 1.0 - release
    method = f"exact: optimal central mechanism (001 Theorems 2-5) for {function} on {voters} {noun(voters, 'vote')}"
    return AccuracyOnInput(value, True, value, value, method)


def compare_majority(voters: int, epsilon: float, delta: float) -> CentralVersusDistributed:
    """Average and worst-case accuracy of the central and distributed protocols for majority.

    Accuracies are clamped to [0, 1] (the binomial weights sum to 1 only up to float rounding).

    Raises:
        ParameterError: bad k, epsilon or delta. SizeLimitError: k above DISTRIBUTED_MAX_VOTERS (checked
            first, before any work).
    """
    distributed = _distributed(voters, epsilon, delta)
    central = central_majority_mechanism(voters, epsilon, delta)
    weights = binom.pmf(np.arange(voters + 1), voters, 0.5)
    distributed_average = min(max(float(weights @ distributed), 0.0), 1.0)
    return CentralVersusDistributed(
        voters, float(epsilon), float(delta), central.average_accuracy(), central.worst_case_accuracy(),
        distributed_average, float(distributed.min()))


def plot_comparison(rows: Sequence[CentralVersusDistributed], ax: Sequence[Axes] | None = None) -> Figure:
    """Accuracy against epsilon: average (left) and worst case (right), one colour per k, central solid,
    distributed dashed, every curve its own marker, and smaller k drawn wider beneath larger k, so that
    curves that coincide (the central worst case is the same for several k) stay distinguishable.

    Args:
        rows: from :func:`compare_majority` (any order; one curve per k and protocol).
        ax: two axes (average, worst case), or None for a new Figure.

    Returns:
        the Figure drawn on (nothing is written). Each curve has gid ``<average|worst>:<central|distributed>:k=K``.

    Raises:
        ParameterError: no rows, or ``ax`` not two axes.
    """
    if not rows:
        raise ParameterError("rows", 0, "at least one comparison row")
    if ax is None:
        figure = new_figure((10, 4))
        axes = tuple(figure.subplots(1, 2, sharey=True))
    else:
        axes = tuple(ax)
        if len(axes) != 2:
            raise ParameterError("ax", len(axes), "two axes: average accuracy, worst-case accuracy")
        figure = figure_of(axes[0])
    curve = 0
    voters = sorted({r.voters for r in rows})
    for colour, k in enumerate(voters):
        mine = sorted((r for r in rows if r.voters == k), key=lambda r: r.epsilon)
        eps = [r.epsilon for r in mine]
        under = (len(voters) - 1 - colour) / max(len(voters) - 1, 1)  # earlier k: wider, drawn beneath
        for protocol, style in (("central", "-"), ("distributed", "--")):
            marker = MARKERS[curve % len(MARKERS)]
            curve += 1
            for panel, axis in zip(("average", "worst"), axes, strict=True):
                axis.plot(eps, [getattr(r, f"{protocol}_{panel}") for r in mine], linestyle=style, marker=marker,
                          linewidth=1.3 + 2.2 * under, markersize=5 + 5 * under,
                          markerfacecolor="none" if protocol == "distributed" else None,
                          color=COLORS[colour % len(COLORS)], label=f"{protocol}, k={k}",
                          gid=f"{panel}:{protocol}:k={k}", zorder=2 + colour)
    axes[0].set_title("average accuracy")
    axes[1].set_title("worst-case accuracy")
    for axis in axes:
        axis.set_xlabel(EPSILON_LABEL)
        axis.grid(alpha=0.3)
    axes[0].set_ylabel("P(correct majority)")
    axes[1].legend(fontsize=7)
    figure.suptitle(f"majority: optimal central mechanism vs randomized response (delta={rows[0].delta:g})")
    return figure
