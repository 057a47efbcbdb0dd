"""Exact theory of a live round's rules on its true input: the central observer's and every party's.

For the round's participants (mechanisms, true bits x) and a rule kind, the accuracy of a rule on x is
``P(rule(tau, x_i) = f(x) | x)`` (the zero-one term of 002 eq. (3); :func:`mpdp.analysis.theory.accuracy.input_accuracy`).
Party i's value depends only on its rule's tables (f, kind, the others' mechanisms) and, per group of
the others, the number of ones, plus its own bit: computed once per such key. In a homogeneous round of
n parties that is two evaluations (own bit 0 and 1), not n.

The law of 002 (a party knows more than the central observer: its optimal accuracy is at least the
observer's) holds for the accuracy the rule optimizes — the average over inputs (eq. (1)) for the
average rule, the minimum over inputs (eq. (3)) for the worst-case rule — not input by input: on a
given x an average-optimal party rule can be less accurate than the observer's. Both are reported.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.theory.accuracy import input_accuracy, rule_accuracy
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule, zero_one_measure
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


#: What makes two rules' accuracy on x equal: kind, engine, (mechanism, size, ones) per group, own bit.
_RuleKey = tuple[str, str, tuple[tuple[RandomizedResponse, int, int], ...], int | None]


def _key(rule: TableRule, x: NDArray[np.integer[Any]]) -> _RuleKey:
    groups = tuple((rule.mechanisms[g[0]], len(g), int(x[list(g)].sum())) for g in rule.groups)
    own = None if rule.observer is None else int(x[rule.observer])
    return rule.kind, rule.engine, groups, own


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
    x = np.asarray(x, dtype=np.int64)
    w = zero_one_measure(function, len(mechs))
    values: dict[_RuleKey, float] = {}

    def exact(rule: object) -> float | None:
        if not isinstance(rule, TableRule):
            return None
        key = _key(rule, x)
        if key not in values:
            values[key] = input_accuracy(rule, function, w, x)
        return values[key]

    optimized: dict[int, float | None] = {}

    def optimized_value(rule: object) -> float | None:
        if not isinstance(rule, TableRule):
            return None
        key = id(rule.tables[0])  # the cache shares the tables of equal rules
        if key not in optimized:
            acc = rule_accuracy(rule, function, w)
            optimized[key] = acc.average if kind == "average" else acc.worst_case
        return optimized[key]

    central_rule = decision_rule(mechs, function, kind=kind, cache=rules)
    observer = exact(central_rule) if central else None
    per_party: NDArray[np.float64] | None = None
    party_min: float | None = None
    if parties:
        party_rules = [decision_rule(mechs, function, kind=kind, observer=j, cache=rules) for j in range(len(mechs))]
        found = [exact(rule) for rule in party_rules]
        if all(v is not None for v in found):
            per_party = np.array(found, dtype=np.float64)
            optimized_values = [optimized_value(rule) for rule in party_rules]
            known = [v for v in optimized_values if v is not None]
            party_min = min(known) if len(known) == len(optimized_values) else None
    return RoundRuleTheory(observer, per_party, len(values), optimized_value(central_rule), party_min)
