"""Per-party privacy accounting across rounds: a ledger of the rounds a party answered.

Each answer of a round is one (epsilon, delta)-DP release per repetition (the party's randomized
response of its bit), so after rounds r_1..r_n the party has run ``k = sum repetitions`` mechanisms.
Its spent budget is the composed guarantee at a configured delta_tilde (``delta_slack``):

* ``epsilon``: the exact optimum of 000 Theorem 3.3 (homogeneous) or of the heterogeneous
  composition (:func:`mpdp.analysis.privacy.heterogeneous.compose_heterogeneous`; where that reports bounds the
  ledger uses the certified upper bound), at ``delta = 1 - prod_l (1 - delta_l)(1 - delta_slack)``;
* ``epsilon_basic, delta_basic``: basic composition (000 Theorem 3.1), ``(sum eps_l, sum delta_l)``.

The ledger is an immutable value: :meth:`PrivacyLedger.record` returns a new ledger. A party asks
:meth:`PrivacyLedger.would_exceed` before it answers and refuses when the answer would take it past
its :class:`Budget`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from mpdp.analysis.privacy.composition import check_delta_slack, composed_delta, optimal_epsilon
from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

if TYPE_CHECKING:
    from dp_accounting import DpEvent

__all__ = ["BUDGET_RELATIVE_TOLERANCE", "Budget", "PrivacyLedger", "RoundCharge", "Spent"]

#: A spent epsilon within this relative margin of the budget does not exceed it (float noise: 16 x 0.1).
BUDGET_RELATIVE_TOLERANCE = 1e-12


@dataclass(frozen=True, slots=True)
class Budget:
    """A party's total privacy budget (epsilon, delta).

    Raises:
        ParameterError: epsilon < 0 or NaN, delta outside [0, 1].
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon, "budget epsilon"))
        delta = check_delta_slack(self.delta, "budget delta") if self.delta != 1 else 1.0  # 1: no delta limit
        object.__setattr__(self, "delta", delta)

    @classmethod
    def parse(cls, text: str) -> Budget:
        """``"EPS,DELTA"`` (``budget=``, the ``--budget`` option), e.g. ``"2.0,1e-5"``."""
        parts = str(text).split(",")
        if len(parts) != 2:
            raise ParameterError("budget", text, "EPS,DELTA, e.g. 2.0,1e-5")
        try:
            epsilon, delta = float(parts[0]), float(parts[1])
        except ValueError:
            raise ParameterError("budget", text, "EPS,DELTA with two numbers, e.g. 2.0,1e-5") from None
        return cls(epsilon, delta)


@dataclass(frozen=True, slots=True)
class RoundCharge:
    """One answered round: ``repetitions`` releases, each (epsilon, delta)-DP."""

    round: int
    epsilon: float
    delta: float
    repetitions: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        if isinstance(self.repetitions, bool) or int(self.repetitions) != self.repetitions or self.repetitions < 1:
            raise ParameterError("repetitions", self.repetitions, "an integer >= 1")
        object.__setattr__(self, "repetitions", int(self.repetitions))


@dataclass(frozen=True, slots=True)
class Spent:
    """The composed privacy a party has spent.

    Attributes:
        rounds: rounds answered. mechanisms: k, the releases composed.
        epsilon, delta: by the exact optimum at the ledger's delta_slack (never negative or NaN).
        epsilon_basic, delta_basic: basic composition.
        method: ``"exact"``, ``"bounds"`` (epsilon is a certified upper bound) or ``"none"`` (no rounds).
    """

    rounds: int
    mechanisms: int
    epsilon: float
    delta: float
    epsilon_basic: float
    delta_basic: float
    method: str

    def __post_init__(self) -> None:
        for name in ("epsilon", "delta", "epsilon_basic", "delta_basic"):
            value = getattr(self, name)
            if not value >= 0.0:  # rejects NaN too
                raise ParameterError(name, value, "a number >= 0 (a ledger never reports NaN or < 0)")

    def exceeds(self, budget: Budget) -> bool:
        """Whether this spending is beyond ``budget`` (epsilon with :data:`BUDGET_RELATIVE_TOLERANCE`)."""
        return self.epsilon > budget.epsilon * (1.0 + BUDGET_RELATIVE_TOLERANCE) or self.delta > budget.delta

    def as_dict(self) -> dict[str, object]:
        """JSON-ready (inf as the string "inf")."""
        return {
            name: ("inf" if isinstance(v, float) and math.isinf(v) else v)
            for name, v in (
                ("rounds", self.rounds), ("mechanisms", self.mechanisms), ("epsilon", self.epsilon),
                ("delta", self.delta), ("epsilon_basic", self.epsilon_basic),
                ("delta_basic", self.delta_basic), ("method", self.method),
            )
        }


