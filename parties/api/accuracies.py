"""``mpdp.accuracy``: the optimal decision rules of 002 and their exact accuracy (``mpdp accuracy``).

Example:
    >>> import mpdp
    >>> r = mpdp.accuracy(epsilon=[0.5, 1.0, 1.5], function="majority")
    >>> r.engine, round(r.average_accuracy("average"), 6), round(r.worst_case_accuracy("worst-case"), 6)
    ('general', 0.676759, 0.589098)
"""

from __future__ import annotations

import functools
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.theory.monte_carlo_cost import monte_carlo_cost, wide_monte_carlo_cost
from mpdp.parties.api.estimates import estimate, rules_title
from mpdp.parties.api.keywords import checked_keywords
from mpdp.parties.api.params import check_count, function_of, randomized_responses
from mpdp.parties.api.result import Result, strict_document
from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.protocols.decision.engines import GENERAL_MAX_TRANSCRIPTS
from mpdp.protocols.decision.worst_case import TIME_LIMIT_STATUS
from mpdp.protocols.errors import CostLimitError, ParameterError, SizeLimitError, SolverError
from mpdp.protocols.functions import BooleanFunction, Measure, accuracy_measure, error_measure
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT, check_time_limit
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.count_threshold import (
    count_engine_cost,
    count_threshold_applies,
    count_threshold_rule,
)
from mpdp.protocols.rules.optimal import OptimalRules, optimal_rules, worst_case_estimate
from mpdp.protocols.rules.symmetric import observer_average_rule

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["Accuracy", "accuracy", "compact_values"]


