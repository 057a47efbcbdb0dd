"""Accuracy against epsilon: exact theory and Monte Carlo measurement over a grid, with a verdict per point.

For every point of the grid (epsilon x k x delta x f x rule kind x observer) all k parties run randomized
response at (epsilon, delta) (four-output when delta > 0, 000 §5.1) and the observer (the central observer,
or party 0 who also knows its own bit) applies its optimal rule of 002 (average: eqs. (2), (5); worst case:
eqs. (4), (6)), built by :func:`mpdp.protocols.rule_factory.decision_rule`. Per point:

* theory, exact (:func:`mpdp.analysis.accuracy.rule_accuracy`): the rule's average accuracy over uniform
  inputs (002 eq. (1)), which is what the Monte Carlo measures, and its worst-case accuracy (eq. (3));
* measurement: ``samples`` repetitions by :func:`mpdp.analysis.accuracy.monte_carlo_accuracy` (zero-one
  measure: each repetition is right or wrong), with its Clopper-Pearson interval at level 1 - alpha;
* verdict: the two-sided exact binomial test of the count of right decisions against the theory, at level
  alpha / (number of points) (Bonferroni: the chance that any point of a correct engine is flagged is at
  most alpha) (:func:`mpdp.analysis.stats.consistency_test`);
* for majority, the accuracy of the optimal central (trusted curator) mechanism of 001 at the same
  (epsilon, delta) per voter (:func:`mpdp.protocols.majority_mechanism.central_majority_mechanism`).

Randomness: point i draws from ``default_rng(SeedSequence(seed).spawn(points)[i])``, so the result is the
same bit for bit whatever the executor and the number of workers.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.accuracy import monte_carlo_accuracy, rule_accuracy
from mpdp.analysis.documents import versioned
from mpdp.analysis.plot_style import EPSILON_LABEL, new_axes
from mpdp.analysis.stats import clopper_pearson, consistency_test
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.factors import FOUR_OUTPUT_GROUP_MAX, PURE_GROUP_MAX
from mpdp.protocols.functions import parse_function
from mpdp.protocols.majority_mechanism import central_majority_mechanism
from mpdp.protocols.mechanisms import RandomizedResponse, check_delta, check_epsilon
from mpdp.protocols.rule_factory import decision_rule
from mpdp.protocols.rules import RULE_KINDS, check_kind
from mpdp.protocols.table_rule import TableRule

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OBSERVERS", "SCALES", "SweepPoint", "SweepResult", "epsilon_grid", "sweep"]

#: Spacing of the epsilon grid.
SCALES = ("log", "linear")
#: Who decides: the central observer, or party 0 (its rule also takes its own bit, 002 eq. (2)).
OBSERVERS: tuple[str, ...] = ("central", "party")


def epsilon_grid(low: float, high: float, steps: int, scale: str = "log") -> NDArray[np.float64]:
    """``steps`` values of epsilon from ``low`` to ``high`` (both included), evenly spaced in ``scale``.

    Returns:
        float64 (steps,), in nats.

    Raises:
        ParameterError: epsilon not finite and >= 0, low > high, steps < 1 (or > 1 with low == high allowed),
            a log scale starting at 0, an unknown scale.
    """
    lo, hi = check_epsilon(low), check_epsilon(high)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ParameterError("epsilon range", f"{low}:{high}", "finite LO <= HI")
    if steps < 1:
        raise ParameterError("steps", steps, "an integer >= 1")
    if scale not in SCALES:
        raise ParameterError("scale", scale, "one of " + ", ".join(SCALES))
    if scale == "log":
        if lo == 0.0:
            raise ParameterError("epsilon range", f"{low}:{high}", "LO > 0 on a log scale (or --scale linear)")
        return np.geomspace(lo, hi, steps)
    return np.linspace(lo, hi, steps)


def grid_of(text: str, scale: str = "log", name: str = "epsilon") -> NDArray[np.float64]:
    """The grid that ``"LO:HI:STEPS"`` names (:func:`epsilon_grid` in ``scale``); one number ``"E"`` is (E,).

    Raises:
        ParameterError: named ``name``: another shape, a value that is not a number, STEPS not an integer
            >= 1; or as :func:`epsilon_grid`.
    """
    parts = text.strip().split(":")
    try:
        low, high, steps = ((float(parts[0]), float(parts[0]), 1) if len(parts) == 1
                            else (float(parts[0]), float(parts[1]), int(parts[2])) if len(parts) == 3
                            else (0.0, 0.0, 0))
    except ValueError:
        steps = 0
    if steps < 1:
        raise ParameterError(name, text, "LO:HI:STEPS (e.g. 0.05:2:20) or one value")
    return epsilon_grid(low, high, steps, scale if steps > 1 else "linear")


@dataclass(frozen=True, slots=True)
class SweepPoint:
    """One point of a sweep.

    Attributes:
        epsilon (nats), delta, parties (k), function, rule (``average``/``worst-case``), observer
            (``central``/``party 0``): the setting.
        theoretical_accuracy: exact average accuracy of the rule (002 eq. (1)), what is measured.
        theoretical_worst_case: exact worst-case accuracy of the rule (eq. (3)).
        central_accuracy: average accuracy of 001's optimal central mechanism (majority only, else None).
        empirical_accuracy: successes / samples; successes, samples: the Monte Carlo counts.
        ci_low, ci_high: Clopper-Pearson interval at level 1 - alpha.
        p_value: the exact binomial test's; consistent: p_value >= alpha / points.
    """

    epsilon: float
    delta: float
    parties: int
    function: str
    rule: str
    observer: str
    theoretical_accuracy: float
    theoretical_worst_case: float
    central_accuracy: float | None
    empirical_accuracy: float
    successes: int
    samples: int
    ci_low: float
    ci_high: float
    p_value: float
    consistent: bool


#: One point to run: (epsilon, delta, parties, function, rule, observer, samples).
_Task = tuple[float, float, int, str, str, str, int]


@dataclass(frozen=True, slots=True)
class _Measured:
    theory: float
    worst: float
    central: float | None
    successes: int


def _run_point(task: _Task, seed: np.random.SeedSequence) -> _Measured:
    """Theory and measurement of one point (a top-level function: executors pickle it)."""
    epsilon, delta, k, name, kind, who, samples = task
    f = parse_function(name)
    mechs = [RandomizedResponse(epsilon, delta)] * k
    w = np.eye(f.output_size(k))
    observer = None if who == "central" else 0
    rule = decision_rule(mechs, f, w, kind=kind, observer=observer)
    assert isinstance(rule, TableRule)  # sweep() checked that an exact engine holds every point
    exact = rule_accuracy(rule, f, w)
    assert exact.worst_case is not None  # exact accuracy always has its worst case
    estimate = monte_carlo_accuracy(rule, f, w, samples, np.random.default_rng(seed))
    assert estimate.successes is not None  # the zero-one measure counts right decisions
    central = None
    if name in ("majority", "passed") and who == "central":
        central = central_majority_mechanism(k, epsilon, delta).average_accuracy()
    return _Measured(exact.average, exact.worst_case, central, estimate.successes)


@dataclass(frozen=True, slots=True)
class SweepResult:
    """The points of a sweep and what produced them.

    Attributes:
        points: one :class:`SweepPoint` per setting, in grid order (epsilon fastest).
        inputs: the arguments of :func:`sweep` (JSON-ready).
        alpha: family-wise level of the verdicts (each point tested at alpha / len(points)).
    """

    points: tuple[SweepPoint, ...]
    inputs: dict[str, Any]
    alpha: float

    @property
    def consistent(self) -> bool:
        """True when every point is consistent with theory."""
        return all(p.consistent for p in self.points)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``schema_version``, ``mpdp_version``, ``inputs``, ``alpha``, ``consistent``, ``points``."""
        return versioned("sweep", {"alpha": self.alpha,
                "test": "two-sided exact binomial test per point at level alpha / points (Bonferroni); "
                        "interval: Clopper-Pearson at level 1 - alpha",
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
        """Accuracy against epsilon: theory curves (solid: the rule's average accuracy; dotted: its worst
        case; dash-dot black: the optimal central mechanism), measured points with their intervals as error
        bars (a red cross marks an inconsistent point). Never changes matplotlib's backend.

        Args:
            ax: the axes to draw on; None makes a new :class:`matplotlib.figure.Figure`.

        Returns:
            the Figure holding the axes.
        """
        fig, ax = new_axes(ax, size=(8.0, 5.0))
        series: dict[tuple[str, int, float, str, str], list[SweepPoint]] = {}
        for p in self.points:
            series.setdefault((p.function, p.parties, p.delta, p.rule, p.observer), []).append(p)
        central_drawn: set[tuple[str, int, float]] = set()
        for (fname, k, delta, rule, observer), pts in series.items():
            pts = sorted(pts, key=lambda p: p.epsilon)
            eps = np.array([p.epsilon for p in pts])
            label = f"{fname}, k={k}" + (f", delta={delta:g}" if delta else "") + f", {rule} rule, {observer}"
            line, = ax.plot(eps, [p.theoretical_accuracy for p in pts], "-", label=f"theory: {label}")
            color = line.get_color()
            ax.plot(eps, [p.theoretical_worst_case for p in pts], ":", color=color, linewidth=1)
            y = np.array([p.empirical_accuracy for p in pts])
            err = np.array([[p.empirical_accuracy - p.ci_low for p in pts], [p.ci_high - p.empirical_accuracy for p in pts]])
            ax.errorbar(eps, y, yerr=np.clip(err, 0.0, None), fmt="o", markersize=3, color=color, capsize=2)
            bad = [p for p in pts if not p.consistent]
            if bad:
                ax.plot([p.epsilon for p in bad], [p.empirical_accuracy for p in bad], "x", color="red",
                        markersize=9, label="inconsistent with theory")
            key = (fname, k, delta)
            central = [p.central_accuracy for p in pts if p.central_accuracy is not None]
            if key not in central_drawn and len(central) == len(pts):
                central_drawn.add(key)
                ax.plot(eps, central, "-.", color="black", linewidth=1,
                        label=f"optimal central mechanism (001): {fname}, k={k}")
        if self.inputs.get("scale") == "log":
            ax.set_xscale("log")
        ax.set_xlabel(EPSILON_LABEL)
        ax.set_ylabel("accuracy: P(decision = f(x)), x uniform")
        samples = self.inputs.get("samples")
        ax.set_title(f"Accuracy against epsilon: exact theory (lines; dotted = worst case) and Monte Carlo\n"
                     f"({samples} samples per point, {100 * (1 - self.alpha):g}% Clopper-Pearson intervals; "
                     f"{sum(not p.consistent for p in self.points)} of {len(self.points)} points inconsistent)",
                     fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        return fig

    def __repr__(self) -> str:
        eps = [p.epsilon for p in self.points]
        flagged = sum(not p.consistent for p in self.points)
        return (f"SweepResult({len(self.points)} points, epsilon {min(eps, default=0):g}..{max(eps, default=0):g}, "
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


def sweep(
    epsilon: Sequence[float] | NDArray[np.float64],
    *,
    parties: int | Iterable[int] = 101,
    delta: float | Iterable[float] = 0.0,
    function: str | Iterable[str] = "majority",
    rule: str | Iterable[str] = RULE_KINDS,
    observer: str | Iterable[str] = OBSERVERS,
    samples: int = 100_000,
    seed: int = 0,
    alpha: float = 0.05,
    scale: str = "log",
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> SweepResult:
    """Exact and Monte Carlo accuracy of the optimal rules over a grid (module docstring).

    Args:
        epsilon: the grid, nats (e.g. :func:`epsilon_grid`); each finite and >= 0.
        parties, delta, function, rule, observer: one value or several each (the grid is their product).
            function: a symmetric one; rule: ``average``/``worst-case``; observer: ``central``/``party``.
        samples: Monte Carlo repetitions per point (>= 1).
        seed: root of the per-point SeedSequence children (>= 0).
        alpha: family-wise level of the verdicts and 1 - level of the intervals, in (0, 1).
        scale: how the grid was spaced (``log``/``linear``), for the plot.
        executor: a :class:`concurrent.futures.Executor` to run points on; None runs them here.
        progress: called as ``progress(0, total)`` once the inputs are checked, then ``progress(done, total)``
            after each point.

    Returns:
        a :class:`SweepResult`.

    Raises:
        ParameterError: any bad value (named, with what is allowed).
        SizeLimitError: more than ``PURE_GROUP_MAX`` parties (the symmetric engine's exact theory); delta > 0
            with more than ``FOUR_OUTPUT_GROUP_MAX`` parties (no exact engine
            holds the four-output count classes, so there is no exact theory to test against).

    Example:
        >>> from mpdp.analysis.sweep import sweep
        >>> r = sweep([0.5, 1.0], parties=11, rule="average", observer="central", samples=2000, seed=1)
        >>> [round(p.theoretical_accuracy, 4) for p in r.points]
        [0.5825, 0.6608]
        >>> r.consistent
        True
    """
    grid = _as_tuple(epsilon, check_epsilon)
    if not grid or not all(math.isfinite(e) for e in grid):
        raise ParameterError("epsilon", epsilon, "one or more finite values >= 0")
    ks = _as_tuple(parties, _check_parties)
    deltas = _as_tuple(delta, check_delta)
    functions = _as_tuple(function, _check_function)
    rules = _as_tuple(rule, check_kind)
    observers = _as_tuple(observer, _check_observer)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise ParameterError("samples", samples, "an integer >= 1")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ParameterError("seed", seed, "an integer >= 0")
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    if scale not in SCALES:
        raise ParameterError("scale", scale, "one of " + ", ".join(SCALES))
    if max(deltas) > 0 and max(ks) > FOUR_OUTPUT_GROUP_MAX:
        raise SizeLimitError("parties with delta > 0", max(ks), FOUR_OUTPUT_GROUP_MAX,
                             "delta 0 (pure randomized response holds thousands of parties)")
    if max(ks) > PURE_GROUP_MAX:  # every point needs the exact theory of the symmetric engine
        raise SizeLimitError("parties", max(ks), PURE_GROUP_MAX,
                             "mpdp accuracy --engine counts for the exact accuracy of majority-type functions "
                             "at up to 200,000 parties")
    tasks: list[_Task] = [(e, d, k, f, r, o, int(samples))
             for f, k, d, r, o, e in itertools.product(functions, ks, deltas, rules, observers, grid)]
    seeds = np.random.SeedSequence(int(seed)).spawn(len(tasks))
    if progress is not None:
        progress(0, len(tasks))
    if executor is None:
        measured = []
        for i, (task, child) in enumerate(zip(tasks, seeds)):
            measured.append(_run_point(task, child))
            if progress is not None:
                progress(i + 1, len(tasks))
    else:
        futures = [executor.submit(_run_point, task, child) for task, child in zip(tasks, seeds)]
        for i, future in enumerate(futures):
            future.result()
            if progress is not None:
                progress(i + 1, len(tasks))
        measured = [future.result() for future in futures]
    points = []
    n = int(samples)
    for (e, d, k, f, r, o, _), m in zip(tasks, measured):
        low, high = clopper_pearson(m.successes, n, alpha)
        verdict = consistency_test(m.successes, n, min(max(m.theory, 0.0), 1.0), alpha=alpha, rounds=len(tasks))
        points.append(SweepPoint(e, d, k, f, r, "central" if o == "central" else "party 0", m.theory, m.worst,
                                 m.central, m.successes / n, m.successes, n, low, high, verdict.p_value,
                                 verdict.consistent))
    inputs = {"epsilon": list(grid), "scale": scale, "parties": list(ks), "delta": list(deltas),
              "function": list(functions), "rule": list(rules), "observer": list(observers),
              "samples": int(samples), "seed": int(seed), "alpha": alpha, "measure": "zero-one"}
    return SweepResult(tuple(points), inputs, alpha)
