"""Accuracy against epsilon: exact theory and Monte Carlo measurement over a grid, with a verdict per point.

For every point of the grid (epsilon x k x delta x f x rule kind x observer) all k parties run randomized
response at (epsilon, delta) (four-output when delta > 0, 000 §5.1) and the observer (the central observer,
or party 0 who also knows its own bit) applies its optimal rule of 002 (average: eqs. (2), (5); worst case:
eqs. (4), (6)), built by :func:`mpdp.protocols.rules.rule_factory.decision_rule`. Per point:

* theory, exact (:func:`mpdp.analysis.theory.accuracy.rule_accuracy`): the rule's average accuracy over uniform
  inputs (002 eq. (1)), which is what the Monte Carlo measures, and its worst-case accuracy (eq. (3));
* measurement: ``samples`` repetitions by :func:`mpdp.analysis.theory.accuracy.monte_carlo_accuracy` (zero-one
  measure: each repetition is right or wrong), with its Clopper-Pearson interval at level 1 - alpha;
* verdict: the two-sided exact binomial test of the count of right decisions against the theory, at level
  alpha / (number of points) (Bonferroni: the chance that any point of a correct engine is flagged is at
  most alpha) (:func:`mpdp.analysis.statistics.stats.consistency_test`);
* for a binary f (majority, and, or, threshold:T, xor) and the central observer, the accuracy of the
  trusted curator: the optimal central mechanism of 001 at the same (epsilon, delta) per voter
  (:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`; for majority what ``mpdp compare``'s curator
  releases), ``curator_accuracy``.

With ``protocol="curator"`` the points measure the curator itself (its release is the decision: no rule,
no observer), its exact theory the same central mechanism's average and worst-case accuracy; the Monte
Carlo draws the count c ~ Bin(k, 1/2) of a uniform input, then a right release with probability
P(release = f(c) | c).

Randomness: point i draws from ``default_rng(SeedSequence(seed).spawn(points)[i])``, so the result is the
same bit for bit whatever the executor and the number of workers.

:func:`plan_sweep` checks the arguments and lays out the points (:class:`SweepPlan`), :func:`point_theory`
gives a point's exact theory and :meth:`SweepPlan.result` turns measured counts into verdicts: the live
sweep (:mod:`mpdp.parties.session.live_sweep`) measures the same points over a broker with these.
"""

from __future__ import annotations

import collections
import csv
import dataclasses
import io
import itertools
import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any, TypedDict, TypeVar, Unpack

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.plot_style import EPSILON_LABEL, MARKERS, new_axes
from mpdp.analysis.reports.documents import versioned
from mpdp.analysis.statistics.stats import measured_verdict
from mpdp.analysis.sweeps.grid import SCALES, EpsilonGrid, SeedChildren
from mpdp.analysis.sweeps.sweep_cost import check_exact_rules, distinct_problems, sweep_cost
from mpdp.analysis.theory.accuracy import monte_carlo_accuracy, rule_accuracy
from mpdp.protocols.colorings.majority_mechanism import CentralMechanism, central_mechanism
from mpdp.protocols.decision.factors import FOUR_OUTPUT_GROUP_MAX
from mpdp.protocols.errors import CostLimitError, ParameterError, SizeLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.numerics.cost import CostEstimate, noun
from mpdp.protocols.numerics.lazy import LazySequence
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, check_delta, check_epsilon
from mpdp.protocols.rules.optimal import worst_case_refusal
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.rules import RULE_KINDS, check_kind
from mpdp.protocols.rules.table_rule import TableRule

T = TypeVar("T")

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["CURATOR_LABEL", "OBSERVERS", "PROTOCOLS", "SOURCES", "WINDOW", "PointTheory", "SweepPlan", "SweepPoint",
           "SweepResult", "SweepOptions", "SweepSetting", "SweepTask", "SweepTasks", "binary_curator", "plan_sweep",
           "point_theory", "run_points", "sweep"]

#: Who decides: the central observer, or party 0 (its rule also takes its own bit, 002 eq. (2)).
OBSERVERS: tuple[str, ...] = ("central", "party")


