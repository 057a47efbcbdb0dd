"""A party's side of the round engine, written once for every protocol: connect, subscribe, verify each
announcement, answer each round once and in order, leave at the end.

An announcement counts only when it is well formed (else ``schema``), of the party's session
(``session``), signed by the coordinator (``signature``), unexpired (``expired``) and newer than the last
one the party accepted (``replay``, :class:`mpdp.broker.control.FreshnessGuard`; with a record the last
sequence survives a restart). A round announcement is then answered only if its round is later than
every round the party answered (``out-of-order`` otherwise: a round it missed stays missed), or gets the
recorded answer again if the party answered it. Everything refused is counted and logged, rate-limited
(:attr:`PartyLoop.rejections`), and changes nothing.

A dead observer is noticed, a slow one is not taken for dead: the coordinator publishes a heartbeat on
its own topic whenever it announced nothing for a second (:meth:`mpdp.parties.rounds.engine.RoundEngine.heartbeat`).
A party reads its coordinator's signs of life from an :class:`mpdp.parties.rounds.liveness.ObserverClock`:
its own (it subscribes to the heartbeat topic itself), or one clock per process shared by all of its
parties (:meth:`PartyLoop.share_clock`; the process reads the heartbeats once, on a connection of its own,
:meth:`ObserverClock.listen`: a worker and a party host do so). An announcement the party accepts is a
sign of life on that clock too. Before the first sign of life a party waits up to ``idle_timeout`` (the
observer may start later); after it, ``observer_grace`` seconds (default :data:`OBSERVER_GRACE`: minutes)
of silence counted while the clock's connection is up end the party with a TransportError saying the
observer is gone (its answers stay in the record; a restarted host rejoins). A failed coordinator's end
(its ``name`` starts with :data:`mpdp.broker.messages.FAILED_END`) ends the party at once with a WorkerError
naming the failure; it is not recorded as the session's end (a resumed observer may continue the session).

A heartbeat names the round open (or next): a party that holds a recorded answer for that round and has
not published it in this process (a host restarted mid-round, after it answered: the round's announcement
went out before it reconnected) re-sends the recorded message then, once, so the observer gets the same
signed bytes again, never a fresh draw, without waiting for a re-announcement.

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
import logging
import secrets
import time
from collections.abc import Callable
from typing import Generic, Protocol

from pydantic import BaseModel

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.control import FreshnessGuard
from mpdp.broker.messages import FAILED_END
from mpdp.broker.signing import load_public_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Delivery, Transport, next_delivery
from mpdp.broker.transport.base import running
from mpdp.parties.rounds.answer_record import AnswerRecord, RecordedAnswer
from mpdp.parties.rounds.liveness import AnnouncementT, ObserverClock, checked_announcement
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.protocols.errors import ProtocolViolation, TransportError, WorkerError

__all__ = ["OBSERVER_GRACE", "PartyLoop", "PartyProtocol", "Publishable"]

log = logging.getLogger("mpdp.party")
_COORDINATOR = "coordinator"

#: Seconds of coordinator silence (no announcement, no heartbeat, counted while connected) after which a
#: party leaves: minutes, a slow observer (a busy machine, a long round) is not a gone one.
OBSERVER_GRACE = 600.0


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

    async def receive(self, topic: str, payload: bytes) -> BaseModel | None:
        """The signed answer to a message on one of :attr:`filters`, published on the party's
        decisions topic, or None (what takes long runs off the event loop)."""
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
        self._topic = topics.party(party)  # where this party publishes its answers
        load_public_key(coordinator_key)  # a malformed key fails here, not at the first announcement
        self._coordinator_key = bytes(coordinator_key)
        self._idle_timeout = idle_timeout
        self._grace = observer_grace
        #: its own clock, made when first read (:attr:`clock`): a worker's parties share one instead, and 10^6
        #: clocks made only to be replaced cost ~4% of a worker's CPU
        self._clock: ObserverClock[AnnouncementT] | None = None
        self._own_clock = True  # fed by this loop's own connection (until share_clock)
        self._started = time.monotonic()
        self._gate = connect_gate or asyncio.Semaphore(1)
        self._record = record
        #: round -> the signed message this party published for it (from the record after a restart)
        self.sent: dict[int, bytes] = {} if record is None else record.answers(topics.session, party)
        #: rounds whose message this process published: kept with a record only, the one case a recorded answer
        #: may await its re-sending (:meth:`_resend_recorded`); ~216 bytes a party otherwise spent for nothing
        self._published: set[int] | None = None if record is None else set()
        self._client_id = f"mpdp-{topics.session}-party-{party}-{secrets.token_hex(8)}"
        last = 0 if record is None else record.last_sequence(topics.session, party)
        self._fresh = FreshnessGuard(last={_COORDINATOR: last})
        #: every announcement (and heartbeat on its own clock) refused, counted by reason (and logged, rate-limited)
        self.rejections = RejectLog(log, f"party {party}")

    @property
    def clock(self) -> ObserverClock[AnnouncementT]:
        """The coordinator's signs of life as this party sees them (module docstring)."""
        if self._clock is None:
            self._clock = ObserverClock(self._protocol.announcement_class, self._topics, self._coordinator_key)
        return self._clock

    def share_clock(self, clock: ObserverClock[AnnouncementT]) -> None:
        """Read the coordinator's liveness from ``clock``, the process's one clock (fed by
        :meth:`ObserverClock.listen`), instead of subscribing to the heartbeats on this party's connection.
        Call before :meth:`run`."""
        self._clock, self._own_clock = clock, False

    @property
    def client_id(self) -> str:
        """The client id: session, party and a random suffix drawn once per loop (kept across its
        reconnects), so no other client can guess it and take this connection over."""
        return self._client_id

    @property
    def filters(self) -> tuple[str, ...]:
        """The topics this party subscribes to: the announcements, the heartbeats when its clock is its
        own, then its protocol's others."""
        return (self._topics.rounds, *(self._topics.heartbeat,) * self._own_clock, *self._protocol.filters)

    def is_heartbeat(self, delivery: Delivery) -> bool:
        """True iff ``delivery`` came on the heartbeat topic (:meth:`handle` checks it)."""
        return delivery.topic == self._topics.heartbeat

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
        if announcement.kind == "heartbeat":
            raise ProtocolViolation("topic", f"{where}: heartbeats come on {self._topics.heartbeat}")
        self._fresh.check(announcement, _COORDINATOR, where)
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
        sign of life, then the observer grace counted on the clock)."""
        if not self.clock.heard:
            return self._idle_timeout - (time.monotonic() - self._started)
        return self._grace - self.clock.silence()

    def _silence(self) -> TransportError:
        if not self.clock.heard:
            return TransportError(f"party {self.party}: no announcement for {self._idle_timeout:g} s")
        return TransportError(
            f"party {self.party}: the observer has sent no round and no heartbeat for {self._grace:g} s "
            f"(--observer-grace): it is gone; leaving (answers so far are in the record; restart to rejoin)")

    def start_clock(self) -> None:
        """Start the idle timeout: the party is subscribed and waits for the first announcement."""
        self._started = time.monotonic()

    async def receive(self, transport: Transport) -> Delivery:
        """The next message on ``transport``, waiting no longer than the coordinator may stay silent (the idle
        timeout before the first sign of life, then the observer grace on the clock; the idle timeout starts
        at :meth:`start_clock`). The party wakes when its wait runs out and waits on if the clock heard the
        coordinator meanwhile: no wake-up per heartbeat.

        Raises:
            TransportError: the silence was too long (the observer is gone), or the connection is lost for good.
        """
        while (wait := self._wait_left()) > 0:
            delivery = await next_delivery(transport, wait)
            if delivery is not None:
                return delivery
        raise self._silence()

    async def _serve(self, transport: Transport) -> None:
        self.start_clock()
        if self._own_clock:
            self.clock.follow(transport)
        async with running(self._resend_recorded(transport), f"party-{self.party}-resend"):
            while not await self.handle(transport, await self.receive(transport)):
                pass

    async def _resend_recorded(self, transport: Transport) -> None:
        """Re-send a recorded answer this process has not published when a heartbeat names its round (module
        docstring); done once the heartbeats name a round past every recorded one (nothing to wait for
        without a record)."""
        published = self._published
        while published is not None and self.sent and set(self.sent) - published:
            index = await self.clock.next_beat()
            if index in self.sent and index not in published:
                async with self._gate:
                    await self._publish(transport, index)
            if index >= max(self.sent):
                return

    async def handle(self, transport: Transport, delivery: Delivery) -> bool:
        """Act on one incoming message: answer a round announcement (once; publish the answer on
        ``transport``), note a heartbeat, answer a message on the protocol's other topics, refuse (count)
        what does not verify. True at the end announcement (the party is done), else False.

        A worker that serves many parties on one connection
        (:func:`mpdp.parties.session.multiplex.serve_multiplexed`) calls this for each of its parties."""
        if self.is_heartbeat(delivery):
            try:
                self.clock.offer(delivery.payload)
            except ProtocolViolation as exc:
                self.rejections.reject(exc.reason, exc.detail)
            return False
        if delivery.topic != self._topics.rounds:
            reply = await self._protocol.receive(delivery.topic, delivery.payload)
            if reply is not None:
                await transport.publish(self._topics.decision(self.party), reply.model_dump_json())
            return False
        announcement = self.announcement(delivery.payload)
        if announcement is None:
            return False
        self.clock.note()
        if announcement.kind == "end":
            if announcement.name.startswith(FAILED_END):  # not recorded as ended: a resumed session may go on
                raise WorkerError(f"party {self.party}: the observer failed and ended the session "
                                  f"({announcement.name[len(FAILED_END):]}); leaving (answers so far are in the record; "
                                  "restart to rejoin a resumed session)")
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
        await transport.publish(self._topic, self.sent[index])
        if self._published is not None:
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

