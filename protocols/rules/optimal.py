"""Optimal decision rules and their exact accuracy, for the central observer or any party.

``optimal_rules`` is the one entry point: it prepares the problem (:func:`mpdp.protocols.decision.engines.build_problem`
picks the engine), computes the average-case rule (002 eq. (5) / (2)) and, on request, the worst-case
rule (the LP of eq. (6) / (4), :mod:`mpdp.protocols.decision.worst_case`), and evaluates both notions of accuracy of
each rule exactly (eqs. (1), (3)). Where the average rule is an equalizer (XOR: the parity of the reports is
right with the same probability on every input, 002 §3) it is also worst-case optimal, certified by its
average accuracy, and no LP runs (at k = 1,001 HiGHS did not finish XOR's LP in 60 s; its size model put it
at 0.5 s).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.engine_cost import exact_rule_cost
from mpdp.protocols.decision.engines import (
    DecisionProblem,
    RuleTable,
    accuracy_summary,
    average_decisions,
    build_problem,
)
from mpdp.protocols.decision.parity import parity_form
from mpdp.protocols.decision.worst_case import lp_cost, solve_worst_case, symmetric_lp_cost
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import BooleanFunction, ErrorMeasure, Measure, measure_bounds
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT, CostEstimate, check_time_limit
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.table_rule import TableRule

__all__ = [
    "RULE_CHOICES",
    "OptimalRules",
    "RuleReport",
    "optimal_rules",
    "worst_case_estimate",
    "worst_case_refusal",
]

def worst_case_refusal(
    mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction,
    measure: Measure | None,
    observer: int | None = None,
    engine: str = "auto",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> SizeLimitError | None:
    """Why the worst-case LP would be refused (before any work), or None when it fits: the refusal of
    :func:`worst_case_estimate`."""
    return worst_case_estimate(mechanisms, function, measure, observer, engine, time_limit)[1]


def worst_case_estimate(
    mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction,
    measure: Measure | Callable[[], NDArray[np.float64]] | None,
    observer: int | None = None,
    engine: str = "auto",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> tuple[CostEstimate | None, SizeLimitError | None]:
    """The worst-case LP's estimated cost (before any work) and why it would be refused.

    For a symmetric f of more than two outputs the symmetric engine's LP is estimated first from the sizes alone
    (:func:`mpdp.protocols.decision.worst_case.symmetric_lp_cost`: no measure or gain table is built, which for
    ``sum`` is (k + 1)^2 float64). Then the problem is prepared (:func:`build_problem`, which picks the
    engine: the symmetric one for a function of the per-group counts) and the LP's time and memory
    estimated from its size (:func:`mpdp.protocols.decision.worst_case.lp_cost`); refused are only sizes no engine
    holds and LPs whose estimate exceeds ``time_limit`` seconds (None: no limit) or the machine's memory.

    Args:
        measure: w, float64 (|Y|, |Y|), or a function that builds it (called only once the sizes fit: ``sum``'s
            w at 10^5 parties is 80 GB), or an error measure's formula (:class:`mpdp.protocols.functions.ErrorMeasure`:
            the LP reads its gain whole, num_inputs x |Y|, which its estimate counts); None: the zero-one measure
            (likewise built only then).

    Returns:
        (the estimate, or None where there is no LP to estimate: a size no engine holds, or parity views,
        whose average rule is worst-case optimal; the :class:`SizeLimitError` (a
        :class:`mpdp.protocols.errors.CostLimitError` naming the estimate) that :func:`optimal_rules` would
        raise, or None when it fits).

    Raises:
        ParameterError: a bad argument (not a size).
    """
    limit = check_time_limit(time_limit)
    try:
        wide = function.output_size(len(mechanisms)) > 2  # a binary f's gain is small (and xor has no LP)
        early = symmetric_lp_cost(mechanisms, function, observer) if wide and engine != "general" else None
        refusal = None if early is None else early.refusal(limit)
        if refusal is not None:
            return early, refusal
        w = np.eye(function.output_size(len(mechanisms))) if measure is None else (
            measure() if callable(measure) else measure)
        problem = build_problem(mechanisms, function, w, observer, engine)
    except SizeLimitError as exc:  # without its traceback, whose frames hold the problem's per-party tuples
        return None, exc.with_traceback(None)
    if _parity_views(problem):  # no LP: the average rule is worst-case optimal (see optimal_rules)
        return None, None
    cost = lp_cost(problem.views)
    return cost, cost.refusal(limit)


RULE_CHOICES = ("average", "worst-case", "both")


@dataclass(frozen=True, slots=True)
class RuleReport:
    """A rule with its exact accuracies.

    Attributes:
        rule: the decision rule.
        average_accuracy: 002 eq. (1) (eq. (9) of 000).
        worst_case_accuracy: eq. (3) (eq. (11) of 000).
        upper_bound: for the worst-case rule, the LP's dual certificate: no rule has a larger worst
            case (None for the average rule).
    """

    rule: TableRule
    average_accuracy: float
    worst_case_accuracy: float
    upper_bound: float | None = None


@dataclass(frozen=True, slots=True)
class OptimalRules:
    """The optimal rules of one observer. ``average`` / ``worst_case`` are None when not asked for."""

    problem: DecisionProblem
    average: RuleReport | None
    worst_case: RuleReport | None

    @property
    def engine(self) -> str:
        """The engine that ran: ``general`` or ``symmetric``."""
        return self.problem.engine


def _rule(problem: DecisionProblem, kind: str, tables: Sequence[RuleTable],
          measure_name: str) -> TableRule:
    groups = tuple(f.members for f in problem.views[0].factors)
    return TableRule(problem.mechanisms, problem.observer, kind, problem.engine, groups,
                        tuple(tables), problem.views[0].num_outputs, problem.function.name,
                        measure_name)


def optimal_rules(
    mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction,
    measure: Measure,
    observer: int | None = None,
    rule: str = "both",
    engine: str = "auto",
    measure_name: str = "",
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> OptimalRules:
    """Compute the optimal rule(s) of the central observer (observer=None) or of party ``observer``.

    Args:
        mechanisms: the k parties' randomized responses.
        function: f; measure: w, float64 (|Y|, |Y|), w[true, guess], or an error measure's formula
            (:func:`mpdp.protocols.functions.error_measure`: the average rule by the posterior mean or median,
            :mod:`mpdp.protocols.decision.error_rules`, no |Y| x |Y| table; the worst-case LP reads the gain).
        observer: None or a party index.
        rule: ``average``, ``worst-case`` or ``both``.
        engine: ``auto``, ``general`` or ``symmetric``.
        measure_name: recorded in the rules.
        time_limit: seconds for the worst-case LP(s) and for the symmetric engine's average rule: either,
            estimated to take longer (:func:`mpdp.protocols.decision.worst_case.lp_cost`,
            :func:`mpdp.protocols.decision.engine_cost.exact_rule_cost`), is refused before it starts, and
            HiGHS stops at it; None = no limit (the machine's memory is always checked). No LP runs for a gain of parity
            form whose average rule is an equalizer (XOR): that rule is the worst-case rule, its upper
            bound its average accuracy (module docstring).

    Raises:
        ParameterError, SizeLimitError: bad arguments or a size no engine holds.
        CostLimitError: the worst-case LP's or the symmetric engine's average rule's estimated time exceeds
            ``time_limit`` or its memory the machine's (the message names the estimate; no likelihood is built).
        SolverError: an LP that HiGHS did not solve to optimality (also: stopped at ``time_limit``).
    """
    if rule not in RULE_CHOICES:
        raise ParameterError("rule", rule, "one of " + ", ".join(RULE_CHOICES))
    time_limit = check_time_limit(time_limit)
    problem = build_problem(mechanisms, function, measure, observer, engine)
    parity = _parity_views(problem)
    if problem.engine == "symmetric" and (rule in ("average", "both") or parity):
        view = problem.views[0]
        name = problem.measure.name if isinstance(problem.measure, ErrorMeasure) else "zero-one"  # a table's
        exact_rule_cost(view.factors, view.num_outputs, len(problem.views), parity,
                        measure=name).check(time_limit)
    if rule in ("worst-case", "both") and not parity:
        lp_cost(problem.views).check(time_limit)
    average = worst = None
    if rule in ("average", "both") or parity:
        decisions = [average_decisions(v) for v in problem.views]
        avg, wc, _ = accuracy_summary(problem, decisions)
        average = RuleReport(_rule(problem, "average", decisions, measure_name), avg, wc)
        if rule in ("worst-case", "both") and _equalizer(problem, avg, wc):
            outputs = problem.views[0].num_outputs
            worst = RuleReport(_rule(problem, "worst-case", [np.eye(outputs)[t] for t in decisions], measure_name),
                               avg, wc, avg)
        if rule == "worst-case":
            average = None
    if rule in ("worst-case", "both") and worst is None:
        if parity:  # not an equalizer after all: the LP, estimated first
            lp_cost(problem.views).check(time_limit)
        solutions = [solve_worst_case(v, time_limit) for v in problem.views]
        tables, avg, wc = _certified_worst_case(problem, [s.table for s in solutions])
        # party: the worst case is the smaller of the two own-bit LPs (002 eq. (4)), so is its bound;
        # a bound below a feasible rule's exact worst case is the LP's tolerance: the rule's value bounds it
        upper = max(min(s.upper_bound for s in solutions), wc)
        worst = RuleReport(_rule(problem, "worst-case", tables, measure_name), avg, wc, upper)
    return OptimalRules(problem, average, worst)


#: An average rule whose worst case is within this (relative to the measure's scale) of its average is
#: taken as an equalizer (its accuracy is the same on every input).
EQUALIZER_TOLERANCE = 1e-12


def _parity_views(problem: DecisionProblem) -> bool:
    """Every view's gain is of parity form with beta = 0 (XOR, :func:`mpdp.protocols.decision.parity.parity_form`):
    the average rule (the parity of the reports) is right on every input with the same probability."""
    forms = [parity_form(v.factors, v.gain) if v.num_outputs == 2 else None for v in problem.views]
    return all(form is not None and form[1] == 0.0 for form in forms)


def _equalizer(problem: DecisionProblem, average: float, worst_case: float) -> bool:
    """The optimal average rule is worst-case optimal when its worst case equals its average: for any rule
    R, worst(R) <= avg(R) <= avg(average rule) = worst(average rule) (002 eqs. (1), (3), (5)); its average
    accuracy is then the certificate (no rule has a larger worst case). Holds for XOR with randomized
    response (002 §3: P(right | x) = P(an even number of flips), the same for every x)."""
    scale = max(1.0, *(abs(b) for b in measure_bounds(problem.measure)))
    return worst_case >= average - EQUALIZER_TOLERANCE * scale


def _certified_worst_case(problem: DecisionProblem, lp_tables: list[RuleTable]
                          ) -> tuple[list[RuleTable], float, float]:
    """The LP's rule, unless a rule known to be feasible has a larger exact worst case: the average
    rule, a constant rule (always y), or the fair coin over Y. The LP is solved to a tolerance (~1e-9),
    so at k = 30 its XOR rule came out at 0.499999999187, below the coin's 1/2; the optimum is never
    reported below a rule anyone can use. Returns (tables, average accuracy, worst-case accuracy),
    each accuracy exact (:func:`accuracy_summary`); the LP's rule wins ties."""
    views = problem.views
    candidates: list[list[RuleTable]] = [lp_tables, [average_decisions(v) for v in views]]
    outputs = views[0].num_outputs
    candidates += [[np.full(v.num_classes, y, dtype=np.int64) for v in views] for y in range(outputs)]
    candidates.append([np.full((v.num_classes, outputs), 1.0 / outputs) for v in views])
    best: tuple[list[RuleTable], float, float] | None = None
    for tables in candidates:
        avg, wc, _ = accuracy_summary(problem, tables)
        if best is None or wc > best[2]:
            best = (tables, avg, wc)
    assert best is not None
    tables, avg, wc = best
    # a worst-case rule is a table of probabilities: a deterministic winner as one-hot rows
    return [np.eye(outputs)[t] if t.ndim == 1 else t for t in tables], avg, wc