@dataclass(frozen=True, slots=True)
class SweepSetting:
    """Where a point of a sweep stands in its grid.

    Attributes:
        epsilon (nats), delta: each party's privacy level; parties: k; function: a symmetric f;
        rule: ``average``/``worst-case`` (the observer's optimal rule) or ``curator`` (the trusted
            curator's release); observer: who decides (``central``, or party 0).
    """

    epsilon: float
    delta: float
    parties: int
    function: str
    rule: str
    observer: str


@dataclass(frozen=True, slots=True)
class SweepPoint(SweepSetting):
    """One point of a sweep: its setting (:class:`SweepSetting`; observer ``central``/``party 0``) and what
    was computed and measured there.

    Attributes:
        theoretical_accuracy: exact average accuracy of the rule (002 eq. (1)), what is measured.
        theoretical_worst_case: exact worst-case accuracy of the rule (eq. (3)).
        curator_accuracy: average accuracy of the trusted curator, 001's optimal central mechanism of f
            (:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`), at the same (epsilon, delta) per
            voter: a binary f (not ``sum``) and the central observer only, else None.
        empirical_accuracy: successes / samples; successes, samples: the measured counts (Monte Carlo
            repetitions, or live rounds of one privatization each).
        ci_low, ci_high: Clopper-Pearson interval at level 1 - alpha.
        p_value: the exact binomial test's; consistent: p_value >= alpha / points.
    """

    theoretical_accuracy: float
    theoretical_worst_case: float
    curator_accuracy: float | None
    empirical_accuracy: float
    successes: int
    samples: int
    ci_low: float
    ci_high: float
    p_value: float
    consistent: bool


#: The protocols a sweep point can measure: ``rr`` (the parties' randomized responses and the observer's
#: optimal rule) or ``curator`` (a trusted curator releases f by 001's optimal central mechanism).
PROTOCOLS: tuple[str, ...] = ("rr", "curator")
#: The plot's name of the trusted curator's curve and points.
CURATOR_LABEL = "trusted curator (001's optimal central mechanism)"
_CURATOR_MARKERS = ("", "s", "^", "D", "v", "x")
#: Where a sweep's measurements come from: the vectorized Monte Carlo engine, or live sessions over a broker.
SOURCES: tuple[str, ...] = ("monte-carlo", "live")


@dataclass(frozen=True, slots=True)
class SweepTask(SweepSetting):
    """One point to run: its setting and its number of samples (Monte Carlo repetitions or live rounds).

    ``observer`` is ``central`` or ``party`` (party 0)."""

    samples: int


@dataclass(frozen=True, slots=True)
class SweepTasks(LazySequence[SweepTask]):
    """The points of a sweep, the product of its axes in grid order (function, parties, delta, rule,
    observer, epsilon fastest), each :class:`SweepTask` made when read: a grid of ten million epsilons
    holds its three numbers (:class:`mpdp.analysis.sweeps.grid.EpsilonGrid`), not ten million tasks.

    Attributes:
        functions, parties, deltas, rules, observers: the axes, each a tuple of checked values;
        grid: the epsilons, nats; samples: measurements per point.
    """

    functions: tuple[str, ...]
    parties: tuple[int, ...]
    deltas: tuple[float, ...]
    rules: tuple[str, ...]
    observers: tuple[str, ...]
    grid: Sequence[float]
    samples: int

    def _axes(self) -> tuple[tuple[Any, ...], ...]:
        return self.functions, self.parties, self.deltas, self.rules, self.observers

    def __len__(self) -> int:
        return math.prod(len(axis) for axis in self._axes()) * len(self.grid)

    def _item(self, index: int) -> SweepTask:
        setting, e = divmod(index, len(self.grid))
        values = []
        for axis in reversed(self._axes()):
            setting, j = divmod(setting, len(axis))
            values.append(axis[j])
        f, k, d, r, o = reversed(values)
        return SweepTask(self.grid[e], d, k, f, r, o, self.samples)

    def __iter__(self) -> Iterator[SweepTask]:
        for f, k, d, r, o in itertools.product(*self._axes()):
            for e in self.grid:
                yield SweepTask(e, d, k, f, r, o, self.samples)

    def settings(self) -> tuple[SweepTask, ...]:
        """One task per setting (every axis but epsilon), at the grid's first epsilon, in grid order: the
        size and the cost of a point depend on its setting, not on its epsilon (each stands for
        ``len(grid)`` points)."""
        return tuple(SweepTask(self.grid[0], d, k, f, r, o, self.samples)
                     for f, k, d, r, o in itertools.product(*self._axes()))