@dataclass(frozen=True, slots=True)
class PrivacyLedger:
    """A party's record of the rounds it answered and what they cost (immutable).

    Args:
        delta_slack: the delta_tilde at which the exact optimum is taken, in [0, 1).
        charges: the answered rounds, in order; round ids are unique.

    Example::

        ledger = PrivacyLedger(delta_slack=1e-6)
        if not ledger.would_exceed(budget, epsilon, delta, repetitions):
            ledger = ledger.record(round_id, epsilon, delta, repetitions)
    """

    delta_slack: float
    charges: tuple[RoundCharge, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "delta_slack", check_delta_slack(self.delta_slack))
        object.__setattr__(self, "charges", tuple(self.charges))
        rounds = [c.round for c in self.charges]
        if len(set(rounds)) != len(rounds):
            raise ParameterError("charges", rounds, "one charge per round id")

    @property
    def rounds(self) -> tuple[int, ...]:
        """The ids of the answered rounds, in order."""
        return tuple(c.round for c in self.charges)

    def record(self, round_id: int, epsilon: float, delta: float, repetitions: int = 1) -> PrivacyLedger:
        """A new ledger with round ``round_id`` answered by ``repetitions`` (epsilon, delta)-DP releases.

        Raises:
            ParameterError: the round is already recorded, or a bad epsilon/delta/repetitions.
        """
        if any(charge.round == round_id for charge in self.charges):
            raise ParameterError("round", round_id, "a round not yet recorded in this ledger")
        charge = RoundCharge(round_id, epsilon, delta, repetitions)
        ledger = object.__new__(PrivacyLedger)  # this ledger's fields hold, and the new round is not among them:
        object.__setattr__(ledger, "delta_slack", self.delta_slack)  # no __post_init__ pass over every charge
        object.__setattr__(ledger, "charges", (*self.charges, charge))  # (a party records one per round)
        return ledger

    def spent(self) -> Spent:
        """The composed (epsilon, delta) of all recorded rounds, exact optimum and basic."""
        return _spent(self.charges, self.delta_slack)

    def spent_if(self, epsilon: float, delta: float, repetitions: int = 1) -> Spent:
        """What :meth:`spent` would be after one more round of ``repetitions`` (epsilon, delta) releases."""
        return _spent((*self.charges, RoundCharge(-1, epsilon, delta, repetitions)), self.delta_slack)

    def would_exceed(self, budget: Budget, epsilon: float, delta: float, repetitions: int = 1) -> bool:
        """Whether answering one more round would take the party beyond ``budget``."""
        return self.spent_if(epsilon, delta, repetitions).exceeds(budget)

    def to_dp_event(self) -> DpEvent:
        """The recorded releases as a dp_accounting ``DpEvent`` (:func:`mpdp.analysis.privacy.dp_events.dp_event`),
        for its PLD or RDP accountant (``NeighboringRelation.REPLACE_ONE``): compare with :meth:`spent`.

        Raises:
            ParameterError: no round recorded, or a round with delta > 0.
            ImportError: dp_accounting is not installed (``pip install 'mpdp[interop]'``).
        """
        from mpdp.analysis.privacy.dp_events import dp_event

        return dp_event((c.epsilon, c.delta, c.repetitions) for c in self.charges)


def _spent(charges: tuple[RoundCharge, ...], delta_slack: float) -> Spent:
    return _composed(tuple((c.epsilon, c.delta, c.repetitions) for c in charges), delta_slack)


@functools.lru_cache(maxsize=32)
def _composed(releases: tuple[tuple[float, float, int], ...], delta_slack: float) -> Spent:
    """The composition of ``releases`` (epsilon, delta, repetitions) of rounds, cached (a few entries):
    the parties of a session answer the same rounds with the same mechanism, so each party's ledger asks
    for the same composition (a worker's 1,000 parties before each answer under a budget; the observer's
    2,000 ledgers at the end of a run: 0.6 ms each), and :class:`Spent` is immutable."""
    if not releases:
        return Spent(0, 0, 0.0, 0.0, 0.0, 0.0, "none")
    counts = np.array([r for _, _, r in releases])
    eps = np.repeat([e for e, _, _ in releases], counts)
    dels = np.repeat([d for _, d, _ in releases], counts)
    k = int(counts.sum())
    with np.errstate(over="ignore"):  # a sum beyond the float range is +inf, the right total
        basic = float(np.sum(eps)), min(float(np.sum(dels)), 1.0)
    if np.all(eps == eps[0]):
        epsilon, method = optimal_epsilon(float(eps[0]), k, delta_slack), "exact"
    else:
        result = compose_heterogeneous(eps, dels, delta_slack)
        epsilon, method = result.epsilon_tilde, result.method
    epsilon = min(epsilon, basic[0])  # the optimum never exceeds basic; guard float noise
    return Spent(len(releases), k, epsilon, composed_delta(dels, delta_slack), basic[0], basic[1], method)
