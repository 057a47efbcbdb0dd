"""One log line per change of a process's connection to a broker, however many connections it holds.

A party host holds one MQTT connection per party (hundreds); when the broker goes away they are all
lost within milliseconds and come back one by one. This process-wide record turns that into two
WARNING lines per broker URL on the ``mpdp.transport`` logger: when the first connection is lost (with
the reason and the reconnect window), and when the last lost one is back (after how long, how many
attempts). Each connection's own loss and return are DEBUG records (``mpdp -vv``). A connection that
gives up or closes while lost leaves the outage without a line: its error is reported where it is raised.

One event loop per process uses it (the transports call it from their reader tasks, never from threads).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

__all__ = ["OUTAGES", "Outages", "duration"]

log = logging.getLogger("mpdp.transport")


@dataclass
class _Outage:
    """The connections to one broker lost since its first was."""

    started: float
    lost: set[str] = field(default_factory=set)
    restored: int = 0
    attempts: int = 0


class Outages:
    """The lost connections of this process, by broker URL (module docstring)."""

    def __init__(self) -> None:
        self._outages: dict[str, _Outage] = {}

    def lost(self, url: str, client_id: str, reason: str, window: float) -> None:
        """Note that ``client_id``'s connection to ``url`` is lost (``reason``); it reconnects for up to
        ``window`` seconds. The first loss of an outage is logged at WARNING."""
        outage = self._outages.get(url)
        if outage is None:
            outage = self._outages[url] = _Outage(time.monotonic())
            log.warning("lost the connection to the MQTT broker at %s (%s); reconnecting for up to %s",
                        url, reason, duration(window))
        outage.lost.add(client_id)
        log.debug("client %r lost its connection to %s (%s)", client_id, url, reason)

    def restored(self, url: str, client_id: str, attempts: int) -> None:
        """Note that ``client_id`` reconnected to ``url`` after ``attempts`` attempts; the last one back
        logs the outage's end at WARNING."""
        outage = self._outages.get(url)
        if outage is None or client_id not in outage.lost:
            return
        outage.restored += 1
        outage.attempts = max(outage.attempts, attempts)
        log.debug("client %r reconnected to %s (%d attempts)", client_id, url, attempts)
        self._leave(url, outage, client_id)

    def abandoned(self, url: str, client_id: str) -> None:
        """Note that ``client_id`` no longer reconnects to ``url`` (it gave up or closed)."""
        outage = self._outages.get(url)
        if outage is not None and client_id in outage.lost:
            self._leave(url, outage, client_id)

    def _leave(self, url: str, outage: _Outage, client_id: str) -> None:
        outage.lost.discard(client_id)
        if outage.lost:
            return
        del self._outages[url]
        if outage.restored:
            many = (f"{outage.restored} connections, at most {outage.attempts} attempts each"
                    if outage.restored > 1 else f"{outage.attempts} attempt{'s' * (outage.attempts > 1)}")
            log.warning("reconnected to the MQTT broker at %s after %.1f s (%s)", url,
                        time.monotonic() - outage.started, many)

    def ongoing(self, url: str) -> bool:
        """True while a connection of this process to ``url`` is lost."""
        return url in self._outages


def duration(seconds: float) -> str:
    """``seconds`` in words: ``45 s``, ``10 min``, ``1.5 h``."""
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:g} min"
    return f"{seconds / 3600:g} h"


#: This process's record (the transports share it).
OUTAGES = Outages()