@dataclass(frozen=True, slots=True)
class PointTheory:
    """Exact accuracies of one point, in [0, 1].

    Attributes:
        average: the decision's average accuracy over uniform inputs (002 eq. (1)): what is measured.
        worst_case: its worst case over inputs (eq. (3)).
        curator: the trusted curator's average accuracy (001's optimal central mechanism at the same
            (epsilon, delta) per voter) for the central observer of a binary f, else None.
    """

    average: float
    worst_case: float
    curator: float | None


def binary_curator(function: str, voters: int, epsilon: float, delta: float) -> CentralMechanism | None:
    """The trusted curator of ``voters`` voters at (epsilon, delta) each, 001's optimal central mechanism
    (:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`), where ``function`` is binary at that
    size (majority, and, or, threshold:T, xor); None where it is not (``sum``).

    Raises:
        ParameterError, SizeLimitError: as :func:`~mpdp.protocols.colorings.majority_mechanism.central_mechanism`.
    """
    if parse_function(function).output_size(voters) != 2:
        return None
    return central_mechanism(function, voters, epsilon, delta)


def _curator(task: SweepTask) -> CentralMechanism | None:
    """The curator's mechanism where the point has a curator curve: a binary f, the central observer."""
    if task.observer != "central":
        return None
    return binary_curator(task.function, task.parties, task.epsilon, task.delta)


def _observer_rule(task: SweepTask) -> TableRule:
    """The optimal rule of the point's observer (protocol rr), on the count table."""
    f = parse_function(task.function)
    rule = decision_rule([RandomizedResponse(task.epsilon, task.delta)] * task.parties, f,
                         np.eye(f.output_size(task.parties)), kind=task.rule,
                         observer=None if task.observer == "central" else 0)
    assert isinstance(rule, TableRule)  # plan_sweep checked that an exact engine holds every point
    return rule


def _theory(task: SweepTask, rule: TableRule | None) -> PointTheory:
    curator = _curator(task)
    central = None if curator is None else curator.average_accuracy()
    if rule is None:  # the curator protocol: the release is the decision
        assert curator is not None and central is not None  # plan_sweep: the curator releases a binary f
        return PointTheory(central, curator.worst_case_accuracy(), central)
    f = parse_function(task.function)
    exact = rule_accuracy(rule, f, np.eye(f.output_size(task.parties)))
    assert exact.worst_case is not None  # exact accuracy always has its worst case
    return PointTheory(exact.average, exact.worst_case, central)


def point_theory(task: SweepTask) -> PointTheory:
    """The exact accuracies of one point (:class:`PointTheory`); ``task`` as :func:`plan_sweep` made it."""
    return _theory(task, None if task.rule == "curator" else _observer_rule(task))


