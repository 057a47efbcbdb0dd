"""The central observer of randomized response: a :class:`mpdp.parties.rounds.engine.RoundProtocol`
plug-in of the round engine, which announces, collects, validates and records (its module docstring
lists the reject reasons). The observer adds:

    symbol-range   a symbol outside the party's mechanism (e.g. 2 or 3 from a pure-epsilon party)

and, at close, decides: with the participants' mechanisms, ``rule = rule_factory(mechanisms, function,
measure)``
(a :data:`mpdp.protocols.rules.rules.RuleFactory`) and ``rule.decide(symbols)`` with symbols uint8
(repetitions, n) in party-id order (Kairouz, Oh, Viswanath 2015 / paper 002 eq. 2). A party out of privacy budget abstains with reason
``budget-exhausted``: like every abstention it is left out of the decision, and the outcome lists it in
``exhausted`` as well as ``abstained``. The round's messages (one per roster party, ``absent`` for the
missing) are recorded in the round's transaction.

Party decisions (``party_decisions=True``): see :mod:`mpdp.parties.rr.decision_collector`.

Randomized (worst-case) rules draw with :func:`mpdp.parties.rounds.seeds.decision_generator` of
``decision_seed`` in simulation, from the OS CSPRNG with ``secure``.
"""

from __future__ import annotations

import asyncio
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.messages import Announcement, WorkerStatus, decode_answer
from mpdp.broker.packing import any_symbol_at_least, unpack_rows
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.wire import WireAnswer
from mpdp.parties.rounds.engine import ClosedRound, Closing, SignedReader
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import decision_generator
from mpdp.parties.rounds.store import MessageRows, RecordedMessage, TranscriptStore
from mpdp.parties.rr.decision_collector import DecisionCollector
from mpdp.parties.rr.decisions import apply_rule
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rules import RuleFactory

__all__ = ["Observer", "check_symbols", "mechanism_symbols"]


