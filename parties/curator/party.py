"""A party of the curator protocol (the central model): it sends its true bit, sealed to the curator.

It answers each round announcement signed by the curator's Ed25519 key with a
:class:`mpdp.broker.curator_messages.SealedBallot`: its bit encrypted to the round's X25519 key (fresh
ephemeral key per message, :mod:`mpdp.broker.sealed`) and signed with its own Ed25519 key. No noise is
added by the party: privacy rests on the curator, who publishes only the output of the optimal central
mechanism. The broker and every other client see ciphertexts only. Everything else (the connection, one
answer per round, the repetition cap ``policy``, abstentions) is the central protocols' party
(:class:`mpdp.parties.ballots.party.BallotParty`) with :class:`SealedBallots`.
"""

from __future__ import annotations

import asyncio

from mpdp.broker.curator_messages import CuratorAnnouncement, SealedBallot
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.ballots.party import BallotParty
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.party_spec import PartySpec

__all__ = ["SealedBallots", "start_curator_party"]


class SealedBallots:
    """The curator protocol's ballots (a :class:`mpdp.parties.ballots.party.BallotMaker`): the bit sealed to
    the round's curator key. The party's ledger is never charged: it releases nothing itself (the curator's
    mechanism is (epsilon, delta)-DP for its vote)."""

    announcement_class = CuratorAnnouncement
    charges_ledger = False
    sealing_key = b""  # a fresh ephemeral key per ballot: nothing to announce ahead

    def ballot(self, key: PrivateKey, session: str, party: int, announcement: CuratorAnnouncement,
               bit: int | None, reason: str | None) -> SealedBallot:
        """The signed, sealed ballot (or abstention for ``reason``)."""
        return SealedBallot.signed(key, curator_key=announcement.key_bytes, session=session,
                                   round=announcement.round, party=party, repetitions=announcement.repetitions,
                                   bit=bit, reason=reason)


def start_curator_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                        idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                        decider: object | None, record: AnswerRecord | None = None,
                        observer_grace: float = OBSERVER_GRACE) -> BallotParty[CuratorAnnouncement]:
    """A curator-protocol party as a worker starts it (:class:`mpdp.parties.rounds.plan.PartyStarter`).
    ``secure`` changes nothing (the party sends its bit sealed and draws no noise).

    Raises:
        ParameterError: a decider given (the curator protocol's parties do not decide f).
    """
    return BallotParty.started(spec, connector, topics, coordinator_key, SealedBallots(), idle_timeout=idle_timeout,
                               connect_gate=connect_gate, decider=decider, record=record,
                               observer_grace=observer_grace)
