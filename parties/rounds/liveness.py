"""The coordinator's liveness as one party process sees it: slow is not gone.

The coordinator (:class:`mpdp.parties.rounds.engine.RoundEngine`) publishes a signed heartbeat on
``mpdp/{session}/heartbeat`` whenever it announced nothing for a second. A party process (a simulation
worker, a party host) reads that topic on ONE connection and keeps ONE :class:`ObserverClock` for all of
its parties: the cost of liveness is one message per process and second, not one per party (a heartbeat
fanned out to 1,000 party connections each second was itself most of a busy machine's load). The
parties' own connections carry only what they act on (round announcements, the end); an announcement a
party accepts is a sign of life on the same clock (:meth:`ObserverClock.note`).

Silence is measured while the process's own connection is up (:class:`Stopwatch`: wall time minus the
connection's :attr:`mpdp.broker.transport.Transport.downtime`): a process that cannot reach the broker
does not conclude that the observer is gone, it waits for its connection. A heartbeat
is accepted when it is signed by the coordinator, of the session, and newer than the last one
(sequence, :class:`mpdp.broker.control.FreshnessGuard`); its lifetime is minutes, so a heartbeat that
waited in a busy machine's queues still counts: the delay is the reader's, not the observer's.

A heartbeat that is not newer than the last one accepted (its sequence is not above it) is ignored, as before,
but it is no alarm: MQTT delivers at least once, and when the observer's connection drops and comes back it
publishes again what the broker had not acknowledged (``Transport.publish``), so the heartbeats in flight then
reach every worker twice (at 10^5 parties each observer reconnect logged ``rejected a message (replay)`` lines).
Such a copy, or an older heartbeat delivered after a newer one, carries nothing the clock does not have: the
newer sign of life was noted, silence and the round named are unchanged, and nothing waits on it (the parties'
readiness is their worker's status report, not a heartbeat). It is counted (:attr:`ObserverClock.redelivered`)
and the first one logs one line at INFO; a forged or expired heartbeat is still a rejection (WARNING).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from pydantic import ValidationError

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.messages import RoundAnnouncement
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["AnnouncementT", "ObserverClock", "Stopwatch", "checked_announcement"]

log = logging.getLogger("mpdp.party")

AnnouncementT = TypeVar("AnnouncementT", bound=RoundAnnouncement)


def _never_down() -> float:
    return 0.0


class Stopwatch:
    """Seconds since :meth:`restart` during which a connection was up: the monotonic time passed minus the
    downtime the connection gained meanwhile.

    Args:
        downtime: the connection's seconds without its broker so far (e.g. ``lambda: transport.downtime``;
            default: never down).
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, downtime: Callable[[], float] = _never_down, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._downtime = downtime
        self._start, self._down = 0.0, 0.0
        self.restart()

    def follow(self, downtime: Callable[[], float]) -> None:
        """Count the downtime of another connection from now on (what was counted so far stays)."""
        self._start += self._downtime() - self._down  # the pause gained so far, kept
        self._downtime, self._down = downtime, downtime()

    def restart(self) -> None:
        """Start counting from zero now."""
        self._start, self._down = self._clock(), self._downtime()

    def elapsed(self) -> float:
        """Seconds counted since :meth:`restart`, >= 0."""
        return max(0.0, self._clock() - self._start - (self._downtime() - self._down))


