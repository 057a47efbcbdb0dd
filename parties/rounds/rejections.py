"""Counting and rate-limited logging of rejected messages, for every receiver (engine, party loop).

A flood of forged messages must neither go unnoticed nor flood the log: each rejection is counted by
reason; the first of a reason is logged at WARNING at once, later ones at most once per ``interval``
seconds per reason, with the number left out since the last line. One message refused by many receivers of
a process alike (the parties of a deployed host, each with its own connection, refusing the same stale
announcement after a broker restart) is logged by the first of them only: a line of the same reason and
detail written by another receiver of the same logger less than ``interval`` seconds before is not repeated
(each receiver still counts it).
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable

__all__ = ["RejectLog"]

#: (logger name, reason) -> (detail, clock time) of the last line written by any receiver in this process
_LAST_LINE: dict[tuple[str, str], tuple[str, float]] = {}


class RejectLog:
    """Rejections of one receiver, counted and logged (module docstring).

    Args:
        logger: where the lines go. who: the receiver in each line (``observer``, ``party 3``).
        interval: seconds between two lines of one reason, at least. clock: monotonic seconds.

    Attributes:
        counts: reason -> number of messages rejected for it.
        last: the reason and detail of the last rejection (None before any).
        quiet: count only, log nothing (a caller logs for many receivers at once, e.g. a simulation worker
            for its parties on one connection, :mod:`mpdp.parties.session.multiplex`).
    """

    # slots: a worker keeps one per party (10^6 parties: ~100 bytes each saved)
    __slots__ = ("_clock", "_interval", "_logged", "_logger", "counts", "last", "quiet", "who")

    def __init__(self, logger: logging.Logger, who: str, interval: float = 5.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._logger = logger
        self.who = who
        self._interval = interval
        self._clock = clock
        self.counts: collections.Counter[str] = collections.Counter()
        self._logged: dict[str, tuple[float, int]] = {}  # reason -> (time of its last line, count then)
        self.last: tuple[str, str] | None = None
        self.quiet = False

    @property
    def total(self) -> int:
        """The number of messages rejected, all reasons."""
        return sum(self.counts.values())

    def reject(self, reason: str, detail: str) -> None:
        """Count one rejected message and log it unless a line of ``reason`` was written less than
        ``interval`` seconds ago (or :attr:`quiet`)."""
        self.counts[reason] += 1
        self.last = (reason, detail)
        if self.quiet:
            return
        now = self._clock()
        last = self._logged.get(reason)
        if last is not None and now - last[0] < self._interval:
            return
        shared = _LAST_LINE.get((self._logger.name, reason))
        if shared is not None and shared[0] == detail and 0.0 <= now - shared[1] < self._interval:
            return  # another receiver of this process logged the same message just now
        _LAST_LINE[(self._logger.name, reason)] = (detail, now)
        skipped = 0 if last is None else self.counts[reason] - last[1] - 1
        more = f" (and {skipped} more since the last report)" if skipped else ""
        self._logger.warning("%s: rejected a message (%s): %s%s", self.who, reason, detail[:200], more)
        self._logged[reason] = (now, self.counts[reason])