def _run_point(task: SweepTask, seed: np.random.SeedSequence) -> tuple[PointTheory, int]:
    """Theory and Monte Carlo successes of one point (a top-level function: executors pickle it).

    The curator's samples draw the count c ~ Bin(k, 1/2) of a uniform input, then whether the release is
    f(c), with probability :attr:`CentralMechanism.truthful` [c]."""
    rng = np.random.default_rng(seed)
    if task.rule == "curator":
        curator = _curator(task)
        assert curator is not None  # plan_sweep: the curator releases a binary f
        counts = rng.binomial(task.parties, 0.5, size=task.samples)
        successes = int((rng.random(task.samples) < curator.truthful[counts]).sum())
        return _theory(task, None), successes
    rule = _observer_rule(task)
    f = parse_function(task.function)
    estimate = monte_carlo_accuracy(rule, f, np.eye(f.output_size(task.parties)), task.samples, rng)
    assert estimate.successes is not None  # the zero-one measure counts right decisions
    return _theory(task, rule), estimate.successes


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The points of a sweep and what produced them.

    Attributes:
        points: one :class:`SweepPoint` per setting, in grid order (epsilon fastest).
        inputs: the arguments of :func:`sweep` (JSON-ready).
        alpha: family-wise level of the verdicts (each point tested at alpha / len(points)).
        source: where the measurements come from, one of :data:`SOURCES` (``monte-carlo`` or ``live``).
    """

    points: tuple[SweepPoint, ...]
    inputs: dict[str, Any]
    alpha: float
    source: str = "monte-carlo"

    @property
    def consistent(self) -> bool:
        """True when every point is consistent with theory."""
        return all(p.consistent for p in self.points)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``schema_version``, ``mpdp_version``, ``inputs``, ``source``, ``alpha``, ``consistent``,
        ``points``."""
        test = ("two-sided exact binomial test per point at level alpha / points (Bonferroni); "
                "interval: Clopper-Pearson at level 1 - alpha") if "dataset" not in self.inputs else (
                "two-sided exact binomial test per round of the dataset at level alpha / (points x rounds) "
                "(Bonferroni), a point consistent iff all its rounds are; interval: the mean over rounds of "
                "Clopper-Pearson bounds at level 1 - alpha / rounds (mpdp.analysis.sweeps.dataset_sweep)")
        return versioned("sweep", {"source": self.source, "alpha": self.alpha, "test": test,
                "consistent": self.consistent, "points": [asdict(p) for p in self.points]}, self.inputs)

    def to_csv(self, path: str | None = None) -> str:
        """The points as CSV text (header = :class:`SweepPoint` field names); also written to ``path`` if given."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        names = [f.name for f in fields(SweepPoint)]
        writer.writerow(names)
        for p in self.points:
            writer.writerow(["" if getattr(p, n) is None else getattr(p, n) for n in names])
        text = out.getvalue()
        if path is not None:
            with open(path, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
        return text

    def plot(self, ax: Axes | None = None) -> Figure:
        """Accuracy against epsilon: theory curves (solid, a hollow marker of their own: the rule's average
        accuracy; dotted: its worst case; dash-dot black: the trusted curator's, for a binary f, a marker each
        after the first), measured points with their intervals as error bars (a red cross marks an
        inconsistent point); every curve and the points are in the legend, below the axes. Never changes
        matplotlib's backend.

        Args:
            ax: the axes to draw on; None makes a new :class:`matplotlib.figure.Figure`.

        Returns:
            the Figure holding the axes.
        """
        series: dict[tuple[str, int, float, str, str], list[SweepPoint]] = {}
        for p in self.points:
            series.setdefault((p.function, p.parties, p.delta, p.rule, p.observer), []).append(p)
        fig, ax = new_axes(ax, size=(8.0, 5.5 + 0.2 * len(series)))  # room for the legend below
        curator_drawn: set[tuple[str, int, float]] = set()
        for index, ((fname, k, delta, rule, observer), pts) in enumerate(series.items()):
            pts = sorted(pts, key=lambda p: p.epsilon)
            eps = np.array([p.epsilon for p in pts])
            label = f"{fname}, $k$={k}" + (f", $\\delta$={delta:g}" if delta else "") + (
                f", {CURATOR_LABEL}" if rule == "curator" else f", {rule} rule, {observer}")
            # a hollow marker of its own on each theory curve, staggered along the grid: curves that coincide
            # (and/or by symmetry, the rules at small epsilon) stay distinguishable
            every = max(1, len(pts) // 5)
            line, = ax.plot(eps, [p.theoretical_accuracy for p in pts], "-", label=f"theory: {label}",
                            marker=MARKERS[index % len(MARKERS)], markerfacecolor="none", markersize=6,
                            markevery=(index % every, every))
            color = line.get_color()
            ax.plot(eps, [p.theoretical_worst_case for p in pts], ":", color=color, linewidth=1,
                    label=f"theory, worst case: {label}")
            y = np.array([p.empirical_accuracy for p in pts])
            err = np.array([[p.empirical_accuracy - p.ci_low for p in pts], [p.ci_high - p.empirical_accuracy for p in pts]])
            ax.errorbar(eps, y, yerr=np.clip(err, 0.0, None), fmt="o", markersize=3, color=color, capsize=2,
                        label=f"measured (95% CI): {label}")
            bad = [p for p in pts if not p.consistent]
            if bad:
                ax.plot([p.epsilon for p in bad], [p.empirical_accuracy for p in bad], "x", color="red",
                        markersize=9, label="inconsistent with theory")
            key = (fname, k, delta)
            curator = [p.curator_accuracy for p in pts if p.curator_accuracy is not None]
            if key not in curator_drawn and len(curator) == len(pts) and rule != "curator":
                curator_drawn.add(key)
                marker = _CURATOR_MARKERS[(len(curator_drawn) - 1) % len(_CURATOR_MARKERS)]  # one per curve
                ax.plot(eps, curator, "-.", color="black", linewidth=1, marker=marker, markersize=4,
                        label=f"{CURATOR_LABEL}: {fname}, $k$={k}")
        if self.inputs.get("scale") == "log":
            ax.set_xscale("log")
        ax.set_xlabel(EPSILON_LABEL)
        dataset = self.inputs.get("dataset")
        ax.set_ylabel("accuracy: P(decision = $f(x)$), $x$ uniform" if dataset is None else
                      f"accuracy: P(decision = $f(x)$), mean over the rounds of {dataset}")
        samples = self.inputs.get("samples")
        how = "live runs over a broker" if self.source == "live" else "Monte Carlo"
        on, worst, per = ("", "worst case", "point") if dataset is None else (f" on {dataset}", "worst round", "round")
        ax.set_title(f"Accuracy against $\\varepsilon${on}: exact theory (lines; dotted = {worst}) and {how}\n"
                     f"({samples} samples per {per}, {100 * (1 - self.alpha):g}% Clopper-Pearson intervals; "
                     f"{sum(not p.consistent for p in self.points)} of {len(self.points)} points inconsistent)",
                     fontsize=9)
        ax.grid(alpha=0.3)
        handles, labels = ax.get_legend_handles_labels()
        unique = dict(zip(labels, handles, strict=True))  # "inconsistent with theory" once
        ax.legend(list(unique.values()), list(unique), fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.12),
                  ncol=2, frameon=False)
        return fig

    def __repr__(self) -> str:
        eps = [p.epsilon for p in self.points]
        flagged = sum(not p.consistent for p in self.points)
        live = " (live)" if self.source == "live" else ""
        return (f"SweepResult({len(self.points)} points{live}, "
                f"epsilon {min(eps, default=0):g}..{max(eps, default=0):g}, "
                f"k={sorted({p.parties for p in self.points})}, {flagged} inconsistent at alpha={self.alpha:g})")


def _as_tuple(values: Any, convert: Callable[[Any], Any]) -> tuple[Any, ...]:
    items = [values] if isinstance(values, (str, int, float)) else list(values)
    return tuple(convert(v) for v in items)


def _check_parties(k: Any) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError("parties", k, "an integer >= 1")
    return int(k)


def _check_function(name: Any) -> str:
    f = parse_function(str(name))
    if f.count_values(1) is None:
        raise ParameterError("function", name, "a symmetric function (majority, xor, and, or, sum, threshold:T)")
    return str(name)


def _check_observer(name: Any) -> str:
    if name not in OBSERVERS:
        raise ParameterError("observer", name, "one of " + ", ".join(OBSERVERS))
    return str(name)


class SweepOptions(TypedDict, total=False):
    """The keyword arguments of :func:`plan_sweep` after ``epsilon`` (the others of :func:`sweep` and
    :func:`mpdp.sweep`), each optional: its default is :func:`plan_sweep`'s."""

    parties: int | Iterable[int]
    delta: float | Iterable[float]
    function: str | Iterable[str]
    rule: str | Iterable[str] | None
    observer: str | Iterable[str] | None
    samples: int
    seed: int
    alpha: float
    scale: str
    protocol: str