@dataclass(frozen=True, repr=False)
class Accuracy(Result):
    """The optimal rules' accuracies (``mpdp accuracy --json``).

    Attributes:
        document: ``k``, ``function``, ``measure``, ``observer``, [``worst_case_skipped``], ``engine``,
            ``rules`` (``average`` and/or ``worst_case``: ``average_accuracy``, ``worst_case_accuracy``,
            ``exact``, ...), ``estimates`` (per rule computed, the cost model's estimate of the engine that
            ran, as its refusal would word it: ``"the count engine (...): about 2 s and 180 MB"``), ``seconds``.
    """

    document: dict[str, Any]

    @property
    def engine(self) -> str:
        """``general``, ``symmetric`` or ``posterior-monte-carlo`` (an estimate)."""
        return str(self.document["engine"])

    def average_accuracy(self, rule: str = "average") -> float:
        """002 eq. (1) of the optimal ``rule`` (``average`` or ``worst-case``).

        Raises:
            ParameterError: that rule was not computed.
        """
        return float(self._rule(rule)["average_accuracy"])

    def worst_case_accuracy(self, rule: str = "worst-case") -> float | None:
        """002 eq. (3) of the optimal ``rule``; None for a Monte Carlo estimate."""
        value = self._rule(rule)["worst_case_accuracy"]
        return None if value is None else float(value)

    def _rule(self, rule: str) -> dict[str, Any]:
        rules: dict[str, Any] = self.document["rules"]
        key = rule.replace("-", "_")
        if key not in rules:
            raise ParameterError("rule", rule, f"one computed here: {', '.join(r.replace('_', '-') for r in rules)}")
        found: dict[str, Any] = rules[key]
        return found

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per rule: its average and worst-case accuracy."""
        return [{"rule": key.replace("_", "-"), "average_accuracy": vals["average_accuracy"],
                 "worst_case_accuracy": vals["worst_case_accuracy"], "exact": vals["exact"]}
                for key, vals in self.document["rules"].items()]

    def summary(self) -> str:
        parts = ", ".join(f"{r['rule']} rule: average {r['average_accuracy']:.4g}"
                          + ("" if r["worst_case_accuracy"] is None else f", worst case {r['worst_case_accuracy']:.4g}")
                          for r in self.rows())
        return f"k={self.document['k']} {self.document['function']} ({self.engine}): {parts}"

    def draw(self, ax: Axes | None) -> Figure:
        """Grouped bars: average and worst-case accuracy of each rule (gids ``<rule>:<criterion>``)."""
        from mpdp.analysis.plot_style import COLORS, new_axes

        figure, ax = new_axes(ax, (5.5, 3.5))
        rows = self.rows()
        xs = np.arange(len(rows))
        for offset, (criterion, colour) in enumerate((("average_accuracy", COLORS[0]),
                                                      ("worst_case_accuracy", COLORS[1]))):
            values = [np.nan if r[criterion] is None else r[criterion] for r in rows]
            bars = ax.bar(xs + (offset - 0.5) * 0.38, values, width=0.38, color=colour,
                          label=criterion.replace("_", " ").replace("accuracy", "").strip())
            for bar, r in zip(bars, rows, strict=True):
                bar.set_gid(f"{r['rule']}:{criterion}")
        ax.set_xticks(xs, [f"{r['rule']} rule" for r in rows])
        ax.set_ylabel(f"accuracy ({self.document['measure']})")
        ax.set_title(rules_title(self.document, "optimal rules"), fontsize=9)
        ax.legend(fontsize=8)
        return figure


def compact_values(values: float | str | Sequence[float]) -> float | str:
    """How the inputs echo one value per party: a number as given, a list in the compact form
    ``mpdp accuracy --epsilon`` reads (runs of equal values as ``VALUE*COUNT``, comma-separated), so that
    10^6 identical parties echo as ``"1*1000000"``, not 10^6 numbers.

    Args:
        values: a number, a sequence of numbers (floats; ``inf`` allowed), or a text in that form.

    Returns:
        the number or the text as given, or a str such as ``"0.5,1*3"``.

    Example:
        >>> compact_values([0.5, 1.0, 1.0, 1.0]), compact_values(2.0)
        ('0.5,1*3', 2.0)
    """
    if isinstance(values, (int, float, str)):
        return values
    pieces = []
    for value, run in itertools.groupby(float(v) for v in values):
        text = repr(value).removesuffix(".0")
        count = sum(1 for _ in run)
        pieces.append(text if count == 1 else f"{text}*{count}")
    return ",".join(pieces)


def _optimal_rules_in_time(mechanisms: Sequence[RandomizedResponse], f: BooleanFunction, w: Measure,
                           party: int | None, rule: str, engine: str, measure: str, time_limit: float | None,
                           report: dict[str, Any]) -> OptimalRules:
    """:func:`optimal_rules`; with ``rule="both"`` a worst-case LP that HiGHS stopped at the time limit (its
    estimate said it would fit) leaves the average rule, and ``report["worst_case_skipped"]`` says why."""
    try:
        return optimal_rules(mechanisms, f, w, party, rule, engine, measure, time_limit)
    except SolverError as exc:
        if rule != "both" or exc.status != TIME_LIMIT_STATUS:
            raise
        report["worst_case_skipped"] = (f"the worst-case LP did not finish within the time limit ({exc}): use "
                                        "the average rule, or allow more time (time_limit=SECONDS)")
        return optimal_rules(mechanisms, f, w, party, "average", engine, measure, time_limit)


def _count_engine_report(mechanisms: Sequence[RandomizedResponse], f: BooleanFunction, w: NDArray[np.float64],
                         time_limit: float | None) -> dict[str, Any]:
    """The engine and the average rule's exact accuracies by the count engine
    (:func:`mpdp.protocols.rules.count_threshold.count_threshold_rule`), as the document words them."""
    threshold = count_threshold_rule(mechanisms, f, w, time_limit)
    return {"engine": threshold.engine, "rules": {"average": {
        "average_accuracy": threshold.average_accuracy, "worst_case_accuracy": threshold.worst_case_accuracy,
        "exact": True}}}


def _general_estimate(mechanisms: Sequence[RandomizedResponse]) -> str:
    """The general engine's words where no time model exists: its size against its limit."""
    bits = sum(int(m.num_symbols).bit_length() - 1 for m in mechanisms)  # 2 or 4 outputs a party
    return (f"the general engine (2^{bits} transcripts, at most 2^{GENERAL_MAX_TRANSCRIPTS.bit_length() - 1}): "
            "no time model, bounded by its size")


