"""Freshness of control-plane messages: a monotonic sequence and an expiry, signed with the message.

Every message that changes what a receiver does (round and end announcements, worker status reports,
transcripts, releases) carries, inside the signed bytes (:mod:`mpdp.broker.signing`):

* ``sequence`` — the sender's monotonic counter, :func:`next_sequence`: the wall clock in nanoseconds,
  forced strictly increasing within a process, so it also increases across a restart of the sender
  (as long as its clock does not step back);
* ``expires_ms`` — unix milliseconds after which the message is void (the sender's clock; the hosts'
  clocks must agree to well within a message's lifetime, e.g. NTP).

A receiver keeps a :class:`FreshnessGuard`: it refuses a message whose expiry has passed (``expired``)
or whose sequence is not above the last accepted one from the same sender (``replay``: a captured
message sent again, or an older one delivered late). Signature and session are checked by the caller
first, so the guard only ever sees authentic messages of its session.

A guard may be given the moment from which it judges messages by their sequence alone (``since_ns``): one
stamped then or later (its sequence is the sender's clock) was sent while the guard kept every sender's last
sequence, so a replay of it is refused by its sequence and its age proves nothing; only a message stamped
before (the session's past, e.g. before the receiver restarted) must also be unexpired. A receiver that falls
behind (an observer starved of CPU, reading a backlog of its workers' "ready" parts) then refuses nothing for
its own delay.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Annotated, Protocol, TypedDict

from pydantic import Field

from mpdp.protocols.errors import ProtocolViolation

__all__ = [
    "DEFAULT_LIFETIME",
    "ExpiresMs",
    "FreshnessGuard",
    "Sequence",
    "Stamp",
    "Stamped",
    "next_sequence",
    "stamp",
]

#: Seconds a control message stays valid unless its sender says otherwise (announcements, heartbeats,
#: status, end, transcript): minutes, so that a message delayed by a busy machine is not refused for its
#: delay; replays are refused by the sequence.
DEFAULT_LIFETIME = 600.0

Sequence = Annotated[int, Field(ge=1, le=2**63 - 1, strict=True)]
ExpiresMs = Annotated[int, Field(ge=0, le=2**53, strict=True)]

_lock = threading.Lock()
_last = 0


def next_sequence() -> int:
    """The next sequence number of this process: ``time.time_ns()``, or the last one plus 1 if the
    clock has not moved past it (strictly increasing, thread-safe)."""
    global _last
    with _lock:
        _last = max(_last + 1, time.time_ns())
        return _last


class Stamp(TypedDict):
    """The freshness fields of one message."""

    sequence: int
    expires_ms: int


def stamp(lifetime: float) -> Stamp:
    """The freshness fields of a message sent now: ``{"sequence": next_sequence(), "expires_ms": now +
    lifetime}`` (``lifetime`` in seconds, > 0).

    Raises:
        ValueError: ``lifetime`` not a finite number > 0.
    """
    if not 0 < lifetime < float("inf"):
        raise ValueError(f"lifetime must be a finite number of seconds > 0, got {lifetime!r}")
    return Stamp(sequence=next_sequence(), expires_ms=int((time.time() + lifetime) * 1000))


class Stamped(Protocol):
    """A message with the freshness fields."""

    @property
    def sequence(self) -> int: ...

    @property
    def expires_ms(self) -> int: ...


class FreshnessGuard:
    """Refuses expired and replayed control messages, per sender (module docstring).

    Args:
        clock: unix seconds now (``time.time``; tests pass their own).
        last: each sender's last accepted sequence (a restarted receiver's record).
        since_ns: unix nanoseconds from which a message's sequence (its sender's clock when stamped) alone
            judges it: one stamped then or later is not refused for its age (module docstring); None: every
            message must be unexpired.
    """

    __slots__ = ("_clock", "_last", "_since_ns")  # a worker keeps one per party

    def __init__(self, clock: Callable[[], float] = time.time, last: dict[Hashable, int] | None = None,
                 since_ns: int | None = None) -> None:
        self._clock = clock
        self._last: dict[Hashable, int] = dict(last or {})
        self._since_ns = since_ns

    def last(self, sender: Hashable) -> int:
        """The sequence of the last message accepted from ``sender`` (0: none)."""
        return self._last.get(sender, 0)

    def check(self, message: Stamped, sender: Hashable, where: str, record: bool = True) -> None:
        """Accept ``message`` from ``sender`` (its sequence becomes the last one, unless ``record`` is False:
        a message that changes nothing, checked only) or refuse it.

        Raises:
            ProtocolViolation: ``expired`` (its expiry has passed and it was stamped before ``since_ns``),
                ``replay`` (its sequence is not above the last accepted from ``sender``). Nothing is remembered
                of a refused message.
        """
        now_ms = self._clock() * 1000
        if message.expires_ms <= now_ms and (self._since_ns is None or message.sequence < self._since_ns):
            raise ProtocolViolation("expired", f"{where}: expired {(now_ms - message.expires_ms) / 1000:.1f} s ago")
        if message.sequence <= self.last(sender):
            raise ProtocolViolation("replay", f"{where}: sequence {message.sequence} <= {self.last(sender)}")
        if record:
            self._last[sender] = message.sequence