@dataclass(frozen=True, slots=True)
class SweepPlan:
    """A checked sweep: its points to run, one seed each, and its inputs (from :func:`plan_sweep`); the
    points and seeds are made as they run (:class:`SweepTasks`, :class:`mpdp.analysis.sweeps.grid.SeedChildren`).

    Attributes:
        tasks: one :class:`SweepTask` per point, in grid order (epsilon fastest).
        seeds: point i's ``SeedSequence(seed).spawn(len(tasks))[i]``: its draws whatever runs it.
        settings: the arguments but the grid (JSON-ready); alpha: the family-wise level.
    """

    tasks: SweepTasks
    seeds: Sequence[np.random.SeedSequence]
    settings: dict[str, Any]
    alpha: float

    @property
    def inputs(self) -> dict[str, Any]:
        """The arguments, JSON-ready: ``epsilon`` (the grid's values, made now) then :attr:`settings`."""
        return {"epsilon": list(self.tasks.grid), **self.settings}

    def estimate(self) -> CostEstimate:
        """The up-front time (one core, every point) and peak memory of measuring the points by the Monte
        Carlo engine (:func:`mpdp.analysis.sweeps.sweep_cost.sweep_cost`; a dataset's rounds, ``settings``'
        ``participants``, each measured): one estimate per setting, whatever the grid's length."""
        participants = self.settings.get("participants")
        return sweep_cost(self.tasks, None if participants is None else [int(n) for n in participants])

    def run(self, executor: Executor | None = None,
            progress: Callable[[int, int], None] | None = None) -> SweepResult:
        """Measure every point by the Monte Carlo engine (:func:`run_points`: here, or on ``executor``) and
        give the :class:`SweepResult` (:meth:`result`); ``progress`` as :func:`sweep`'s."""
        return self.result(run_points(_run_point, self, executor, progress), "monte-carlo")

    def result(self, measured: Sequence[tuple[PointTheory, int]], source: str) -> SweepResult:
        """The :class:`SweepResult` of the measured points: per point its Clopper-Pearson interval and the
        exact binomial test of its successes against the theory at level alpha / points (Bonferroni).

        Args:
            measured: per task, in order, its theory and its successes out of ``task.samples``.
            source: one of :data:`SOURCES`.

        Raises:
            ParameterError: a source not in :data:`SOURCES`, or not one measurement per task.
        """
        if source not in SOURCES:
            raise ParameterError("source", source, "one of " + ", ".join(SOURCES))
        if len(measured) != len(self.tasks):
            raise ParameterError("measured", len(measured), f"one measurement per point ({len(self.tasks)})")
        points = []
        for task, (theory, successes) in zip(self.tasks, measured):
            n = task.samples
            verdict = measured_verdict(successes, n, theory.average, alpha=self.alpha, interval_alpha=self.alpha,
                                       rounds=len(self.tasks))
            points.append(SweepPoint(task.epsilon, task.delta, task.parties, task.function, task.rule,
                                     "central" if task.observer == "central" else "party 0", theory.average,
                                     theory.worst_case, theory.curator, successes / n, successes, n,
                                     verdict.ci_low, verdict.ci_high, verdict.test.p_value, verdict.test.consistent))
        return SweepResult(tuple(points), self.inputs, self.alpha, source)


