"""The coordinator's liveness as one party process sees it: slow is not gone.

The coordinator (:class:`mpdp.parties.rounds.engine.RoundEngine`) publishes a signed heartbeat on
``mpdp/{session}/heartbeat`` whenever it announced nothing for a second. A party process (a simulation
worker, a party host) reads that topic on ONE connection and keeps ONE :class:`ObserverClock` for all of
its parties: the cost of liveness is one message per process and second, not one per party (a heartbeat
fanned out to 1,000 party connections each second was itself most of a busy machine's load). The
parties' own connections carry only what they act on (round announcements, the end); an announcement a
party accepts is a sign of life on the same clock (:meth:`ObserverClock.note`).

Silence is measured while the process's own connection is up (:class:`Stopwatch`): a process that cannot
reach the broker does not conclude that the observer is gone, it waits for its connection. A heartbeat
is accepted when it is signed by the coordinator, of the session, and newer than the last one
(sequence, :class:`mpdp.broker.control.FreshnessGuard`); its lifetime is minutes, so a heartbeat that
waited in a busy machine's queues still counts: the delay is the reader's, not the observer's.
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
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["SAMPLE_INTERVAL", "AnnouncementT", "ObserverClock", "Stopwatch", "checked_announcement", "is_connected"]

log = logging.getLogger("mpdp.party")

#: Seconds between two looks at a connection's state (a paused clock resumes within this).
SAMPLE_INTERVAL = 1.0

AnnouncementT = TypeVar("AnnouncementT", bound=RoundAnnouncement)


def is_connected(transport: Transport) -> Callable[[], bool]:
    """Whether ``transport`` is connected now, as a callable (a transport without a ``connected``
    attribute counts as always connected)."""
    return lambda: bool(getattr(transport, "connected", True))


class Stopwatch:
    """Seconds since :meth:`restart` during which a connection was up.

    The state is sampled (:meth:`sample`, and at every :meth:`elapsed`); a span between two samples counts
    only when the connection was up at both: time that may have been spent disconnected is not counted
    (a clock that errs towards patience).

    Args:
        up: whether the connection is up now (default: always).
        clock: monotonic seconds (tests pass their own).
    """

    def __init__(self, up: Callable[[], bool] = lambda: True, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.up = up
        self.restart()

    def restart(self) -> None:
        """Start counting from zero now."""
        self._start = self._sampled = self._clock()
        self._paused = 0.0
        self._was_up = self.up()

    def sample(self) -> None:
        """Look at the connection now (the span since the last look counts if it was up at both)."""
        now, up = self._clock(), self.up()
        if not (up and self._was_up):
            self._paused += now - self._sampled
        self._sampled, self._was_up = now, up

    def elapsed(self) -> float:
        """Seconds counted since :meth:`restart` (sampled now), >= 0."""
        self.sample()
        return max(0.0, self._sampled - self._start - self._paused)


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

    def follow(self, up: Callable[[], bool]) -> None:
        """Count silence only while ``up()`` (the connection the signs of life come on) is True."""
        self._watch.up = up
        self._watch.sample()

    def note(self) -> None:
        """A sign of life now (an announcement a party accepted, a heartbeat)."""
        self.heard = True
        self._watch.restart()

    def silence(self) -> float:
        """Seconds without a sign of life while connected (since this clock was made, before any)."""
        return self._watch.elapsed()

    def sample(self) -> None:
        """Look at the connection's state now (:class:`Stopwatch`)."""
        self._watch.sample()

    def offer(self, payload: bytes) -> None:
        """Take a message of the heartbeat topic: a sign of life if it is the coordinator's fresh heartbeat
        of this session (it wakes :meth:`next_beat`).

        Raises:
            ProtocolViolation: ``schema``, ``session``, ``signature`` (:func:`checked_announcement`),
                ``topic`` (not a heartbeat), ``expired``, ``replay``: refused, nothing changes.
        """
        announcement, reason, detail = self._check(bytes(payload))
        if announcement is None:
            raise ProtocolViolation(reason, f"{self.topics.heartbeat}: {detail}")
        where = f"{self.topics.heartbeat} {announcement.kind} {announcement.round}"
        if announcement.kind != "heartbeat":
            raise ProtocolViolation("topic", f"{where}: not a heartbeat")
        self._fresh.check(announcement, "coordinator", where)
        self.round = announcement.round
        self.note()
        self._beat.set()
        self._beat = asyncio.Event()

    async def next_beat(self) -> int:
        """Wait for the next accepted heartbeat; the round it names."""
        await self._beat.wait()
        assert self.round is not None
        return self.round

    async def listen(self, connector: Connector, client_id: str, sample: float = SAMPLE_INTERVAL) -> None:
        """Read the heartbeat topic on a connection of its own (as ``client_id``) until cancelled, looking
        at that connection's state every ``sample`` seconds.

        Raises:
            TransportError: the broker is gone for good.
        """
        async with connector.connect(client_id) as transport:
            await transport.subscribe(self.topics.heartbeat)
            self.follow(is_connected(transport))
            while True:
                delivery = await next_delivery(transport, sample)
                self.sample()
                if delivery is not None:
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
