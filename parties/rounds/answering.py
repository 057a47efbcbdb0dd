"""A party's side of the round engine, written once for every protocol: connect, subscribe, verify each
announcement, answer each round once and in order, leave at the end.

An announcement counts only when it is well formed (else ``schema``), of the party's session
(``session``), signed by the coordinator (``signature``), unexpired (``expired``) and newer than the last
one the party accepted (``replay``, :class:`mpdp.broker.control.FreshnessGuard`; with a record the last
sequence survives a restart). A round announcement is then answered only if its round is later than
every round the party answered (``out-of-order`` otherwise: a round it missed stays missed), or gets the
recorded answer again if the party answered it. Everything refused is counted and logged, rate-limited
(:attr:`PartyLoop.rejections`), and changes nothing.

A dead observer is noticed: the coordinator announces a heartbeat every few seconds
(:meth:`mpdp.parties.rounds.engine.RoundEngine.heartbeat`, its own sequence). Before the first accepted
announcement a party waits up to ``idle_timeout`` (the observer may start later); after it, a silence of
``observer_grace`` seconds (default :data:`OBSERVER_GRACE`) ends the party with a TransportError saying
the observer is gone (its answers stay in the record; a restarted host rejoins).

A heartbeat names the round open (or next): a party that holds a recorded answer for that round and has
not published it in this process (a host restarted mid-round, after it answered: the round's announcement
went out before it reconnected) re-sends the recorded message then, once, so the observer gets the same
signed bytes again, never a fresh draw, without waiting for a re-announcement. (A simulation worker
that multiplexes its parties hands heartbeats to its lead party only,
:mod:`mpdp.parties.session.multiplex`; simulation workers are not restarted, party hosts are, and keep
one connection per party.)

A protocol's party plugs in by composition (:class:`PartyProtocol`): the announcement it reads, its
answer to a round (a signed wire message; the protocol enforces its own privacy policy there, from the
party's own :class:`mpdp.parties.rounds.party_spec.PartySpec`, never from the wire), its privacy ledger, and
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
import time
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from mpdp.analysis.accounting import PrivacyLedger
from mpdp.broker.control import FreshnessGuard
from mpdp.broker.messages import RoundAnnouncement
from mpdp.broker.signing import load_public_key, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Delivery, Transport, next_delivery
from mpdp.parties.rounds.answer_record import AnswerRecord, RecordedAnswer
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.protocols.errors import ProtocolViolation, TransportError

__all__ = ["OBSERVER_GRACE", "AnnouncementT", "PartyLoop", "PartyProtocol", "Publishable", "checked_announcement"]

log = logging.getLogger("mpdp.party")
_COORDINATOR = "coordinator"
_HEARTBEAT = "coordinator-heartbeat"  # its own sequence: a heartbeat never makes a round look replayed

#: Seconds of coordinator silence (no announcement, no heartbeat) after which a party leaves.
OBSERVER_GRACE = 60.0


AnnouncementT = TypeVar("AnnouncementT", bound=RoundAnnouncement)


class Publishable(Protocol):
    """A signed answer as the loop publishes it: a wire message (pydantic) or the randomized-response
    party's binary answer (:class:`mpdp.broker.wire.WireAnswer`)."""

    def to_wire(self) -> bytes:
        """The bytes to publish on the party's topic (and record)."""
        ...


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

    def respond(self, announcement: AnnouncementT) -> Publishable:
        """The signed answer to one round (no I/O), published on the party's topic (its ``to_wire()``)."""
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
        idle_timeout: seconds to wait for the first announcement before giving up.
        observer_grace: seconds of coordinator silence, once heard, before giving up (module docstring).
        connect_gate: bounds how many parties of a worker connect at once, and answer a round at once
            (see :meth:`_serve`).
        record: the host's durable answer record (None: answers are kept in memory only, a simulation).
    """

    def __init__(self, party: int, protocol: PartyProtocol[AnnouncementT], connector: Connector, topics: Topics,
                 coordinator_key: bytes, *, idle_timeout: float, connect_gate: asyncio.Semaphore | None = None,
                 record: AnswerRecord | None = None, observer_grace: float = OBSERVER_GRACE) -> None:
        self.party = party
        self._protocol = protocol
        self._connector = connector
        self._topics = topics
        load_public_key(coordinator_key)  # a malformed key fails here, not at the first announcement
        self._coordinator_key = bytes(coordinator_key)
        self._idle_timeout = idle_timeout
        self._grace = observer_grace
        self._heard: float | None = None  # monotonic time of the last accepted announcement or heartbeat
        self._started = time.monotonic()
        self._gate = connect_gate or asyncio.Semaphore(1)
        self._record = record
        #: round -> the signed message this party published for it (from the record after a restart)
        self.sent: dict[int, bytes] = {} if record is None else record.answers(topics.session, party)
        self._published: set[int] = set()  # rounds whose message this process published
        self._client_id = f"mpdp-{topics.session}-party-{party}-{secrets.token_hex(8)}"
        last = 0 if record is None else record.last_sequence(topics.session, party)
        self._fresh = FreshnessGuard(last={_COORDINATOR: last})
        #: every announcement refused, counted by reason (and logged, rate-limited)
        self.rejections = RejectLog(log, f"party {party}")

    @property
    def client_id(self) -> str:
        """The client id: session, party and a random suffix drawn once per loop (kept across its
        reconnects), so no other client can guess it and take this connection over."""
        return self._client_id

    @property
    def filters(self) -> tuple[str, ...]:
        """The topics this party subscribes to: the announcements, then its protocol's others."""
        return (self._topics.rounds, *self._protocol.filters)

    def is_heartbeat(self, delivery: Delivery) -> bool:
        """True iff ``delivery`` is a coordinator heartbeat of this session on the announcement topic, signed
        by the coordinator (the check is cached per process); its freshness is :meth:`handle`'s to check."""
        announcement = self._signed(delivery)
        return announcement is not None and announcement.kind == "heartbeat"

    def is_end(self, delivery: Delivery) -> bool:
        """True iff ``delivery`` is the coordinator's signed, unexpired end of this session (as
        :meth:`is_heartbeat`; the sequence is :meth:`handle`'s to check)."""
        announcement = self._signed(delivery)
        return announcement is not None and announcement.kind == "end" and announcement.expires_ms > time.time() * 1000

    def _signed(self, delivery: Delivery) -> AnnouncementT | None:
        """The coordinator's announcement of this session in ``delivery``, None for anything else."""
        if delivery.topic != self._topics.rounds:
            return None
        announcement, _, _ = checked_announcement(self._protocol.announcement_class, bytes(delivery.payload),
                                                  self._topics.session, self._coordinator_key)
        return announcement

    def announcement(self, payload: bytes) -> AnnouncementT | None:
        """The verified, fresh announcement in ``payload``, or None (refused: counted and logged with its
        reason, module docstring)."""
        try:
            return self._verified(payload)
        except ProtocolViolation as exc:
            self.rejections.reject(exc.reason, exc.detail)
            return None

    def _verified(self, payload: bytes) -> AnnouncementT:
        # parsing and the signature check are done once per process for the same bytes
        # (:func:`checked_announcement`): the parties of one worker share the work of each announcement
        announcement, reason, detail = checked_announcement(self._protocol.announcement_class, bytes(payload),
                                                            self._topics.session, self._coordinator_key)
        if announcement is None:
            raise ProtocolViolation(reason, f"{self._topics.rounds}: {detail}")
        where = f"{self._topics.rounds} {announcement.kind} {announcement.round}"
        self._fresh.check(announcement, _HEARTBEAT if announcement.kind == "heartbeat" else _COORDINATOR, where)
        if announcement.kind == "round" and announcement.round not in self.sent and self.sent \
                and announcement.round < max(self.sent):
            raise ProtocolViolation("out-of-order", f"{where}: round {max(self.sent)} is answered already")
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
                await transport.subscribe(*self.filters)
            on_ready()
            await self._serve(transport)
        return len(self.sent)

    def _wait_left(self) -> float:
        """Seconds left before the coordinator's silence is too long (the idle timeout before the first
        accepted announcement, then the observer grace after the last one or the last heartbeat)."""
        if self._heard is None:
            return self._idle_timeout - (time.monotonic() - self._started)
        return self._grace - (time.monotonic() - self._heard)

    def _silence(self) -> TransportError:
        if self._heard is None:
            return TransportError(f"party {self.party}: no announcement for {self._idle_timeout:g} s")
        return TransportError(
            f"party {self.party}: the observer has sent no round and no heartbeat for {self._grace:g} s "
            f"(--observer-grace): it is gone; leaving (answers so far are in the record; restart to rejoin)")

    def start_clock(self) -> None:
        """Start the idle timeout: the party is subscribed and waits for the first announcement."""
        self._started = time.monotonic()

    async def receive(self, transport: Transport) -> Delivery:
        """The next message on ``transport``, waiting no longer than the coordinator may stay silent (the idle
        timeout before the first accepted announcement, then the observer grace after the last one or the
        last heartbeat; the clock starts at :meth:`start_clock`).

        Raises:
            TransportError: the silence was too long (the observer is gone), or the connection is lost for good.
        """
        wait = self._wait_left()
        delivery = None if wait <= 0 else await next_delivery(transport, wait)
        if delivery is None:
            raise self._silence()
        return delivery

    async def _serve(self, transport: Transport) -> None:
        self.start_clock()
        while True:
            if await self.handle(transport, await self.receive(transport)):
                return

    async def handle(self, transport: Transport, delivery: Delivery) -> bool:
        """Act on one incoming message: answer a round announcement (once; publish the answer on
        ``transport``), note a heartbeat, answer a message on the protocol's other topics, refuse (count)
        what does not verify. True at the end announcement (the party is done), else False.

        A worker that serves many parties on one connection
        (:func:`mpdp.parties.session.multiplex.serve_multiplexed`) calls this for each of its parties."""
        if delivery.topic != self._topics.rounds:
            reply = self._protocol.receive(delivery.topic, delivery.payload)
            if reply is not None:
                await transport.publish(self._topics.decision(self.party), reply.model_dump_json())
            return False
        announcement = self.announcement(delivery.payload)
        if announcement is None:
            return False
        self._heard = time.monotonic()
        if announcement.kind == "heartbeat":  # a party that holds a recorded answer for the round in flight
            if announcement.round in self.sent and announcement.round not in self._published:
                async with self._gate:  # recorded before a restart: the same message again
                    await self._publish(transport, announcement.round)
            return False
        if announcement.kind == "end":
            if self._record is not None:
                await self._record.save_end(self._topics.session, self.party, announcement.sequence)
            return True
        # The gate: one announcement makes every party of the worker ready in the same event-loop
        # iteration, and asyncio runs all of them before it polls the sockets again; thousands of
        # answers (draw, sign: ~1 ms each) would hold the loop for seconds, so PUBACKs that arrived long
        # ago wait unread and the publishes time out (the 5,000- and 10,000-party runs' "Operation timed
        # out"). Through the gate, a few dozen parties answer per iteration and the loop reads in between.
        async with self._gate:
            if announcement.round not in self.sent:
                self.sent[announcement.round] = await self._answer(announcement)
            await self._publish(transport, announcement.round)
        return False

    async def _publish(self, transport: Transport, index: int) -> None:
        """Publish the message recorded for round ``index`` on the party's topic (the caller holds the gate)."""
        await transport.publish(self._topics.party(self.party), self.sent[index])
        self._published.add(index)

    async def _answer(self, announcement: AnnouncementT) -> bytes:
        """The protocol's answer to a round not answered before, committed to the record (with its ledger
        charge) before it is published."""
        payload = self._protocol.respond(announcement).to_wire()
        if self._record is not None:
            charge = next((c for c in self._protocol.ledger.charges if c.round == announcement.round), None)
            await self._record.save(RecordedAnswer(self._topics.session, self.party, announcement.round, payload,
                                                   charge, announcement.sequence))
        return payload


@functools.lru_cache(maxsize=256)
def checked_announcement(kind: type[AnnouncementT], payload: bytes, session: str, coordinator_key: bytes
                         ) -> tuple[AnnouncementT | None, str, str]:
    """``payload`` parsed as ``kind`` and its Ed25519 signature checked against ``coordinator_key`` (raw
    public key) and ``session``: ``(announcement, "", "")``, or ``(None, reason, detail)`` with reason
    ``schema`` (malformed), ``session`` (another session's) or ``signature`` (not the coordinator's). A pure
    function of its arguments, so its results are cached (bounded, per process): the many parties of a
    worker receive the same bytes of each announcement, and each one's check is the same; the announcement
    is frozen (pydantic ``frozen=True``). Freshness (sequence, expiry) is each party's own check."""
    try:
        announcement = kind.model_validate_json(payload)
    except ValidationError as exc:
        return None, "schema", str(exc.errors()[0]["msg"])
    where = f"{announcement.kind} {announcement.round}"
    if announcement.session != session:
        return None, "session", f"{where}: session {announcement.session!r}"
    if not verify_message(announcement, coordinator_key):
        return None, "signature", f"{where}: not signed by the coordinator"
    return announcement, "", ""
