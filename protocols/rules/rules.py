"""The decision-rule concept: what the central observer and every party apply to a transcript.

A decision rule maps an observed transcript tau (one symbol per party) to an output y in 0..|Y|-1:
the central observer's rule d(tau) (002 eqs. (1), (3)) or party i's rule f_i(tau, x_i), which also
knows its own bit (002 eqs. (2), (4)). The optimal rules come in two kinds:

* ``average``: maximizes the accuracy averaged over uniform inputs, a deterministic argmax
  (002 eq. (5) for the observer, eq. (2) for a party);
* ``worst-case``: maximizes the accuracy on the least favourable input, randomized, the solution of
  an LP (002 eq. (6) for the observer, eq. (4) for a party); its draws need a generator.

:class:`DecisionRule` is the interface; the implementations are
:class:`mpdp.protocols.rules.table_rule.TableRule` (the exact engines' tables, either kind) and
:class:`mpdp.protocols.rules.symmetric.SymmetricAverageRule` (the average rule of a symmetric f on the
observed transcript, at any number of parties). Build them with the one factory
:func:`mpdp.protocols.rules.rule_factory.decision_rule`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["RULE_KINDS", "DecisionRule", "RuleFactory", "check_kind", "check_symbols"]

#: The kinds of optimal rule (002): ``average`` (eqs. (2), (5)) and ``worst-case`` (eqs. (4), (6)).
RULE_KINDS = ("average", "worst-case")


@runtime_checkable
class DecisionRule(Protocol):
    """A decision rule of the central observer (``observer`` None) or of party ``observer``.

    Attributes:
        mechanisms: the k parties' randomized responses the rule decides over (transcript order).
        observer: None, or the deciding party's index 0..k-1 (its rule also takes its own bit).
        randomized: True if some transcript gets a non-degenerate distribution over outputs.
    """

    @property
    def mechanisms(self) -> tuple[RandomizedResponse, ...]: ...

    @property
    def observer(self) -> int | None: ...

    @property
    def randomized(self) -> bool: ...

    def decide(self, symbols: NDArray[np.integer], rng: np.random.Generator | None = None,
               own_bits: NDArray[np.integer] | int | None = None) -> NDArray[np.int64]:
        """The output for each transcript.

        Args:
            symbols: integer (n, k), ``symbols[r, i]`` = party i's symbol in transcript r.
            rng: the generator of a randomized rule's draws (required when ``randomized``).
            own_bits: the deciding party's bit(s), scalar or (n,); required for a party's rule.

        Returns:
            int64 (n,), values in 0..|Y|-1.

        Raises:
            ParameterError: bad symbols or own bits, or a randomized rule without ``rng``.
        """
        ...

    def probabilities(self, symbols: NDArray[np.integer],
                      own_bits: NDArray[np.integer] | int | None = None) -> NDArray[np.float64]:
        """P(output y | transcript) for each transcript: float64 (n, |Y|), rows summing to one."""
        ...

    def to_json(self) -> str:
        """The rule as strict JSON text (the implementation's ``from_json`` reads it back)."""
        ...


#: What the live observer calls per round: ``factory(participants' mechanisms, f, measure) -> rule``.
RuleFactory = Callable[[Sequence[RandomizedResponse], BooleanFunction, NDArray[np.float64]], DecisionRule]


def check_kind(kind: str) -> str:
    """Return ``kind`` if it is one of :data:`RULE_KINDS`.

    Raises:
        ParameterError: another value (named, with the kinds allowed).
    """
    if kind not in RULE_KINDS:
        raise ParameterError("rule", kind, "one of " + ", ".join(RULE_KINDS))
    return kind


def check_symbols(symbols: NDArray[np.integer[Any]], mechanisms: tuple[RandomizedResponse, ...]) -> NDArray[np.int64]:
    """Validate transcripts: an (n, k) integer array with party i's symbols in 0..m_i - 1.

    Returns the symbols as int64. Raises :class:`ParameterError` naming the problem."""
    s = np.asarray(symbols)
    k = len(mechanisms)
    if s.ndim != 2 or s.shape[1] != k:
        raise ParameterError("symbols", s.shape, f"shape (n, {k}): one symbol per party")
    if s.size and not np.issubdtype(s.dtype, np.integer):
        raise ParameterError("symbols dtype", s.dtype, "integers")
    s = s.astype(np.int64)
    alphabet = np.array([m.num_symbols for m in mechanisms])
    if s.size and ((s < 0) | (s >= alphabet)).any():
        bad = np.argwhere((s < 0) | (s >= alphabet))[0]
        raise ParameterError(f"symbol of party {bad[1]}", int(s[tuple(bad)]),
                             f"0..{alphabet[bad[1]] - 1}")
    return s
