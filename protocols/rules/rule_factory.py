"""The one decision-rule factory (:func:`decision_rule`), with its build-once cache.

``decision_rule(mechanisms, function, measure, kind=..., observer=..., engine=..., cache=...)`` builds
the optimal rule of the central observer (``observer=None``) or of party ``observer`` (002 eqs. (2)-(6)):

* ``engine="auto"``: the exact engines' tables (:func:`mpdp.protocols.rules.optimal.optimal_rules`, a
  :class:`mpdp.protocols.rules.table_rule.TableRule`), whose exact accuracy :mod:`mpdp.analysis.theory.accuracy`
  evaluates. Where no engine holds the parties (many distinct parameters) the average kind falls back
  to the posterior rule; the worst-case kind raises :class:`SizeLimitError`.
* ``engine="posterior"``: the average kind only, for a symmetric f: the posterior rule
  (:func:`mpdp.protocols.rules.symmetric.observer_average_rule`), exact decisions on the observed transcript
  at any number of parties (the live observer's average rule).

No participants: every rule outputs f of the empty input (the posterior rule of k = 0).

Measure: w, float64 (|Y|, |Y|), or None for the zero-one measure sized to the participants,
``eye(function.output_size(n))`` (the measure the live run reports, so that |Y| can grow with n).

Cache: rules are public mathematics. For a symmetric f the tables of party i's rule depend only on f,
the kind, the measure and the ordered mechanisms of the *other* participants, not on i, so the rules of
parties i and i' are the same arrays whenever the others' mechanisms agree (a homogeneous House round:
one table pair for 435 members). A :class:`RuleCache` passed as ``cache`` builds each table set once
and re-labels it for each party (its ``observer`` index and ``groups``: O(k) memory a party). The rules of
all parties of a round come from :class:`mpdp.protocols.rules.party_rules.PartyRuleSet`: one per group of
equal mechanisms, a party's a view of its group's (O(1) memory a party).
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Hashable, Sequence
from typing import cast

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import group_parties
from mpdp.protocols.errors import CostLimitError, ParameterError, SizeLimitError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules, worst_case_refusal
from mpdp.protocols.rules.rules import DecisionRule, RuleFactory, check_kind
from mpdp.protocols.rules.symmetric import SymmetricAverageRule, observer_average_rule
from mpdp.protocols.rules.table_rule import TableRule

__all__ = ["RULE_ENGINES", "RuleCache", "check_rule_size", "decision_rule", "zero_one_measure",
           "zero_one_rules"]

#: ``auto``: exact-engine tables (average: posterior fallback); ``posterior``: the posterior rule.
RULE_ENGINES = ("auto", "posterior")


def zero_one_measure(function: BooleanFunction, n: int) -> NDArray[np.float64]:
    """The zero-one accuracy measure for n participants: float64 identity (|Y|, |Y|)."""
    return np.eye(function.output_size(n))


def check_rule_size(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, kind: str) -> None:
    """Raise unless the ``kind`` rule of the central observer over ``mechanisms`` can be built.

    Only the worst-case rule needs an exact engine (the average rule has the posterior fallback).

    Raises:
        ParameterError: an unknown kind.
        SizeLimitError: the worst-case LP fits no engine, or (a ``CostLimitError``) its estimated time or
            memory exceeds the default limits; the message names ``rule='average'`` as the alternative.
    """
    if check_kind(kind) != "worst-case":
        return
    mechs = tuple(mechanisms)
    refusal = worst_case_refusal(mechs, function, None)
    if isinstance(refusal, CostLimitError):
        estimate = dataclasses.replace(refusal.estimate, alternative="use rule='average' (exact posterior "
                                       "decisions), or fewer distinct (epsilon, delta)")
        estimate.check()
    if refusal is not None:
        distinct = len(set(mechs))
        raise SizeLimitError(refusal.name, refusal.value, refusal.limit,
                             f"use rule='average' (exact posterior decisions); the worst-case LP over "
                             f"{len(mechs)} {noun(len(mechs), 'party', 'parties')} with {distinct} distinct (epsilon, delta) needs "
                             f"fewer distinct parameters") from refusal


class RuleCache:
    """Build-once store of decision rules for :func:`decision_rule` (see the module docstring).

    Args:
        maxsize: rules kept (least recently used dropped first).
    """

    def __init__(self, maxsize: int = 64) -> None:
        self._maxsize = maxsize
        self._rules: OrderedDict[Hashable, DecisionRule] = OrderedDict()

    def __len__(self) -> int:
        return len(self._rules)

    def _get(self, key: Hashable) -> DecisionRule | None:
        found = self._rules.get(key)
        if found is not None:
            self._rules.move_to_end(key)
        return found

    def _put(self, key: Hashable, rule: DecisionRule) -> None:
        self._rules[key] = rule
        if len(self._rules) > self._maxsize:
            self._rules.popitem(last=False)


def _build(mechs: tuple[RandomizedResponse, ...], function: BooleanFunction, w: NDArray[np.float64],
           kind: str, observer: int | None, engine: str, measure_name: str) -> DecisionRule:
    if engine == "posterior" or not mechs:
        return observer_average_rule(mechs, function, w, observer)
    try:
        rules = optimal_rules(mechs, function, w, observer=observer, rule=kind, measure_name=measure_name)
    except SizeLimitError:
        if kind != "average" or function.count_values(len(mechs)) is None:
            raise
        return observer_average_rule(mechs, function, w, observer)
    report = rules.average if kind == "average" else rules.worst_case
    assert report is not None  # optimal_rules computed the kind asked for
    return report.rule


def _relabel(rule: DecisionRule, mechs: tuple[RandomizedResponse, ...], observer: int | None) -> DecisionRule:
    """The cached rule of other parties with equal mechanisms, re-labelled for ``observer``."""
    if rule.observer == observer and rule.mechanisms == mechs:
        return rule
    if isinstance(rule, SymmetricAverageRule):
        return dataclasses.replace(rule, mechanisms=mechs, observer=observer)
    table = cast(TableRule, rule)
    others = tuple(i for i in range(len(mechs)) if i != observer)
    groups = tuple(f.members for f in group_parties(mechs, others, grouped=table.engine == "symmetric"))
    return dataclasses.replace(table, mechanisms=mechs, observer=observer, groups=groups)


def decision_rule(
    mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction,
    measure: NDArray[np.float64] | None = None,
    *,
    kind: str = "average",
    observer: int | None = None,
    engine: str = "auto",
    cache: RuleCache | None = None,
) -> DecisionRule:
    """The optimal ``kind`` rule of the central observer (``observer=None``) or of party ``observer``.

    Args:
        mechanisms: the n participants' randomized responses (participant order).
        function: f (symmetric for ``engine="posterior"`` and for ``cache``).
        measure: w, float64 (|Y|, |Y|), w[true, guess]; None = zero-one sized to the participants.
        kind: ``"average"`` (002 eqs. (2), (5)) or ``"worst-case"`` (eqs. (4), (6), randomized).
        observer: None or the deciding participant's index 0..n-1.
        engine: ``"auto"`` or ``"posterior"`` (module docstring).
        cache: a :class:`RuleCache` to build each rule once (symmetric f); None builds afresh.

    Returns:
        a :class:`mpdp.protocols.rules.table_rule.TableRule` or a
        :class:`mpdp.protocols.rules.symmetric.SymmetricAverageRule`.

    Raises:
        ParameterError: an unknown kind or engine, ``posterior`` with the worst-case kind or a
            non-symmetric f, a cache with a non-symmetric f, a bad observer index or measure shape.
        SizeLimitError: a worst-case rule no engine holds.
        SolverError: an LP HiGHS did not solve.
    """
    check_kind(kind)
    if engine not in RULE_ENGINES:
        raise ParameterError("engine", engine, "one of " + ", ".join(RULE_ENGINES))
    mechs = tuple(mechanisms)
    n = len(mechs)
    if observer is not None and not 0 <= observer < n:
        raise ParameterError("observer", observer, f"a participant index 0..{n - 1}")
    if engine == "posterior" and kind != "average":
        raise ParameterError("engine", engine, "'auto' for the worst-case rule (the posterior rule is the "
                                               "average-case one)")
    w = zero_one_measure(function, n) if measure is None else np.asarray(measure, dtype=np.float64)
    name = "zero-one" if measure is None else ""
    if cache is None:
        return _build(mechs, function, w, kind, observer, engine, name)
    if function.count_values(n) is None:
        raise ParameterError("function", function.name, "a symmetric function for shared (cached) rules")
    others = tuple(m for i, m in enumerate(mechs) if i != observer)
    key = (kind, engine, function.name, w.shape, w.tobytes(), observer is None, others)
    rule = cache._get(key)
    if rule is None:
        rule = _build(mechs, function, w, kind, observer, engine, name)
        cache._put(key, rule)
    return _relabel(rule, mechs, observer)


def zero_one_rules(kind: str = "average", *, engine: str = "auto", cache: RuleCache | None = None) -> RuleFactory:
    """The live observer's :data:`mpdp.protocols.rules.rules.RuleFactory` for the zero-one measure:
    ``decision_rule(participants, f, None, kind=kind, engine=engine, cache=cache)`` each round.

    The observer's ``measure`` argument is not used: the zero-one measure is sized to the round's
    participants, so functions whose output alphabet grows with n (``sum``) work when parties abstain.

    Raises:
        ParameterError: an unknown kind or engine (at once, not at the first round).
    """
    check_kind(kind)
    if engine not in RULE_ENGINES:
        raise ParameterError("engine", engine, "one of " + ", ".join(RULE_ENGINES))

    def factory(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                measure: NDArray[np.float64]) -> DecisionRule:
        return decision_rule(mechanisms, function, kind=kind, engine=engine, cache=cache)

    return factory
