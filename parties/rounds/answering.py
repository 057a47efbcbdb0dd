"""A party's side of the round engine, written once for every protocol: connect, subscribe, verify each
announcement (the coordinator's Ed25519 signature and the session), answer each round once, leave at the end.

A protocol's party plugs in by composition (:class:`PartyProtocol`): the announcement it reads, its
answer to a round (a signed wire message; the protocol enforces its own privacy policy there, from the
party's own :class:`mpdp.parties.rr.party.PartySpec`, never from the wire), its privacy ledger, and
optionally other topics it listens to (randomized response: the published transcript, to decide f).

Each round is answered once: the loop keeps the signed message it published, and a re-announced round
(redelivered, replayed, or re-announced by a restarted observer) gets the *same* message again, never a
fresh draw. With an :class:`mpdp.parties.rounds.answer_record.AnswerRecord` (a party host's SQLite file)
that holds across restarts of the party too: the answer and its ledger charge are committed before the
message is published, and a restarted party starts from the recorded answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import secrets
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mpdp.analysis.accounting import PrivacyLedger
from mpdp.broker.messages import RoundAnnouncement
from mpdp.broker.signing import load_public_key, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.rounds.answer_record import AnswerRecord, RecordedAnswer
from mpdp.protocols.errors import TransportError

__all__ = ["AnnouncementT", "PartyLoop", "PartyProtocol", "checked_announcement"]

log = logging.getLogger("mpdp.party")


AnnouncementT = TypeVar("AnnouncementT", bound=RoundAnnouncement)


class PartyProtocol(Protocol[AnnouncementT]):
    """A protocol's party, as the loop sees it."""

    @property
    def announcement_class(self) -> type[AnnouncementT]:
        """The announcement the coordinator signs."""
        ...

    @property
    def filters(self) -> tuple[str, ...]:
        """Topics the party listens to besides the announcements (may be empty)."""
        ...

    @property
    def ledger(self) -> PrivacyLedger:
        """The party's privacy ledger: a round it released something in is charged there by :meth:`respond`."""
        ...

    def respond(self, announcement: AnnouncementT) -> BaseModel:
        """The signed answer to one round (no I/O), published on the party's topic."""
        ...

    def receive(self, topic: str, payload: bytes) -> BaseModel | None:
        """The signed answer to a message on one of :attr:`filters`, published on the party's
        decisions topic, or None."""
        ...