class Observer:
    """The randomized-response protocol of the round engine (the central observer's side).

    Args:
        topics: the session's topics; roster: the parties' mechanisms and public keys.
        store: the transcript store (the session opened in it; party decisions are written there).
        function, measure: f and the accuracy measure w, given to ``rule_factory``.
        rule_factory: builds the decision rule from the participants' mechanisms.
        party_decisions: publish each closed round's transcript and collect the parties' decisions.
        decision_timeout: seconds :meth:`conclude` waits for the last decisions.
        decision_seed: seed sequence of a randomized rule's draws (simulation); None = OS entropy.
        secure: deployment mode: a randomized rule draws from the OS CSPRNG.
    """

    role = "observer"

    def __init__(
        self, topics: Topics, roster: Roster, store: TranscriptStore, *, function: BooleanFunction,
        measure: NDArray[np.float64], rule_factory: RuleFactory, party_decisions: bool = False,
        decision_timeout: float = 30.0, decision_seed: np.random.SeedSequence | None = None,
        secure: bool = False,
    ) -> None:
        self._topics = topics
        self._roster = roster
        self._function = function
        self._measure = measure
        self._rule_factory = rule_factory
        self._decision_timeout = decision_timeout
        self._decision_seed = decision_seed
        self._secure = secure
        self.decisions = (DecisionCollector(topics, SignedReader(topics.session, roster), store)
                          if party_decisions else None)

    @property
    def filters(self) -> tuple[str, ...]:
        """The decisions topics when the parties decide, else none."""
        return () if self.decisions is None else (self._topics.all_decisions,)

    def announcement(self, signer: PrivateKey, session: str, index: int, name: str,
                     repetitions: int, lifetime: float) -> Announcement:
        """The signed announcement of round ``index``, valid for ``lifetime`` seconds."""
        return Announcement.signed(signer, session=session, kind="round", round=index, name=name,
                                   repetitions=repetitions, lifetime=lifetime)

    def signal(self, signer: PrivateKey, session: str, kind: Literal["end", "heartbeat"], index: int,
               repetitions: int, name: str = "") -> Announcement:
        """The signed end of the session (``index`` = the number of rounds; ``name``: why it failed, "" when
        complete), or a heartbeat."""
        return Announcement.signed(signer, session=session, kind=kind, round=index, repetitions=repetitions, name=name)

    def decode(self, payload: bytes) -> WireAnswer:
        """A party's answer off the wire (:func:`mpdp.broker.messages.decode_answer`: the binary form
        without pydantic, or JSON).

        Raises:
            ProtocolViolation: ``"schema"``.
        """
        return decode_answer(payload)

    def payload(self, message: WireAnswer, where: str) -> bytes:
        """The message's packed symbols (empty for an abstention), range-checked without unpacking
        (they are unpacked at the close, all participants at once).

        Raises:
            ProtocolViolation: ``symbol-range``, a symbol outside the party's mechanism.
        """
        check_symbols(message, self._roster.mechanisms[message.party], where)
        return message.packed

    def receive(self, topic: str, text: str) -> None:
        """A party's decisions (``party_decisions``).

        Raises:
            ProtocolViolation: ``topic`` without party decisions, else see :mod:`mpdp.parties.rr.decision_collector`.
        """
        if self.decisions is None or self._topics.decision_party_of(topic) is None:
            raise ProtocolViolation("topic", topic)
        self.decisions.receive(topic, text)

    def ready(self, status: WorkerStatus) -> None:
        """Nothing: randomized-response parties seal nothing."""

    def _decision_rng(self, index: int) -> np.random.Generator | None:
        if self._secure:
            return None
        if self._decision_seed is None:
            return np.random.default_rng()
        return decision_generator(self._decision_seed, index)

    async def close(self, closed: ClosedRound[WireAnswer, bytes], signer: PrivateKey) -> Closing:
        """Decide with the rule over the participants' symbols; the messages to record; the transcript
        to publish (``party_decisions``).

        The rule decides in a thread (:func:`asyncio.to_thread`): its posterior costs O(k^2) per distinct
        count vector of the round (about a minute at k = 10^4 and 200 repetitions), and the engine's event
        loop must go on meanwhile: the coordinator's heartbeat (a party leaves after ``observer_grace`` s of
        silence, 60 by default: a minute's decision in the loop ended every simulation worker), the
        broker's keepalive and the parties' decisions. The rule (built in that thread too: a worst-case
        rule solves an LP) and ``rng`` are used by that thread only. An undecided round
        (:attr:`ClosedRound.undecided`) is recorded without the rule or a transcript."""
        participants = closed.participants
        unpacked = unpack_rows([closed.received[int(p)].payload for p in participants], closed.repetitions)
        column = {int(party): j for j, party in enumerate(participants)}
        empty = np.zeros(0, dtype=np.uint8)
        entries = tuple(
            RecordedMessage(party, "absent", None, empty, None) if got is None
            else RecordedMessage(party, got.message.kind, got.message.reason,
                                 unpacked[column[party]] if party in column else empty, got.wire)
            for party, got in ((p, closed.received.get(p)) for p in range(closed.k)))
        symbols = np.ascontiguousarray(unpacked.T)  # (repetitions, participants)
        if closed.undecided:  # nothing to decide from: no rule, no transcript
            decisions = closed.no_decisions()
        else:
            mechanisms = [self._roster.mechanisms[p] for p in participants]
            decisions = await asyncio.to_thread(self._decide, mechanisms, symbols, self._decision_rng(closed.index))
        outcome = closed.outcome(decisions, symbols)
        if self.decisions is None:
            return Closing(outcome, MessageRows(closed.repetitions, entries))
        rows = MessageRows(closed.repetitions, entries, self.decisions.take())
        if closed.undecided:
            return Closing(outcome, rows)
        outputs = self._function.output_size(participants.size) if participants.size else 1
        return Closing(outcome, rows, self.decisions.transcript(outcome, outputs, closed.repetitions, signer))

    def _decide(self, mechanisms: list[RandomizedResponse], symbols: NDArray[np.uint8],
                rng: np.random.Generator | None) -> NDArray[np.int64]:
        """The rule of ``mechanisms`` (built, or from the factory's cache) applied to ``symbols``, uint8
        (repetitions, participants): int64 (repetitions,); ``rng`` None draws from the OS CSPRNG."""
        return apply_rule(self._rule_factory(mechanisms, self._function, self._measure), symbols, rng)

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round with its symbols."""
        return store.load_round(session, index)

    async def conclude(self) -> None:
        """Wait (at most ``decision_timeout``) for the parties' last decisions and record them."""
        if self.decisions is not None:
            await self.decisions.collect(self._decision_timeout)


def check_symbols(message: WireAnswer, mechanism: RandomizedResponse, where: str) -> None:
    """Check a verified party message's symbols against the party's mechanism, on the packed bytes.

    Raises:
        ProtocolViolation: ``symbol-range``, a symbol outside the mechanism's alphabet.
    """
    if any_symbol_at_least(message.packed, mechanism.num_symbols):
        raise ProtocolViolation("symbol-range", f"{where}: symbol {int(message.symbol_array().max())}")


def mechanism_symbols(message: WireAnswer, mechanism: RandomizedResponse, where: str) -> NDArray[np.uint8]:
    """The symbols of a verified party message, uint8 (repetitions,) (empty for an abstention), checked
    against the party's mechanism (:func:`check_symbols`).

    Raises:
        ProtocolViolation: ``symbol-range``, a symbol outside the mechanism's alphabet.
    """
    check_symbols(message, mechanism, where)
    return message.symbol_array()