def plan_sweep(
    epsilon: Sequence[float] | NDArray[np.float64] | EpsilonGrid,
    *,
    parties: int | Iterable[int] = 101,
    delta: float | Iterable[float] = 0.0,
    function: str | Iterable[str] = "majority",
    rule: str | Iterable[str] | None = None,
    observer: str | Iterable[str] | None = None,
    samples: int = 100_000,
    seed: int = 0,
    alpha: float = 0.05,
    scale: str = "log",
    protocol: str = "rr",
    solved: Sequence[int] | None = None,
) -> SweepPlan:
    """Check a sweep's arguments and lay out its points and their seeds.

    Args:
        epsilon: the grid, nats (e.g. :func:`mpdp.analysis.sweeps.grid.epsilon_grid`, or an
            :class:`~mpdp.analysis.sweeps.grid.EpsilonGrid` whose values are made as the points run); each
            finite and >= 0.
        parties, delta, function, rule, observer: one value or several each (the grid is their product).
            function: a symmetric one; rule: ``average``/``worst-case`` (None: both); observer:
            ``central``/``party`` (None: both).
        samples: measurements per point (>= 1): Monte Carlo repetitions, or live rounds.
        seed: root of the per-point SeedSequence children (>= 0).
        alpha: family-wise level of the verdicts and 1 - level of the intervals, in (0, 1).
        scale: how the grid was spaced (``log``/``linear``), for the plot.
        protocol: ``rr`` (randomized response and the observer's optimal rule) or ``curator`` (the trusted
            curator's release of f by 001's optimal central mechanism; a binary f, no rule or observer).
        solved: the numbers of participants every point's rules are solved for (a dataset sweep: each
            round's participant count, :func:`mpdp.analysis.sweeps.dataset_sweep.plan_dataset_sweep`); the size
            limits and the worst-case LP's refusal are checked at these. None: each point's k.

    Raises:
        ParameterError, SizeLimitError: as :func:`sweep`; solved not integers >= 1.
    """
    grid: Sequence[float] = epsilon if isinstance(epsilon, EpsilonGrid) else _as_tuple(epsilon, check_epsilon)
    if not isinstance(grid, EpsilonGrid) and (not grid or not all(math.isfinite(e) for e in grid)):
        raise ParameterError("epsilon", epsilon, "one or more finite values >= 0")  # a grid_range is checked
    if protocol not in PROTOCOLS:
        raise ParameterError("protocol", protocol, "one of " + ", ".join(PROTOCOLS))
    ks = _as_tuple(parties, _check_parties)
    deltas = _as_tuple(delta, check_delta)
    functions = _as_tuple(function, _check_function)
    if protocol == "curator":
        for name in functions:
            if parse_function(name).output_size(max(ks)) != 2:
                raise ParameterError("function", name, "a binary function (majority, and, or, threshold:T, xor) "
                                     "with protocol curator")
        for name, given in (("rule", rule), ("observer", observer)):
            if given is not None:
                raise ParameterError(name, given, "none with protocol curator (its release is the decision)")
        rules, observers = ("curator",), ("central",)
    else:
        rules = _as_tuple(RULE_KINDS if rule is None else rule, check_kind)
        observers = _as_tuple(OBSERVERS if observer is None else observer, _check_observer)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ParameterError("samples", samples, "an integer >= 1")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError("seed", seed, "an integer >= 0")
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    if scale not in SCALES:
        raise ParameterError("scale", scale, "one of " + ", ".join(SCALES))
    sizes = None if solved is None else _as_tuple(solved, _check_parties)
    largest = max(ks) if not sizes else max(sizes)
    if max(deltas) > 0 and largest > FOUR_OUTPUT_GROUP_MAX and protocol == "rr":
        raise SizeLimitError("parties", largest, FOUR_OUTPUT_GROUP_MAX,
                             "with delta > 0, four-output randomized response; delta=0, pure randomized response, "
                             "holds thousands of parties")
    tasks = SweepTasks(functions, ks, deltas, rules, observers, grid, int(samples))
    if protocol == "rr":
        check_exact_rules(tasks.settings(), sizes)
    _check_worst_case(tasks.settings(), sizes)
    settings = {"scale": scale, "parties": list(ks), "delta": list(deltas), "function": list(functions),
                "rule": list(rules), "observer": list(observers), "samples": int(samples), "seed": int(seed),
                "alpha": alpha, "measure": "zero-one", "protocol": protocol}
    return SweepPlan(tasks, SeedChildren(int(seed), len(tasks)), settings, alpha)


