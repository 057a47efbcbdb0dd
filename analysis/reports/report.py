"""A run's report: each round measured against theory, the results document and the plot.

A round's measured accuracy is the fraction of repetitions in which the observer's decision (or the
curator's release) equals f(x) for the true bits x of the parties taking part; its theoretical accuracy
is P(output = f(x) | x) (:mod:`mpdp.analysis.reports.evaluation` picks the theory). The two are compared by
:func:`mpdp.analysis.statistics.stats.consistency_test` with a Bonferroni correction over the rounds
(:func:`evaluate_decisions`). :func:`results_document` builds the JSON of ``mpdp simulate --json/--out``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import MISSING, asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from mpdp import __version__ as mpdp_version
from mpdp.analysis.plot_style import COLORS, new_axes, series_style
from mpdp.analysis.statistics.stats import clopper_pearson, consistency_test
from mpdp.analysis.theory.theory import AccuracyOnInput
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.secure import rng_mode

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from mpdp.analysis.reports.evaluation import RoundEvaluation

__all__ = ["CURATOR_REPETITIONS_NOTE", "MPC_REPETITIONS_NOTE", "REPETITIONS_NOTE", "RoundResult", "evaluate_decisions",
           "plot_decisions", "plot_models", "plot_privacy_spent", "plot_rounds",
           "results_document"]


REPETITIONS_NOTE = (
    "Repetitions are independent trials of the same round (each a fresh privatization of the same "
    "bits): a simulation device to measure accuracy. In a deployment a party answers once per round, "
    "and every answer spends privacy."
)

CURATOR_REPETITIONS_NOTE = (
    "Curator protocol: each party sends its bit once per round, sealed to the curator; repetitions are "
    "independent releases of the curator's mechanism on the same ballots: a simulation device to "
    "measure accuracy. In a deployment the curator releases once per round, and every release spends "
    "privacy."
)

MPC_REPETITIONS_NOTE = (
    "mpc protocol: each party secret-shares its bit once per round among the compute servers; repetitions "
    "are independent releases drawn inside the secure computation from the same shares: a simulation "
    "device to measure accuracy. In a deployment the servers release once per round, and every release "
    "spends privacy."
)


@dataclass(frozen=True, slots=True)
class RoundResult:
    """One round's figures (the ``rounds`` entries of ``results.json``).

    Attributes:
        round: the round's name (a bill for the House).
        n_parties: parties taking part; yes_count: how many of them hold a 1.
        truth: f(x); repetitions: independent privatizations; correct: decisions equal to truth.
        empirical_accuracy, ci_low, ci_high: measured accuracy and its 95% Clopper-Pearson interval.
        theoretical_accuracy, theory_exact, theory_method: the theory and how it was computed.
        p_value, consistent: the consistency test (level alpha / rounds).
        messages_received, messages_rejected: the observer's counts for the round.
        tie_probability: P(the rule's posterior ties | x): where it does the deterministic rule answers
            the smallest output (0), so a round decided by ties shows theory 0 for f(x) = 1.
    """

    round: str
    n_parties: int
    yes_count: int
    truth: int
    repetitions: int
    correct: int
    empirical_accuracy: float
    ci_low: float
    ci_high: float
    theoretical_accuracy: float
    theory_exact: bool
    theory_method: str
    p_value: float
    consistent: bool
    messages_received: int
    messages_rejected: int
    tie_probability: float = 0.0

    def to_json(self) -> dict[str, object]:
        """A JSON-ready dict with the field names above."""
        return asdict(self)

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> RoundResult:
        """The round of a ``rounds`` entry of ``results.json`` (its other keys, such as ``status``, ignored).

        Raises:
            KeyError: a field of this class missing from ``entry``.
        """
        return cls(**{f.name: entry[f.name] for f in fields(cls) if f.name in entry or f.default is MISSING})


def evaluate_decisions(
    name: str,
    x: NDArray[np.integer[Any]],
    decisions: NDArray[np.integer[Any]],
    function: BooleanFunction,
    theory: AccuracyOnInput,
    *,
    rounds: int,
    alpha: float,
    messages_received: int = 0,
    messages_rejected: int = 0,
) -> RoundResult:
    """Compare one round's outputs (a decision rule's or a curator's release) with f(x) and with a
    theoretical accuracy on x (exact, or a Monte Carlo estimate whose counts enter the test).

    Args:
        x: int array (n,), the true bits of the parties taking part; decisions: int64 (repetitions,).
        theory: P(output = f(x) | x) (:class:`mpdp.analysis.theory.theory.AccuracyOnInput`).
        rounds, alpha: Bonferroni over ``rounds`` tests at family-wise level ``alpha``.

    Raises:
        ParameterError: no repetitions (from the callees).
    """
    x = np.asarray(x)
    decisions = np.asarray(decisions)
    truth = function(x)
    correct = int((decisions == truth).sum())
    repetitions = int(decisions.size)
    low, high = clopper_pearson(correct, repetitions)
    theory_counts = None if theory.exact else (round(theory.value * theory.samples), theory.samples)
    test = consistency_test(
        correct, repetitions, theory.value, alpha=alpha, rounds=rounds, theory_counts=theory_counts
    )
    return RoundResult(
        round=name, n_parties=int(x.size), yes_count=int(x.sum()), truth=truth,
        repetitions=repetitions, correct=correct, empirical_accuracy=correct / repetitions,
        ci_low=low, ci_high=high, theoretical_accuracy=theory.value, theory_exact=theory.exact,
        theory_method=theory.method, p_value=test.p_value, consistent=test.consistent,
        messages_received=messages_received, messages_rejected=messages_rejected,
        tie_probability=theory.tie_probability,
    )


def results_document(
    *, session: str, protocol: str, dataset: str, function: str, repetitions: int, seed: int, seed_given: bool,
    secure: bool, broker_kind: str, broker_url: str, alpha: float, rule: str, party_decisions: bool,
    wall_time: float, mechanisms: Sequence[RandomizedResponse], rounds: Sequence[RoundEvaluation],
    privacy: dict[str, object] | None,
) -> dict[str, object]:
    """The results document of a run (``results.json``; key order is the output order).

    Args:
        session: the session id (also the key of the run in its transcript store).
        protocol: ``"rr"``, ``"curator"`` or ``"mpc"``; dataset, function: names; repetitions: per round.
        seed: the root seed used; seed_given: whether the user gave it; secure: deployment mode.
        broker_kind, broker_url: where the run published; alpha: family-wise test level.
        rule: ``"average"``, ``"worst-case"`` or ``"curator"``; party_decisions: parties decided too.
        wall_time: seconds on the wire; mechanisms: the k parties' randomized responses.
        rounds: each round's evaluation (:class:`mpdp.analysis.reports.evaluation.RoundEvaluation`).
        privacy: the per-party privacy section (randomized response), or None (curator: omitted).
    """
    document: dict[str, object] = {
        "session": session,
        "mpdp_version": mpdp_version,
        "protocol": protocol,
        "dataset": dataset,
        "function": function,
        "repetitions": repetitions,
        "seed": seed,
        "seed_given": seed_given,
        "mode": rng_mode(secure),
        "broker": {"kind": broker_kind, "url": broker_url},
        "alpha": alpha,
        "rule": rule,
        "party_decisions": party_decisions,
        "wall_time_s": wall_time,
        "note": {"rr": REPETITIONS_NOTE, "mpc": MPC_REPETITIONS_NOTE}.get(protocol, CURATOR_REPETITIONS_NOTE),
        "parties": [{"id": i, "epsilon": m.epsilon, "delta": m.delta} for i, m in enumerate(mechanisms)],
        "rounds": [r.to_json() for r in rounds],
    }
    if privacy is not None:
        document["privacy"] = privacy
    return document


def plot_rounds(results: Sequence[RoundResult], ax: Axes | None = None, title: str = "") -> Figure:
    """Draw theory (marker) and measured accuracy with its 95% interval per round, one row per round.

    Args:
        results: the rounds, drawn top to bottom. ax: draw there, or on a new Figure. title: the axes' title.

    Returns:
        the Figure drawn on (nothing is written: :func:`mpdp.analysis.plot_style.save_figure` saves it).
        The measured points carry gid ``measured``, the theory markers gid ``theory``.
    """
    figure, ax = new_axes(ax, (8.0, 0.35 * len(results) + 1.6))
    ys = np.arange(len(results))
    measured = np.array([r.empirical_accuracy for r in results])
    err = np.array([[r.empirical_accuracy - r.ci_low for r in results],
                    [r.ci_high - r.empirical_accuracy for r in results]])
    ax.errorbar(measured, ys, xerr=err, fmt="o", color=COLORS[0], capsize=3,
                label="measured (95% Clopper-Pearson)", gid="measured")
    ax.scatter([r.theoretical_accuracy for r in results], ys, marker="D", facecolors="none",
               edgecolors=COLORS[3], s=60, zorder=3, label="theory (optimal rule)", gid="theory")
    for y, r in zip(ys, results, strict=True):
        if not r.consistent:
            ax.annotate("inconsistent", (r.empirical_accuracy, y), textcoords="offset points",
                        xytext=(8, 4), color=COLORS[3], fontsize=8)
    ax.set_yticks(ys, [r.round for r in results], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("accuracy: P(observer's decision = true value)")
    ax.set_ylabel("round")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower left", fontsize=8)
    ax.grid(axis="x", alpha=0.3)
    return figure


def plot_models(names: Sequence[str], protocols: Sequence[tuple[str, Sequence[RoundResult]]],
                ax: Axes | None = None, title: str = "") -> Figure:
    """Per round, each protocol's theory (open marker) and measured accuracy with its 95% interval, side
    by side (``mpdp compare``: randomized response, the curator, mpc).

    Args:
        names: the R round names; protocols: (label, its R round results) each, in drawing order.
        ax: draw there, or on a new Figure. title: the axes' title.

    Returns:
        the Figure drawn on (:func:`mpdp.analysis.plot_style.save_figure` saves it).
    """
    figure, ax = new_axes(ax, (9.0, 0.45 * len(names) + 1.8))
    ys = np.arange(len(names), dtype=np.float64)
    for j, (label, results) in enumerate(protocols):
        offset = ys + 0.22 * (j - (len(protocols) - 1) / 2)
        err = np.array([[r.empirical_accuracy - r.ci_low for r in results],
                        [r.ci_high - r.empirical_accuracy for r in results]])
        style = series_style(j)
        ax.errorbar([r.empirical_accuracy for r in results], offset, xerr=err, fmt=style["marker"],
                    color=style["color"], capsize=2, markersize=4, label=f"{label}: measured (95% CI)")
        ax.scatter([r.theoretical_accuracy for r in results], offset, marker="D", facecolors="none",
                   edgecolors=style["color"], s=40, zorder=3, label=f"{label}: theory")
    ax.set_yticks(ys, list(names), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("accuracy: P(released or decided majority = true majority)")
    ax.set_ylabel("round")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="lower left", fontsize=7, ncol=len(protocols))
    ax.grid(axis="x", alpha=0.3)
    return figure


def plot_privacy_spent(epsilon_optimal: Sequence[float], epsilon_basic: Sequence[float], ax: Axes | None = None,
                       title: str = "") -> Figure:
    """The distribution of the parties' spent epsilon: the empirical CDF (fraction of parties that spent at
    most x nats) by the optimal composition (000 Theorem 3.3; gid ``optimal``) and by basic composition (the
    sum; gid ``basic``), each with its median marked (the ``privacy`` section of ``results.json``).

    Args:
        epsilon_optimal, epsilon_basic: (k,) nats per party (``inf`` for a party with epsilon = inf is
            left out of the curve and counted in the legend). ax: draw there, or on a new Figure.
        title: the axes' title.

    Returns:
        the Figure drawn on. Each curve's data are its steps: x the sorted finite epsilons, y = i / n for
        the i-th of the n parties.

    Raises:
        ValueError: the two sequences differ in length.
    """
    optimal = np.asarray(epsilon_optimal, dtype=np.float64)
    basic = np.asarray(epsilon_basic, dtype=np.float64)
    if optimal.shape != basic.shape:
        raise ValueError(f"{optimal.size} optimal against {basic.size} basic epsilons: one each per party")
    figure, ax = new_axes(ax, (8.0, 4.2))
    n = optimal.size
    for j, (values, gid, label) in enumerate(((basic, "basic", "basic composition (the sum of the $\\varepsilon$s)"),
                                              (optimal, "optimal", "optimal composition (000 Theorem 3.3, exact)"))):
        finite = np.sort(values[np.isfinite(values)])
        if finite.size == 0:
            continue
        color = series_style(j)["color"]
        unbounded = n - finite.size
        extra = f"; {unbounded} with $\\varepsilon = \\infty$ not drawn" if unbounded else ""
        ax.step(finite, np.arange(1, finite.size + 1) / n, where="post", color=color, gid=gid,
                linestyle=series_style(j)["linestyle"], label=f"{label}{extra}")
        median = float(np.median(finite))
        ax.axvline(median, color=color, lw=0.8, ls=":", label=f"median, {gid}: {median:.4g} nats")
    ax.set_xlabel("$\\varepsilon$ spent by a party (nats)")
    ax.set_ylabel(f"fraction of the {n} {noun(n, 'party', 'parties')} (ECDF)")
    ax.set_ylim(0.0, 1.02)
    ax.set_title(title, fontsize=10)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    else:  # no party, or every party unbounded (epsilon = inf): no curve, and the page says why
        why = "no party in the ledger" if n == 0 else f"{n} of {n} {noun(n, 'party', 'parties')} with $\\varepsilon = \\infty$"
        ax.text(0.5, 0.5, f"{why}: no finite spend to draw",
                transform=ax.transAxes, ha="center", va="center", fontsize=9)
    ax.grid(alpha=0.3)
    return figure


def plot_decisions(names: Sequence[str], posterior: Sequence[float], ax: Axes | None = None,
                   title: str = "") -> Figure:
    """A deployment's rounds: the observer's posterior probability of its decision given the transcript
    (it does not know the bits, so there is no accuracy to measure), one bar per round.

    Args:
        names: the R round names; posterior: (R,) mean P(decision | transcript) of each round, in [0, 1].
        ax: draw there, or on a new Figure. title: the axes' title.

    Returns:
        the Figure drawn on.
    """
    figure, ax = new_axes(ax, (8.0, 0.35 * len(names) + 1.6))
    ys = np.arange(len(names))
    ax.barh(ys, posterior, color=COLORS[0])
    ax.set_yticks(ys, list(names), fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0.0, 1.0)
    ax.set_xlabel("P(decision | transcript): the observer's confidence in its decision")
    ax.set_ylabel("round")
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return figure
