"""Every participant's decision rule (002 eq. (2)), built once per group of parties sharing a mechanism.

Party j's optimal rule f_j(tau, x_j) depends on f, the kind and the *other* parties' mechanisms. Two parties
j and r with the same mechanism face the same problem up to the transposition pi = (j r) of their positions:
pi maps every party onto one with the same mechanism and a symmetric f is unchanged, so 002 eqs. (2), (4) are
invariant and f_j(tau, b) = f_r(tau o pi, b) is optimal for j, with the accuracy of f_r on x o pi.
:class:`PartyRuleSet` therefore builds one rule per group, that of its first member (the group's
representative, with :func:`mpdp.protocols.rules.rule_factory.decision_rule`), and :meth:`PartyRuleSet.rule`
gives party j's as a :class:`PartyRule`: the shared rule and two indices, O(1) memory, so k parties cost
O(k) (a label per party), not the O(k^2) of a copied list of the others per party.

Deciding one transcript for every party (:class:`TranscriptDecisions`): where the representative's rule sees
each group only through the multiset of its symbols (the symmetric engine's count classes; the posterior
rule, a Poisson-binomial over the others), party j's view depends on tau only through tau_j: its group's
multiset less tau_j. The rule then runs once per (group, symbol, own bit), at most 4 x 2 times a group, and
each party's decision is a lookup. The general engine's per-party tables (a few parties only) are applied to
the transposed transcript, party by party.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import Factor, group_members
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule
from mpdp.protocols.rules.rules import DecisionRule, check_symbols
from mpdp.protocols.rules.symmetric import SymmetricAverageRule
from mpdp.protocols.rules.table_rule import TableRule, sample_decisions

__all__ = ["PartyRule", "PartyRuleSet", "TranscriptDecisions"]


def _by_symbols(rule: DecisionRule) -> bool:
    """Whether ``rule`` sees each group of equal mechanisms only through its multiset of symbols."""
    return isinstance(rule, SymmetricAverageRule) or (isinstance(rule, TableRule) and rule.engine == "symmetric")


class PartyRuleSet:
    """The optimal ``kind`` rules of every participant for the zero-one measure (module docstring).

    Args:
        mechanisms: the k participants' randomized responses (participant order).
        function: a symmetric f. kind: ``average`` or ``worst-case``. engine: as
            :func:`mpdp.protocols.rules.rule_factory.decision_rule`. cache: where the group rules are built once
            (shared with the observer's rules), or None.

    Raises:
        ParameterError: f not symmetric (the relabelling needs it), an unknown kind or engine.
    """

    def __init__(self, mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, *,
                 kind: str = "average", engine: str = "auto", cache: RuleCache | None = None) -> None:
        self.mechanisms = tuple(mechanisms)
        if function.count_values(len(self.mechanisms)) is None:
            raise ParameterError("function", function.name, "a symmetric function for party rules")
        self.function, self.kind, self.engine, self._cache = function, kind, engine, cache
        groups = group_members(self.mechanisms)
        #: int64 (k,): each party's group (groups in the order of their first member)
        self.labels = np.zeros(len(self.mechanisms), dtype=np.int64)
        for g, (_, members) in enumerate(groups):
            self.labels[members] = g
        #: int64 (groups,): each group's first member, whose rule is built
        self.representatives = np.array([int(members[0]) for _, members in groups], dtype=np.int64)
        self.members: tuple[NDArray[np.int64], ...] = tuple(members for _, members in groups)
        self._rules: list[DecisionRule | None] = [None] * len(groups)

    @property
    def k(self) -> int:
        """Number of participants."""
        return len(self.mechanisms)

    @property
    def rules_built(self) -> int:
        """How many rules were built (at most one per group)."""
        return sum(r is not None for r in self._rules)

    def built_rule(self, group: int) -> DecisionRule | None:
        """The rule of ``group``'s representative if built already, else None (nothing is built)."""
        return self._rules[group]

    def group_rule(self, group: int) -> DecisionRule:
        """The rule of ``group``'s representative, built on first use.

        Raises:
            SizeLimitError: a worst-case rule no engine holds. SolverError: an LP HiGHS did not solve."""
        rule = self._rules[group]
        if rule is None:
            rule = decision_rule(self.mechanisms, self.function, kind=self.kind,
                                 observer=int(self.representatives[group]), engine=self.engine, cache=self._cache)
            self._rules[group] = rule
        return rule

    def _check(self, party: int) -> int:
        if isinstance(party, bool) or not isinstance(party, (int, np.integer)) or not 0 <= party < self.k:
            raise ParameterError("party", party, f"a participant index 0..{self.k - 1}")
        return int(party)

    def representative(self, party: int) -> int:
        """The representative of ``party``'s group."""
        return int(self.representatives[self.labels[self._check(party)]])

    def rule(self, party: int) -> PartyRule:
        """Party ``party``'s rule (participant index), a view of its group's (O(1) memory).

        Raises:
            ParameterError: ``party`` not a participant index."""
        return PartyRule(self, self._check(party))

    def materialized(self, party: int) -> DecisionRule:
        """Party ``party``'s rule as a rule object of its own (O(k) memory: for its JSON record and its exact
        accuracy): the representative's with ``party`` and the representative exchanged, its groups put back in
        the engines' order (members ascending, groups by first member) and its tables' digits with them."""
        party = self._check(party)
        base, rep = self.group_rule(int(self.labels[party])), self.representative(party)
        if isinstance(base, SymmetricAverageRule):
            return dataclasses.replace(base, observer=party)
        table = base if isinstance(base, TableRule) else None
        assert table is not None  # the factory makes table rules and posterior rules
        swap = {party: rep, rep: party}
        relabelled = [tuple(sorted(swap.get(m, m) for m in g)) for g in table.groups]  # a group's class: counts
        order = sorted(range(len(relabelled)), key=lambda i: relabelled[i][0])  # the engines' group order
        sizes = [Factor(g, self.mechanisms[g[0]]).num_classes for g in table.groups]
        tables = tuple(t.reshape(sizes + list(t.shape[1:])).transpose(order + list(range(len(order), t.ndim + len(order) - 1)))
                       .reshape(t.shape) for t in table.tables)
        return dataclasses.replace(table, observer=party, groups=tuple(relabelled[i] for i in order), tables=tables)

    def transposed(self, party: int, symbols: NDArray[np.integer[Any]]) -> NDArray[np.integer[Any]]:
        """``symbols`` (n, k) with the columns of ``party`` and its representative exchanged (tau o pi); a
        copy only when they differ. Symbols of another shape are returned as they are (the rule refuses them)."""
        rep = self.representative(party)
        s = np.asarray(symbols)
        if rep == party or s.ndim != 2 or s.shape[1] != self.k:
            return s
        out = s.copy()
        out[:, [party, rep]] = s[:, [rep, party]]
        return out

    def decisions(self, symbols: NDArray[np.integer[Any]]) -> TranscriptDecisions:
        """Every party's decisions on the transcripts ``symbols`` (n, k), computed once per group and symbol."""
        return TranscriptDecisions(self, symbols)


@dataclass(frozen=True, slots=True, eq=False)
class PartyRule:
    """Party ``party``'s rule: its group's rule on the transposed transcript (a
    :class:`mpdp.protocols.rules.rules.DecisionRule`; module docstring)."""

    rules: PartyRuleSet
    party: int

    @property
    def base(self) -> DecisionRule:
        """The representative's rule."""
        return self.rules.group_rule(int(self.rules.labels[self.party]))

    @property
    def mechanisms(self) -> tuple[RandomizedResponse, ...]:
        """The participants' randomized responses (shared by every party's rule)."""
        return self.rules.mechanisms

    @property
    def observer(self) -> int:
        """The deciding party's index."""
        return self.party

    @property
    def randomized(self) -> bool:
        """As the group's rule."""
        return self.base.randomized

    def decide(self, symbols: NDArray[np.integer[Any]], rng: np.random.Generator | None = None,
               own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.int64]:
        """:meth:`mpdp.protocols.rules.rules.DecisionRule.decide` of party ``party``."""
        return self.base.decide(self.rules.transposed(self.party, symbols), rng=rng, own_bits=own_bits)

    def probabilities(self, symbols: NDArray[np.integer[Any]],
                      own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.float64]:
        """:meth:`mpdp.protocols.rules.rules.DecisionRule.probabilities` of party ``party``."""
        return self.base.probabilities(self.rules.transposed(self.party, symbols), own_bits)

    def to_json(self) -> str:
        """The JSON of :meth:`PartyRuleSet.materialized`."""
        return self.rules.materialized(self.party).to_json()


class TranscriptDecisions:
    """Every party's decisions on one set of transcripts (module docstring): the group rules run once per
    (group, symbol, own bit), each party's decision a lookup.

    Args:
        rules: the participants' rules. symbols: integer (n, k), the transcripts (validated once).

    Raises:
        ParameterError: bad symbols."""

    def __init__(self, rules: PartyRuleSet, symbols: NDArray[np.integer[Any]]) -> None:
        self._rules = rules
        self._symbols = check_symbols(symbols, rules.mechanisms)
        self._memo: dict[tuple[int, int, int], NDArray[np.int64] | NDArray[np.float64]] = {}

    def randomized(self, party: int) -> bool:
        """Whether party ``party``'s rule randomizes."""
        return self._rules.rule(party).randomized

    def _substituted(self, group: int, symbol: int) -> NDArray[np.int64]:
        """The transcripts in which the representative r of ``group`` sees its group's multiset less one
        ``symbol`` (the view of a member holding it): where tau_r differs, a member other than r holding
        ``symbol`` gets tau_r (rows where none holds it are left as they are: no member asks for them)."""
        s = self._symbols
        rep = int(self._rules.representatives[group])
        others = self._rules.members[group][self._rules.members[group] != rep]
        fix = s[:, rep] != symbol
        if not others.size or not fix.any():
            return s
        holds = s[:, others] == symbol
        rows = np.flatnonzero(fix & holds.any(axis=1))
        if not rows.size:
            return s
        out = s.copy()
        out[rows, others[holds[rows].argmax(axis=1)]] = s[rows, rep]
        return out

    def _table(self, group: int, symbol: int, bit: int) -> NDArray[np.int64] | NDArray[np.float64]:
        """The group rule on :meth:`_substituted` with own bit ``bit``: decisions int64 (n,) of a deterministic
        rule, probabilities float64 (n, |Y|) of a randomized one."""
        key = (group, symbol, bit)
        if key not in self._memo:
            rule = self._rules.group_rule(group)
            view = self._substituted(group, symbol)
            self._memo[key] = rule.probabilities(view, bit) if rule.randomized else rule.decide(view, own_bits=bit)
        return self._memo[key]

    def _lookup(self, party: int, bit: int) -> NDArray[np.int64] | NDArray[np.float64]:
        group = int(self._rules.labels[party])
        column = self._symbols[:, party]
        first = self._table(group, int(column[0]), bit) if column.size else np.zeros(0, dtype=np.int64)
        if not column.size or (column == column[0]).all():
            return first
        out = np.empty_like(first)
        for symbol in np.unique(column):
            rows = column == symbol
            out[rows] = self._table(group, int(symbol), bit)[rows]
        return out

    def pending(self, party: int, bit: int) -> bool:
        """Whether party ``party``'s decisions with own bit ``bit`` need more than lookups: its group's rule or
        one of the tables of its symbols not built yet (:meth:`prepare` builds them).

        Raises:
            ParameterError: ``party`` not a participant index, ``bit`` not 0 or 1."""
        group, bit = int(self._rules.labels[self._rules._check(party)]), self._bit(bit)
        rule = self._rules.built_rule(group)
        if rule is None or not _by_symbols(rule):
            return rule is None
        return any((group, int(symbol), bit) not in self._memo for symbol in np.unique(self._symbols[:, party]))

    def prepare(self, party: int, bit: int) -> None:
        """Build what party ``party``'s decisions with own bit ``bit`` need (its group's rule, the tables of its
        symbols): the slow part (a band of 10^5 parties: ~40 s), which a worker runs off its event loop; the
        decisions are lookups afterwards.

        Raises:
            ParameterError: ``party`` not a participant index, ``bit`` not 0 or 1. SizeLimitError, SolverError:
                as :meth:`PartyRuleSet.group_rule`."""
        rule = self._rules.group_rule(int(self._rules.labels[self._rules._check(party)]))
        if _by_symbols(rule):
            self._lookup(party, self._bit(bit))

    def probabilities(self, party: int, bit: int) -> NDArray[np.float64]:
        """P(party ``party`` decides y | transcript) with own bit ``bit``: float64 (n, |Y|).

        Raises:
            ParameterError: ``party`` not a participant index, ``bit`` not 0 or 1."""
        rule = self._rules.rule(party)
        if not _by_symbols(rule.base):
            return rule.probabilities(self._symbols, bit)
        found = self._lookup(party, self._bit(bit))
        if found.ndim == 2:
            return found.astype(np.float64)
        outputs = self._rules.function.output_size(self._rules.k)
        out = np.zeros((found.size, outputs))
        out[np.arange(found.size), found] = 1.0
        return out

    def decide(self, party: int, bit: int, rng: np.random.Generator | None = None) -> NDArray[np.int64]:
        """Party ``party``'s decisions with own bit ``bit``: int64 (n,), as its rule's ``decide`` (the same
        draws from ``rng`` for a randomized rule).

        Raises:
            ParameterError: ``party`` not a participant index, ``bit`` not 0 or 1, a randomized rule without
                ``rng``."""
        rule = self._rules.rule(party)
        if not _by_symbols(rule.base):
            return rule.decide(self._symbols, rng=rng, own_bits=bit)
        found = self._lookup(party, self._bit(bit))
        if found.ndim == 1:
            return found.astype(np.int64)
        return sample_decisions(found.astype(np.float64), rng)

    @staticmethod
    def _bit(bit: int) -> int:
        if bit not in (0, 1):
            raise ParameterError("own_bits", bit, "0 or 1")
        return int(bit)