def _check_worst_case(tasks: Sequence[SweepTask], sizes: Sequence[int] | None) -> None:
    """Refuse, before any point runs, a worst-case LP that no engine holds or that is estimated over the
    default time limit (:func:`mpdp.protocols.rules.optimal.worst_case_refusal`; a point's LP runs under that
    fixed limit, whatever the sweep's ``time_limit``, and the refusal says so), at every number of participants
    a point solves (``sizes``; None: its k). Its size depends on the function, the participants, delta and
    observer, not on epsilon: one check per such setting.

    Raises:
        SizeLimitError: (a :class:`CostLimitError` naming the estimate) the LP of a worst-case point;
            the alternative named is the average rule.
    """
    for task, n in distinct_problems((t for t in tasks if t.rule == "worst-case"), sizes):
        refusal = worst_case_refusal([RandomizedResponse(task.epsilon, task.delta)] * n,
                                     parse_function(task.function), None,
                                     None if task.observer == "central" else 0)
        if isinstance(refusal, CostLimitError):
            fixed = refusal.limit.endswith("time limit")  # a point's LP runs under the default, not the sweep's limit
            e = dataclasses.replace(refusal.estimate, alternative=(
                f"the worst-case rule of {task.function} for {n:,} {noun(n, 'party', 'parties')}: use "
                "rule='average' (exact at any size), or fewer parties"))
            limit = refusal.limit + (" of one point's LP (fixed: time_limit=SECONDS bounds the whole sweep's "
                                     "estimate, not one LP)" if fixed else "")
            raise CostLimitError(e, limit, f"{e.task} ({e.size}) would take {e.describe()}, over {limit}: "
                                           f"{e.alternative}")
        if refusal is not None:
            raise refusal


