"""Optimal zero-one decision rules over a round's participants, built once per public parameters.

Rules are public mathematics: the tables of party i's rule (002 eqs. (2), (4)) depend only on f, the
rule's kind and the ordered mechanisms of the *other* participants, not on i. For a symmetric f the
tables of the rule of party i and of party i' are the same arrays whenever the others' mechanism
sequences agree (as in a homogeneous group: 435 House members share one table pair per round). A
:class:`RuleCache` builds each table set once (:func:`mpdp.protocols.optimal.optimal_rules`) and re-labels it
for each party (its ``observer`` index and ``groups``).

Measure: the zero-one accuracy sized to the participants, ``eye(function.output_size(n))`` (the measure
the live run reports). Where the exact engines cannot hold the participants (many distinct parameters),
the average rule falls back to :class:`mpdp.protocols.symmetric.SymmetricAverageRule` (exact decisions on
the observed transcript); the worst-case rule has no fallback: :class:`SizeLimitError`.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from mpdp.protocols.engines import build_problem
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.factors import group_parties
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.mechanisms import RandomizedResponse
from mpdp.protocols.optimal import check_worst_case_size, optimal_rules
from mpdp.protocols.rules import RULE_KINDS, DecisionRule
from mpdp.protocols.symmetric import SymmetricAverageRule, observer_average_rule

__all__ = ["LiveRule", "RuleCache", "check_rule_size", "zero_one_measure"]

#: What a live run decides with: an exact-engine rule or, for the average kind at sizes no engine
#: holds, the posterior rule.
LiveRule = DecisionRule | SymmetricAverageRule


def zero_one_measure(function: BooleanFunction, n: int) -> np.ndarray:
    """The zero-one accuracy measure for n participants: float64 identity (|Y|, |Y|)."""
    return np.eye(function.output_size(n))


def _check_kind(kind: str) -> None:
    if kind not in RULE_KINDS:
        raise ParameterError("rule", kind, "one of " + ", ".join(RULE_KINDS))


def check_rule_size(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, kind: str) -> None:
    """Raise unless the ``kind`` rule of the central observer over ``mechanisms`` can be built.

    Only the worst-case rule needs an exact engine (the average rule has the posterior fallback).

    Raises:
        ParameterError: an unknown kind.
        SizeLimitError: the worst-case LP's classes or transcripts exceed every engine's limit; the
            message names the limit and ``--rule average`` as the alternative.
    """
    _check_kind(kind)
    if kind != "worst-case":
        return
    mechs = tuple(mechanisms)
    try:
        check_worst_case_size(mechs)
        build_problem(mechs, function, zero_one_measure(function, len(mechs)))
    except SizeLimitError as exc:
        distinct = len(set(mechs))
        raise SizeLimitError(exc.name, exc.value, exc.limit,
                             f"use --rule average (exact posterior decisions); the worst-case LP over "
                             f"{len(mechs)} parties with {distinct} distinct (epsilon, delta) needs "
                             f"fewer distinct parameters") from exc


class RuleCache:
    """Build-once store of live decision rules (see the module docstring).

    Args:
        maxsize: table sets kept (least recently used dropped first).
    """

    def __init__(self, maxsize: int = 64) -> None:
        self._maxsize = maxsize
        self._tables: OrderedDict[tuple, LiveRule] = OrderedDict()

    def __len__(self) -> int:
        return len(self._tables)

    def rule(self, mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, kind: str,
             observer: int | None = None) -> LiveRule:
        """The optimal ``kind`` rule of the central observer (``observer=None``) or of party ``observer``.

        Args:
            mechanisms: the n participants' randomized responses (participant order).
            function: a symmetric f (the live run computes symmetric functions).
            kind: ``"average"`` (002 eqs. (2), (5)) or ``"worst-case"`` (eqs. (4), (6)).
            observer: None or the deciding participant's index 0..n-1.

        Returns:
            a :class:`DecisionRule`, or a :class:`SymmetricAverageRule` (average kind beyond the engines).

        Raises:
            ParameterError: an unknown kind, a non-symmetric f, a bad observer index.
            SizeLimitError: a worst-case rule no engine holds.
            SolverError: an LP HiGHS did not solve.
        """
        _check_kind(kind)
        mechs = tuple(mechanisms)
        if function.count_values(len(mechs)) is None:
            raise ParameterError("function", function.name, "a symmetric function for shared rules")
        if observer is not None and not 0 <= observer < len(mechs):
            raise ParameterError("observer", observer, f"a participant index 0..{len(mechs) - 1}")
        others = tuple(m for i, m in enumerate(mechs) if i != observer)
        key = (kind, function.name, observer is None, others)
        cached = self._tables.get(key)
        if cached is None:
            cached = self._build(mechs, function, kind, observer)
            self._tables[key] = cached
            if len(self._tables) > self._maxsize:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(key)
        return self._relabel(cached, mechs, observer)

    @staticmethod
    def _build(mechs: tuple[RandomizedResponse, ...], function: BooleanFunction, kind: str,
               observer: int | None) -> LiveRule:
        w = zero_one_measure(function, len(mechs))
        try:
            rules = optimal_rules(mechs, function, w, observer=observer, rule=kind, measure_name="zero-one")
        except SizeLimitError:
            if kind != "average":
                raise
            return observer_average_rule(mechs, function, w, observer)
        report = rules.average if kind == "average" else rules.worst_case
        assert report is not None
        return report.rule

    @staticmethod
    def _relabel(rule: LiveRule, mechs: tuple[RandomizedResponse, ...], observer: int | None) -> LiveRule:
        if rule.observer == observer and rule.mechanisms == mechs:
            return rule
        if isinstance(rule, SymmetricAverageRule):
            return dataclasses.replace(rule, mechanisms=mechs, observer=observer)
        others = tuple(i for i in range(len(mechs)) if i != observer)
        groups = tuple(f.members for f in group_parties(mechs, others, grouped=rule.engine == "symmetric"))
        return dataclasses.replace(rule, mechanisms=mechs, observer=observer, groups=groups)