class ObserverClock(Generic[AnnouncementT]):
    """One process's record of the coordinator's signs of life (module docstring).

    Args:
        announcement_class: the protocol's signed announcement (its heartbeats are of this class).
        topics: the session's topics; coordinator_key: raw Ed25519 public key of the coordinator.
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, announcement_class: type[AnnouncementT], topics: Topics, coordinator_key: bytes, *,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._check = functools.partial(checked_announcement, announcement_class, session=topics.session,
                                        coordinator_key=bytes(coordinator_key))
        self.topics = topics
        self._watch = Stopwatch(clock=clock)
        self._fresh = FreshnessGuard()
        self._beat = asyncio.Event()
        #: True once a heartbeat or an accepted announcement was seen
        self.heard = False
        #: the round named by the last accepted heartbeat (open, or next), None before the first
        self.round: int | None = None
        #: heartbeats refused, counted by reason (and logged, rate-limited)
        self.rejections = RejectLog(log, "heartbeats")
        #: heartbeats ignored as not newer than the last one accepted (copies delivered again, or late)
        self.redelivered = 0

    def follow(self, transport: Transport) -> None:
        """Count silence only while ``transport`` (the connection the signs of life come on) is connected."""
        self._watch.follow(lambda: transport.downtime)

    def note(self) -> None:
        """A sign of life now (an announcement a party accepted, a heartbeat)."""
        self.heard = True
        self._watch.restart()

    def silence(self) -> float:
        """Seconds without a sign of life while connected (since this clock was made, before any)."""
        return self._watch.elapsed()

    def offer(self, payload: bytes) -> None:
        """Take a message of the heartbeat topic: a sign of life if it is the coordinator's fresh heartbeat
        of this session (it wakes :meth:`next_beat`).

        A heartbeat not newer than the last one accepted changes nothing either, and is counted in
        :attr:`redelivered`, not raised (module docstring).

        Raises:
            ProtocolViolation: ``schema``, ``session``, ``signature`` (:func:`checked_announcement`),
                ``topic`` (not a heartbeat), ``expired``: refused, nothing changes.
        """
        announcement, reason, detail = self._check(bytes(payload))
        if announcement is None:
            raise ProtocolViolation(reason, f"{self.topics.heartbeat}: {detail}")
        where = f"{self.topics.heartbeat} {announcement.kind} {announcement.round}"
        if announcement.kind != "heartbeat":
            raise ProtocolViolation("topic", f"{where}: not a heartbeat")
        try:
            self._fresh.check(announcement, "coordinator", where)
        except ProtocolViolation as exc:
            if exc.reason != "replay":
                raise
            self.redelivered += 1
            if self.redelivered == 1:
                log.info("heartbeats: %s came again, or after a newer one (MQTT delivers at least once, e.g. "
                         "again after the observer reconnects): ignored; the next such are counted, not logged",
                         where)
            return
        self.round = announcement.round
        self.note()
        self._beat.set()
        self._beat = asyncio.Event()

    async def next_beat(self) -> int:
        """Wait for the next accepted heartbeat; the round it names."""
        await self._beat.wait()
        assert self.round is not None
        return self.round

    async def listen(self, connector: Connector, client_id: str) -> None:
        """Read the heartbeat topic on a connection of its own (as ``client_id``) until cancelled; silence
        counts only while that connection is up.

        Raises:
            TransportError: the broker is gone for good.
        """
        async with connector.connect(client_id) as transport:
            self.follow(transport)
            await transport.subscribe(self.topics.heartbeat)
            async for delivery in transport.deliveries():
                try:
                    self.offer(delivery.payload)
                except ProtocolViolation as exc:
                    self.rejections.reject(exc.reason, exc.detail)


@functools.lru_cache(maxsize=256)
def checked_announcement(kind: type[AnnouncementT], payload: bytes, session: str, coordinator_key: bytes
                         ) -> tuple[AnnouncementT | None, str, str]:
    """``payload`` parsed as ``kind`` and its Ed25519 signature checked against ``coordinator_key`` (raw
    public key) and ``session``: ``(announcement, "", "")``, or ``(None, reason, detail)`` with reason
    ``schema`` (malformed), ``session`` (another session's) or ``signature`` (not the coordinator's). A pure
    function of its arguments, so its results are cached (bounded, per process): the many parties of a
    worker receive the same bytes of each announcement, and each one's check is the same; the announcement
    is frozen (pydantic ``frozen=True``). Freshness (sequence, expiry) is each receiver's own check."""
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
