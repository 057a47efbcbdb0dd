"""A party of the curator protocol (the central model): it sends its true bit, sealed to the curator.

It answers each round announcement signed by the curator's Ed25519 key with a
:class:`mpdp.broker.curator_messages.SealedBallot`: its bit encrypted to the round's X25519 key (fresh
ephemeral key per message, :mod:`mpdp.broker.sealed`) and signed with its own Ed25519 key. No noise is
added by the party: privacy rests on the curator, who publishes only the output of the optimal central
mechanism. The broker and every other client see ciphertexts only. The connection loop is the
protocol-neutral :class:`mpdp.parties.rounds.answering.PartyLoop`. The party's own repetition cap holds
here too (each of the curator's ``repetitions`` releases is a release of the party's bit): a round asking
for more gets an abstention ``policy``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Self

from pydantic import BaseModel

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.curator_messages import CuratorAnnouncement, SealedBallot
from mpdp.broker.signing import load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE, PartyLoop
from mpdp.parties.rounds.party_spec import ABSTAIN_DID_NOT_VOTE, PartySpec, policy_reason, spec_bit
from mpdp.protocols.errors import ParameterError

__all__ = ["CuratorParty", "start_curator_party"]


class CuratorParty:
    """One party of the curator protocol: its :class:`mpdp.parties.rounds.answering.PartyProtocol` (seal
    and sign the bit) run by a :class:`mpdp.parties.rounds.answering.PartyLoop`.

    Args:
        spec: the party's private state; ``spec.mechanism`` carries its privacy level only (the curator's
            mechanism is (epsilon, delta)-DP for each party's vote); ``spec.seed`` is unused (the party
            draws nothing).
        connector, topics, idle_timeout, connect_gate, observer_grace: as :class:`mpdp.parties.rr.party.Party`.
        coordinator_key: the curator's raw Ed25519 public key (announcements signed by anyone else are
            ignored).
        record: the host's durable answer record (None: in memory only).
    """

    announcement_class = CuratorAnnouncement
    filters: tuple[str, ...] = ()

    def __init__(self, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                 idle_timeout: float, connect_gate: asyncio.Semaphore | None = None,
                 record: AnswerRecord | None = None, observer_grace: float = OBSERVER_GRACE) -> None:
        self.spec = spec
        self._topics = topics
        self._key = load_private_key(spec.private_key)
        self._loop = PartyLoop(spec.party, self, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                               connect_gate=connect_gate, record=record, observer_grace=observer_grace)

    @property
    def loop(self) -> PartyLoop[Any]:
        """The party's round loop (a worker serving many parties on one connection drives it)."""
        return self._loop

    @property
    def ledger(self) -> PrivacyLedger:
        """``spec.ledger``, never charged: the party releases nothing itself (the curator's mechanism is
        (epsilon, delta)-DP for its vote)."""
        return self.spec.ledger

    def respond(self, announcement: CuratorAnnouncement) -> SealedBallot:
        """The signed, sealed ballot answering one round announcement (no network I/O).

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        index = announcement.round
        bit = spec_bit(self.spec, index)
        reason = policy_reason(self.spec, announcement.repetitions) or (ABSTAIN_DID_NOT_VOTE if bit < 0 else None)
        return SealedBallot.signed(
            self._key, curator_key=announcement.key_bytes, session=self._topics.session, round=index,
            party=self.spec.party, repetitions=announcement.repetitions,
            bit=None if reason is not None else bit, reason=reason,
        )

    def receive(self, topic: str, payload: bytes) -> BaseModel | None:
        """Nothing: a curator-protocol party listens to announcements only."""
        return None

    @classmethod
    def started(cls, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                idle_timeout: float, connect_gate: asyncio.Semaphore, decider: object | None,
                record: AnswerRecord | None, observer_grace: float = OBSERVER_GRACE) -> Self:
        """A party of this class as a worker starts it (the parties of the central protocols decide nothing).

        Raises:
            ParameterError: a decider given.
        """
        if decider is not None:
            raise ParameterError("party_rule", decider, "None with a central protocol (its parties decide nothing)")
        return cls(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout, connect_gate=connect_gate,
                   record=record, observer_grace=observer_grace)

    async def run(self, on_ready: Callable[[], None] = lambda: None) -> int:
        """Serve the session until the end announcement; return the number of rounds answered.

        Raises:
            TransportError: the broker went away for good, or no announcement for ``idle_timeout`` seconds.
        """
        return await self._loop.run(on_ready)


def start_curator_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                        idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                        decider: object | None, record: AnswerRecord | None = None,
                        observer_grace: float = OBSERVER_GRACE) -> CuratorParty:
    """A curator-protocol party as a worker starts it (:class:`mpdp.parties.session.worker.PartyStarter`).
    ``secure`` changes nothing (the party sends its bit sealed and draws no noise).

    Raises:
        ParameterError: a decider given (the curator protocol's parties do not decide f).
    """
    return CuratorParty.started(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                                connect_gate=connect_gate, decider=decider, record=record,
                                observer_grace=observer_grace)
