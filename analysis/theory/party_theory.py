"""Exact theory of a live round's rules on its true input: the central observer's and every party's.

For the round's participants (mechanisms, true bits x) and a rule kind, the accuracy of a rule on x is
``P(rule(tau, x_i) = f(x) | x)`` (the zero-one term of 002 eq. (3); :func:`mpdp.analysis.theory.accuracy.input_accuracy`).
Party j's rule is its group representative's on the transcript with j and the representative exchanged
(:mod:`mpdp.protocols.rules.party_rules`: one rule per group of equal mechanisms), so its value is the
representative's on x with the two bits exchanged; with the symmetric engine that depends only on the
group and x_j: two evaluations a group (own bit 0 and 1), not one per party.

The law of 002 (a party knows more than the central observer: its optimal accuracy is at least the
observer's) holds for the accuracy the rule optimizes — the average over inputs (eq. (1)) for the
average rule, the minimum over inputs (eq. (3)) for the worst-case rule — not input by input: on a
given x an average-optimal party rule can be less accurate than the observer's. Both are reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.theory.accuracy import input_accuracy, rule_accuracy, rule_problem
from mpdp.protocols.decision.engines import DecisionProblem
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.party_rules import PartyRuleSet
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule, zero_one_measure
from mpdp.protocols.rules.rules import DecisionRule
from mpdp.protocols.rules.table_rule import TableRule

__all__ = ["RoundRuleTheory", "round_rule_theory"]


@dataclass(frozen=True, slots=True)
class RoundRuleTheory:
    """Exact accuracies on the round's true input.

    Attributes:
        observer: the central observer's rule's accuracy on x, or None (no exact engine: posterior rule).
        parties: float64 (n,), party j's rule's accuracy on x; None when some party's rule is not exact.
        evaluations: how many distinct exact evaluations ran (the cache's work).
        observer_optimized, party_optimized_min: the accuracy each rule optimizes (kind average: 002
            eq. (1); worst-case: eq. (3)) of the observer's rule and the smallest over the parties'
            rules; None when not exact (or not asked).
    """

    observer: float | None
    parties: NDArray[np.float64] | None
    evaluations: int
    observer_optimized: float | None = None
    party_optimized_min: float | None = None

    @property
    def law_holds(self) -> bool | None:
        """party_optimized_min >= observer_optimized (to 1e-9), or None when either is unknown."""
        if self.observer_optimized is None or self.party_optimized_min is None:
            return None
        return self.party_optimized_min >= self.observer_optimized - 1e-9


def _party_values(rules: PartyRuleSet, x: NDArray[np.int64], value: Callable[[DecisionRule, NDArray[np.int64]], float | None],
                  optimized: Callable[[DecisionRule], float | None]) -> tuple[NDArray[np.float64] | None, float | None]:
    """``value(rule of the representative, x o pi)`` for every party j (pi exchanges j and its group's
    representative: party j's rule is the representative's on tau o pi, :mod:`mpdp.protocols.rules.party_rules`),
    None when some value is None; and the least ``optimized(group rule)`` (None when some is None), each right
    after its group's values (they share the group rule's problem). A group rule that sees its groups through
    counts has one value per own bit (the others' counts are those of x less x_j): two evaluations a group, not
    one per party."""
    out = np.empty(rules.k)
    optimized_values: list[float | None] = []
    for g, members in enumerate(rules.members):
        base, rep = rules.group_rule(g), int(rules.representatives[g])
        grouped = isinstance(base, TableRule) and base.engine == "symmetric"
        done: dict[int, float | None] = {}
        for j in members.tolist() if not grouped else [int(m) for b in (0, 1) for m in members[x[members] == b][:1]]:
            swapped = x.copy()
            swapped[[j, rep]] = x[[rep, j]]
            done[j] = value(base, swapped)
            if done[j] is None:
                return None, None
        if grouped:
            for b in (0, 1):
                holders = members[x[members] == b]
                if holders.size:
                    out[holders] = done[int(holders[0])]
        else:
            out[members] = [done[j] for j in members.tolist()]
        optimized_values.append(optimized(base))
    known = [v for v in optimized_values if v is not None]
    return out, min(known) if known and len(known) == len(optimized_values) else None


def round_rule_theory(
    mechanisms: Sequence[RandomizedResponse], x: NDArray[np.integer[Any]], function: BooleanFunction, kind: str,
    rules: RuleCache, central: bool = True, parties: bool = True,
) -> RoundRuleTheory:
    """Exact accuracy on x of the central observer's and (``parties``) each participant's ``kind`` rule.

    Args:
        mechanisms: the n participants' randomized responses; x: int (n,) their true bits.
        function: symmetric f; kind: ``average`` or ``worst-case``.
        rules: the cache the live run built its rules with (the same rule objects are evaluated).
        central, parties: which rules to evaluate (the others' entries are None).

    Raises:
        ParameterError: bad x or kind (from the callees). SizeLimitError: a worst-case rule no engine holds.
    """
    mechs = tuple(mechanisms)
    bits: NDArray[np.int64] = np.asarray(x, dtype=np.int64)
    w = zero_one_measure(function, len(mechs))
    evaluations = 0
    # the problem of the rule under evaluation: built once a rule, dropped after its last evaluation (its optimized
    # accuracy) so that the next rule is not built beside it (two bands of GBs at 10^5 parties)
    last: list[tuple[TableRule, DecisionProblem]] = []

    def problem(rule: TableRule) -> DecisionProblem:
        if not last or last[0][0] is not rule:
            last[:] = [(rule, rule_problem(rule, function, w))]
        return last[0][1]

    def exact(rule: DecisionRule, on: NDArray[np.int64]) -> float | None:
        nonlocal evaluations
        if not isinstance(rule, TableRule):
            return None
        evaluations += 1
        return input_accuracy(rule, function, w, on, problem(rule))

    def optimized_value(rule: DecisionRule) -> float | None:
        if not isinstance(rule, TableRule):
            return None
        acc = rule_accuracy(rule, function, w, problem(rule))
        last.clear()
        return acc.average if kind == "average" else acc.worst_case

    central_rule = decision_rule(mechs, function, kind=kind, cache=rules)
    observer = exact(central_rule, bits) if central else None
    observer_optimized = optimized_value(central_rule)
    per_party: NDArray[np.float64] | None = None
    party_min: float | None = None
    if parties:  # a party's optimized accuracy is its group representative's (module docstring)
        per_party, party_min = _party_values(PartyRuleSet(mechs, function, kind=kind, cache=rules), bits, exact,
                                             optimized_value)
    return RoundRuleTheory(observer, per_party, evaluations, observer_optimized, party_min)