class PartyLoop(Generic[AnnouncementT]):
    """One party's connection: answer each announced round once (a redelivered, replayed or
    re-announced round gets the same signed message again) until the end announcement.

    Args:
        party: the party id; protocol: what the party says; connector: the broker; topics: the session's.
        coordinator_key: raw Ed25519 public key that signs announcements (others are ignored).
        idle_timeout: seconds to wait for the next announcement before giving up.
        connect_gate: bounds how many parties of a worker connect at once, and answer a round at once
            (see :meth:`_serve`).
        record: the host's durable answer record (None: answers are kept in memory only, a simulation).
    """

    def __init__(self, party: int, protocol: PartyProtocol[AnnouncementT], connector: Connector, topics: Topics,
                 coordinator_key: bytes, *, idle_timeout: float, connect_gate: asyncio.Semaphore | None = None,
                 record: AnswerRecord | None = None) -> None:
        self.party = party
        self._protocol = protocol
        self._connector = connector
        self._topics = topics
        load_public_key(coordinator_key)  # a malformed key fails here, not at the first announcement
        self._coordinator_key = bytes(coordinator_key)
        self._idle_timeout = idle_timeout
        self._gate = connect_gate or asyncio.Semaphore(1)
        self._record = record
        #: round -> the signed message this party published for it (from the record after a restart)
        self.sent: dict[int, str] = {} if record is None else record.answers(topics.session, party)
        self._client_id = f"mpdp-{topics.session}-party-{party}-{secrets.token_hex(8)}"

    @property
    def client_id(self) -> str:
        """The client id: session, party and a random suffix drawn once per loop (kept across its
        reconnects), so no other client can guess it and take this connection over."""
        return self._client_id

    def announcement(self, payload: bytes) -> AnnouncementT | None:
        """The verified announcement in ``payload``, or None (malformed, another session, not signed by
        the coordinator: logged and ignored). Parsing and checking are done once per process for the same
        bytes (:func:`checked_announcement`): the parties of one worker share the work of each announcement."""
        announcement, problem = checked_announcement(self._protocol.announcement_class, payload,
                                                     self._topics.session, self._coordinator_key)
        if problem:
            log.warning("party %d: ignored %s", self.party, problem)
        return announcement


    async def run(self, on_ready: Callable[[], None] = lambda: None) -> int:
        """Serve the session until the end announcement; return the number of rounds answered (ever,
        with a record).

        Raises:
            TransportError: the broker went away for good, or no announcement for ``idle_timeout`` seconds.
        """
        async with contextlib.AsyncExitStack() as stack:
            async with self._gate:  # bounds how many parties connect and subscribe at once
                transport = await stack.enter_async_context(self._connector.connect(self.client_id))
                await transport.subscribe(self._topics.rounds, *self._protocol.filters)
            on_ready()
            await self._serve(transport)
        return len(self.sent)

    async def _serve(self, transport: Transport) -> None:
        while True:
            delivery = await next_delivery(transport, self._idle_timeout)
            if delivery is None:
                raise TransportError(f"party {self.party}: no announcement for {self._idle_timeout:g} s")
            if delivery.topic != self._topics.rounds:
                reply = self._protocol.receive(delivery.topic, delivery.payload)
                if reply is not None:
                    await transport.publish(self._topics.decision(self.party), reply.model_dump_json())
                continue
            announcement = self.announcement(delivery.payload)
            if announcement is None:
                continue
            if announcement.kind == "end":
                return
            # The gate: one announcement makes every party of the worker ready in the same event-loop
            # iteration, and asyncio runs all of them before it polls the sockets again; thousands of
            # answers (draw, sign: ~1 ms each) would hold the loop for seconds, so PUBACKs that arrived long
            # ago wait unread and the publishes time out (the 5,000- and 10,000-party runs' "Operation timed
            # out"). Through the gate, a few dozen parties answer per iteration and the loop reads in between.
            index = announcement.round
            async with self._gate:
                if index not in self.sent:
                    self.sent[index] = await self._answer(announcement)
                await transport.publish(self._topics.party(self.party), self.sent[index])

    async def _answer(self, announcement: AnnouncementT) -> str:
        """The protocol's answer to a round not answered before, committed to the record (with its ledger
        charge) before it is published."""
        payload = self._protocol.respond(announcement).model_dump_json()
        if self._record is not None:
            charge = next((c for c in self._protocol.ledger.charges if c.round == announcement.round), None)
            await self._record.save(RecordedAnswer(self._topics.session, self.party, announcement.round, payload,
                                                   charge))
        return payload


@functools.lru_cache(maxsize=256)
def checked_announcement(kind: type[AnnouncementT], payload: bytes, session: str, coordinator_key: bytes
                         ) -> tuple[AnnouncementT | None, str]:
    """``payload`` parsed as ``kind`` and its Ed25519 signature checked against ``coordinator_key`` (raw
    public key) and ``session``: ``(announcement, "")``, or ``(None, why)`` for a malformed one, another
    session's, or one not signed by the coordinator. A pure function of its arguments, so its results are
    cached (bounded, per process): the many parties of a worker receive the same bytes of each announcement,
    and each one's check is the same; the announcement is frozen (pydantic ``frozen=True``)."""
    try:
        announcement = kind.model_validate_json(payload)
    except ValidationError:
        return None, "a malformed announcement"
    if announcement.session != session or not verify_message(announcement, coordinator_key):
        return None, "an announcement not signed by the coordinator"
    return announcement, ""
