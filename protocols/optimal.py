"""Optimal decision rules and their exact accuracy, for the central observer or any party.

``optimal_rules`` is the one entry point: it prepares the problem (:func:`mpdp.protocols.engines.build_problem`
picks the engine), computes the average-case rule (002 eq. (5) / (2)) and, on request, the worst-case
rule (the LP of eq. (6) / (4), :mod:`mpdp.protocols.worst_case`), and evaluates both notions of accuracy of
each rule exactly (eqs. (1), (3)).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.engines import (
    DecisionProblem,
    RuleTable,
    accuracy_summary,
    average_decisions,
    build_problem,
)
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.mechanisms import RandomizedResponse
from mpdp.protocols.table_rule import TableRule
from mpdp.protocols.worst_case import solve_worst_case

__all__ = [
    "RULE_CHOICES",
    "WORST_CASE_MAX_CLASSES",
    "OptimalRules",
    "RuleReport",
    "check_worst_case_size",
    "optimal_rules",
]

#: Largest number of transcript classes the worst-case LP takes when the parties' parameters are not
#: all equal: the LP over 2^11 classes solves in under a minute here (benchmarks/bench_decision_rules.py:
#: k = 11, 12-25 s; k = 12, 150-340 s). One shared parameter (count classes, a banded LP) has no extra
#: limit beyond the engines' own (majority at k = 10,000 in about 11 s).
WORST_CASE_MAX_CLASSES = 1 << 11


def check_worst_case_size(mechanisms: Sequence[RandomizedResponse]) -> None:
    """Refuse, before any work, a worst-case LP too large to solve in about a minute.

    The count classes of parties with equal parameters multiply across groups: 1 + n_g for a pure
    group, C(n_g + 3, 3) for a four-output group.

    Raises:
        SizeLimitError: more than one parameter group and more than ``WORST_CASE_MAX_CLASSES``
            classes; names the average rule as the alternative.
    """
    groups: dict[RandomizedResponse, int] = {}
    for mech in mechanisms:
        groups[mech] = groups.get(mech, 0) + 1
    if len(groups) <= 1:
        return
    classes = math.prod(math.comb(n + 3, 3) if m.four_output else n + 1 for m, n in groups.items())
    if classes > WORST_CASE_MAX_CLASSES:
        shown = str(classes) if classes < 10**9 else f"about {float(classes):.2e}"
        raise SizeLimitError(
            "worst-case LP transcript classes", shown, WORST_CASE_MAX_CLASSES,
            f"use the average rule (exact at any size); {len(mechanisms)} parties with {len(groups)} "
            f"distinct (epsilon, delta) make too many classes for the LP")


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
    measure: NDArray[np.float64],
    observer: int | None = None,
    rule: str = "both",
    engine: str = "auto",
    measure_name: str = "",
    time_limit: float | None = None,
) -> OptimalRules:
    """Compute the optimal rule(s) of the central observer (observer=None) or of party ``observer``.

    Args:
        mechanisms: the k parties' randomized responses.
        function: f; measure: w, float64 (|Y|, |Y|), w[true, guess].
        observer: None or a party index.
        rule: ``average``, ``worst-case`` or ``both``.
        engine: ``auto``, ``general`` or ``symmetric``.
        measure_name: recorded in the rules.
        time_limit: seconds per LP (HiGHS), or None.

    Raises:
        ParameterError, SizeLimitError: bad arguments or a size no engine holds.
        SolverError: an LP that HiGHS did not solve to optimality.
    """
    if rule not in RULE_CHOICES:
        raise ParameterError("rule", rule, "one of " + ", ".join(RULE_CHOICES))
    if rule in ("worst-case", "both"):
        check_worst_case_size(mechanisms)
    problem = build_problem(mechanisms, function, measure, observer, engine)
    average = worst = None
    if rule in ("average", "both"):
        decisions = [average_decisions(v) for v in problem.views]
        avg, wc, _ = accuracy_summary(problem, decisions)
        average = RuleReport(_rule(problem, "average", decisions, measure_name), avg, wc)
    if rule in ("worst-case", "both"):
        solutions = [solve_worst_case(v, time_limit) for v in problem.views]
        tables, avg, wc = _certified_worst_case(problem, [s.table for s in solutions])
        # party: the worst case is the smaller of the two own-bit LPs (002 eq. (4)), so is its bound;
        # a bound below a feasible rule's exact worst case is the LP's tolerance: the rule's value bounds it
        upper = max(min(s.upper_bound for s in solutions), wc)
        worst = RuleReport(_rule(problem, "worst-case", tables, measure_name), avg, wc, upper)
    return OptimalRules(problem, average, worst)


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
