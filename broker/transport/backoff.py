"""When to try connecting again: exponential backoff with full jitter, bounded by a window of time.

After the n-th failed attempt (n = 0, 1, ...) a client waits a delay drawn uniformly from
``[0, min(cap, first * 2**n)]`` ("full jitter": the clients of a restarted broker, a host's hundreds of
parties among them, spread their reconnects instead of arriving in one storm), never past the window's
deadline. The random source is given (a :class:`random.Random` of the caller's): no global random state,
and a test draws the same delays from the same seed.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from mpdp.protocols.errors import ParameterError

__all__ = ["CAP_DELAY", "FIRST_DELAY", "Backoff"]

#: Seconds: the ceiling of the first delay, and the most any delay can be.
FIRST_DELAY, CAP_DELAY = 0.1, 5.0


@dataclass
class Backoff:
    """The delays between connection attempts within ``window`` seconds from the start (made at the first
    failure or before the first attempt).

    Attributes:
        window: seconds from the start after which no further attempt is made (>= 0; 0: one attempt).
        rng: the random source of the jitter.
        first, cap: seconds, the first delay's ceiling and every delay's (0 < first <= cap).
        attempts: attempts made so far (counted by :meth:`attempted`).

    Raises:
        ParameterError: a negative window, or not 0 < first <= cap.
    """

    window: float
    rng: random.Random
    first: float = FIRST_DELAY
    cap: float = CAP_DELAY
    attempts: int = 0
    started: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        if not self.window >= 0:
            raise ParameterError("reconnect_window", self.window, "seconds >= 0")
        if not 0 < self.first <= self.cap:
            raise ParameterError("backoff", (self.first, self.cap), "0 < first delay <= cap (seconds)")

    @property
    def elapsed(self) -> float:
        """Seconds since the start."""
        return time.monotonic() - self.started

    @property
    def remaining(self) -> float:
        """Seconds left in the window (0 once it is over)."""
        return max(0.0, self.window - self.elapsed)

    def attempted(self) -> None:
        """Count one attempt."""
        self.attempts += 1

    def delay(self) -> float | None:
        """Seconds to wait before the next attempt (full jitter on the attempts so far, cut at the window's
        end), or None when the window is over."""
        remaining = self.remaining
        if remaining <= 0:
            return None
        ceiling = min(self.cap, self.first * 2.0 ** min(max(self.attempts - 1, 0), 64))
        return min(self.rng.uniform(0.0, ceiling), remaining)
