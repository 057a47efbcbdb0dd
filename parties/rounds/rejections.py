"""Counting and rate-limited logging of rejected messages, for every receiver (engine, party loop).

A flood of forged messages must neither go unnoticed nor flood the log: each rejection is counted by
reason; the first of a reason is logged at WARNING at once, later ones at most once per ``interval``
seconds per reason, with the number left out since the last line.
"""

from __future__ import annotations

import collections
import logging
import time
from collections.abc import Callable

__all__ = ["RejectLog"]


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
        skipped = 0 if last is None else self.counts[reason] - last[1] - 1
        more = f" (and {skipped} more since the last report)" if skipped else ""
        self._logger.warning("%s: rejected a message (%s): %s%s", self.who, reason, detail[:200], more)
        self._logged[reason] = (now, self.counts[reason])