@checked_keywords("mpdp.accuracy")
def accuracy(
    epsilon: float | str | Sequence[float],
    function: str | BooleanFunction = "majority",
    delta: float | str | Sequence[float] = 0.0,
    parties: int | None = None,
    measure: str = "zero-one",
    party: int | None = None,
    rule: str = "both",
    engine: str = "auto",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
    samples: int = 100_000,
    seed: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Accuracy:
    """The optimal average-case rule (002 eq. (4)) and worst-case rule (LP, eq. (6)) and their exact
    accuracies (eqs. (1), (3)) for k parties each releasing its bit by randomized response.

    Args:
        epsilon: one epsilon (nats) per party, or one with ``parties``; a text as ``--epsilon`` reads it
            (``"0.5,1"``, ``"1*3"``). delta: one for all, or one per party (a text likewise).
        function: ``xor``, ``and``, ``or``, ``majority``, ``threshold:T``, ``sum``, ``table:V0,V1,...``.
        measure: ``zero-one`` (default), ``absolute-error``, ``squared-error`` (these two held as their
            formula, no |Y| x |Y| table: the average rule is the posterior median or mean,
            :mod:`mpdp.protocols.decision.error_rules`; ``sum`` of 10^5 equal parties is exact).
        party: the deciding party (0-based); None: the central observer.
        rule: ``average``, ``worst-case`` or ``both`` (default; the LP only where it fits, else
            ``worst_case_skipped`` says why). engine: ``auto``, ``general``, ``symmetric`` or ``counts``
            (the average rule as a threshold on per-group counts: monotone binary symmetric f, pure
            randomized response in 1 or 2 groups of equal epsilon; ``auto`` uses it for the average rule alone
            where its estimate is below the symmetric engine's, or where the other exact engines do not fit:
            the engine is chosen by the cost estimates, never by a size).
        time_limit: seconds allowed (default 60; None: no limit): work estimated to take longer (the
            worst-case LP, the Monte Carlo fallback) is skipped (``rule="both"``) or refused, naming the
            estimate; an exact average rule estimated to take longer
            (:func:`mpdp.protocols.decision.engine_cost.symmetric_rule_cost`: ``sum`` at 20,000 parties) goes to the
            fallbacks as one too large for the exact engines. samples, seed: the Monte Carlo fallback
            (:func:`mpdp.estimate`) for a symmetric f too large for the exact engines. progress: called with the transcripts each batch
            of that Monte Carlo estimate drew (nothing is called on the exact paths).

    Returns:
        :class:`Accuracy` (``to_dict()`` is ``mpdp accuracy --json``).

    Raises:
        ParameterError: bad values; SizeLimitError: too large for the engine asked for.

    Example:
        >>> accuracy(epsilon=1.0, parties=2, function="xor").worst_case_accuracy()
        0.6...
    """
    party = None if party is None else check_count("party", party, low=0)
    samples = check_count("samples", samples)
    seed = None if seed is None else check_count("seed", seed, low=0)
    mechanisms = randomized_responses(epsilon, delta, parties)
    k = len(mechanisms)
    f = function_of(function)
    # the error measures as their formula (no table: sum's w is (k + 1)^2 float64, 80 GB at 10^5 parties; the
    # average rule then is the posterior mean or median); zero-one as its table, built only where an engine
    # uses it, after that engine's estimate (which counts it) said it fits; the name is checked now
    formula = error_measure(measure, f.output_size(k))
    w_of = functools.cache(lambda: accuracy_measure(measure, f.output_size(k)))
    binary = f.output_size(k) == 2  # the count engine's functions: w is 2 x 2
    started = time.perf_counter()
    report: dict[str, Any] = {"k": k, "function": f.name, "measure": measure,
                              "observer": "central" if party is None else party}
    time_limit = check_time_limit(time_limit)
    counts = engine == "counts"
    if counts and rule == "worst-case":
        raise ParameterError("engine", "counts", "auto, symmetric or general with rule worst-case (the count "
                             "engine gives the average rule only)")
    if counts and not (binary and count_threshold_applies(mechanisms, f, w_of(), party)):
        raise ParameterError("engine", "counts", "a monotone binary symmetric function (majority, and, or, "
                             "threshold:T), the central observer and pure randomized response in 1 or 2 groups "
                             "of equal epsilon (as many parties as its cost estimate allows)")
    estimates: dict[str, str] = {}  # what each rule computed here was estimated to cost (the model's words)
    if rule in ("both", "worst-case") and not counts:  # the worst-case LP only where it fits, and say so
        lp, refusal = worst_case_estimate(mechanisms, f, formula, party, engine, time_limit)
        if refusal is not None and rule == "both":
            rule = "average"
            report["worst_case_skipped"] = str(refusal)
        elif lp is not None:
            estimates["worst_case"] = lp.summary()
    no_lp = rule in ("both", "worst-case") and not counts and "worst_case" not in estimates  # parity views
    count_cost = (count_engine_cost(mechanisms) if engine in ("auto", "counts") and binary
                  and count_threshold_applies(mechanisms, f, w_of(), party) else None)
    count_refused = None if count_cost is None else count_cost.refusal(time_limit)
    result = None
    try:
        exact = (None if engine in ("general", "counts")
                 else symmetric_rule_cost(mechanisms, f, party, measure=measure))
        # the average rule alone: the cheapest exact engine by the estimates (the count engine's 0.05 s against
        # the symmetric engine's banded likelihood, 16 s at 50,000 parties); with the LP the problem is built anyway
        cheaper = (engine == "auto" and rule == "average" and count_cost is not None and count_refused is None
                   and (exact is None or count_cost.seconds < exact.seconds))
        if counts or cheaper:
            if count_refused is not None:
                raise count_refused
            assert count_cost is not None  # count_threshold_applies said it serves the problem
            estimates["average"] = count_cost.summary()
            report.update(_count_engine_report(mechanisms, f, w_of(), time_limit))
        else:
            if exact is not None and (rule != "worst-case" or no_lp):  # the rule's tables: sum's grow as k^3
                exact.check(time_limit)
            rule_cost = _general_estimate(mechanisms) if exact is None else exact.summary()
            if rule != "worst-case":
                estimates["average"] = rule_cost
            if no_lp:  # no LP: the average rule is worst-case optimal (parity views, 002 §3), its cost the rule's
                estimates["worst_case"] = "the average rule's, worst-case optimal here: " + rule_cost
            result = _optimal_rules_in_time(mechanisms, f, w_of() if formula is None else formula, party, rule,
                                            engine, measure, time_limit, report)
    except SizeLimitError as exc:
        if engine != "auto" or rule == "worst-case":
            raise
        if count_refused is not None and (f.count_values(k) is None or rule != "average"):
            raise count_refused from exc
        if count_cost is not None and count_refused is None:  # the count engine fits its estimate
            estimates["average"] = count_cost.summary()
            if rule == "both":
                report["worst_case_skipped"] = str(exc)
            report.update(_count_engine_report(mechanisms, f, w_of(), time_limit))
        elif f.count_values(k) is None or rule != "average":
            raise
        else:
            instead = ("fewer samples (samples=N; the interval widens as 1/sqrt(N)), fewer distinct "
                       "(epsilon, delta), or more time (time_limit=SECONDS)")
            cost = (wide_monte_carlo_cost(mechanisms, f, party, samples, instead)
                    or monte_carlo_cost(observer_average_rule(mechanisms, f, w_of(), party), samples, instead))
            refused = cost.refusal(time_limit)
            if refused is not None:  # the reason no exact engine runs first, then why the fallback does not
                reason = exc if count_refused is None else f"{exc}; {count_refused}"
                raise CostLimitError(cost, refused.limit, f"no exact engine: {reason}; {refused}") from exc
            estimates["average"] = cost.summary()
            fallback = estimate([m.epsilon for m in mechanisms], None, f, [m.delta for m in mechanisms], measure,
                                party, samples, seed, progress=progress, time_limit=time_limit)
            report.update(engine=fallback.document["engine"], rules=fallback.document["rules"])
    if result is not None:
        report["engine"] = result.engine
        rules: dict[str, Any] = {}
        for key, rep in (("average", result.average), ("worst_case", result.worst_case)):
            if rep is None:
                continue
            rules[key] = {"average_accuracy": rep.average_accuracy,
                          "worst_case_accuracy": rep.worst_case_accuracy, "exact": True}
            if rep.upper_bound is not None:
                rules[key]["worst_case_upper_bound"] = rep.upper_bound
        report["rules"] = rules
    if estimates:
        report["estimates"] = {key: estimates[key] for key in ("average", "worst_case")
                               if key in estimates and key in report["rules"]}
    report["seconds"] = round(time.perf_counter() - started, 4)
    inputs = {"epsilon": compact_values(epsilon), "function": function if isinstance(function, str) else function.name,
              "delta": compact_values(delta), "parties": parties, "measure": measure, "party": party, "rule": rule, "engine": engine,
              "samples": samples, "seed": seed}
    return Accuracy(strict_document(report, "accuracy", inputs))