def sweep(
    epsilon: Sequence[float] | NDArray[np.float64] | EpsilonGrid,
    *,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Unpack[SweepOptions],
) -> SweepResult:
    """Exact and Monte Carlo accuracy of the optimal rules over a grid (module docstring).

    Args:
        epsilon: the grid, nats (as :func:`plan_sweep`); each finite and >= 0.
        options: the grid's other axes and the measurement (:class:`SweepOptions`, defaults of :func:`plan_sweep`).
        executor: a :class:`concurrent.futures.Executor` to run points on; None runs them here.
        progress: called as ``progress(0, total)`` once the inputs are checked, then ``progress(done, total)``
            after each point.

    Returns:
        a :class:`SweepResult`.

    Raises:
        ParameterError: any bad value (named, with what is allowed); a rule or observer, or a function
            that is not binary (``sum``), with protocol curator.
        SizeLimitError: delta > 0 with more than ``FOUR_OUTPUT_GROUP_MAX`` parties (no exact engine
            holds the four-output count classes, so there is no exact theory to test against); the worst-case
            LP of a worst-case point, or a point's exact rule (:func:`mpdp.analysis.sweeps.sweep_cost.check_exact_rules`:
            ``sum`` at 20,000 parties; majority at 10^6, whose banded likelihood alone would need hundreds of GB),
            estimated over the default time limit or the machine's memory (a ``CostLimitError``, raised
            before any point runs and before any of its tables is built). No number of parties is refused
            for itself: every point's exact theory is the symmetric engine's, and its cost estimate decides.

    Example:
        >>> from mpdp.analysis.sweeps.sweep import sweep
        >>> r = sweep([0.5, 1.0], parties=11, rule="average", observer="central", samples=2000, seed=1)
        >>> [round(p.theoretical_accuracy, 4) for p in r.points]
        [0.5825, 0.6608]
        >>> r.consistent
        True
    """
    return plan_sweep(epsilon, **options).run(executor, progress)


#: Points submitted to an executor and not yet collected, at most: a long sweep's futures, like its
#: tasks, are made as the points run.
WINDOW = 256


def run_points(run: Callable[..., T], plan: SweepPlan, executor: Executor | None,
               progress: Callable[[int, int], None] | None, *extra: Any) -> list[T]:
    """``run(task, seed, *extra)`` of every point of ``plan``, in order: here, or on ``executor`` with at
    most :data:`WINDOW` points submitted ahead of the one collected.

    Args:
        run: a top-level function (executors pickle it). progress: called as ``progress(0, total)``, then
            ``progress(done, total)`` after each point.

    Returns:
        one value per point, in grid order.
    """
    total = len(plan.tasks)
    if progress is not None:
        progress(0, total)
    measured: list[T] = []
    points = zip(plan.tasks, plan.seeds)
    if executor is None:
        for task, child in points:
            measured.append(run(task, child, *extra))
            if progress is not None:
                progress(len(measured), total)
        return measured
    pending: collections.deque[Future[T]] = collections.deque(
        executor.submit(run, task, child, *extra) for task, child in itertools.islice(points, WINDOW))
    while pending:
        measured.append(pending.popleft().result())
        for task, child in itertools.islice(points, 1):
            pending.append(executor.submit(run, task, child, *extra))
        if progress is not None:
            progress(len(measured), total)
    return measured
