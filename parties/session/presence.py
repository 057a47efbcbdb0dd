"""One live host per party: the presence claims of ``mpdp party`` hosts (:class:`mpdp.broker.presence.PresenceClaim`).

Two hosts of the same parties (the keys copied to a second machine, a host started twice) would each answer
every round with fresh randomness: a second release of every bit. So a host, before it serves any party::

    subscribe to mpdp/{session}/presence, then publish its own claim every `interval` seconds
    listen for `window` seconds (2.5 intervals by default)
    another instance's claim for any hosted party, signed by those parties' keys and unexpired,
        that started earlier ((started_ms, host) smaller)       -> refuse: ParameterError naming the
                                                                   parties and the other host
    none                                                        -> serve; keep claiming until it leaves

Of two hosts starting at once, both hear each other inside their windows and the earlier keeps its parties.
A host that died publishes nothing more, so its restart is not blocked: the bound is the last claim's
lifetime (``lifetime``, 30 intervals), which only matters for a claim still in flight when it died. The long
lifetime tolerates clocks of different machines up to ~30 s apart and a claim delayed by a busy machine. A
claim is re-signed every ``lifetime / 3`` seconds (10 s) and republished unchanged in between (one signature
per party: a host of 5,000 parties signs in ~0.3 s every 10 s, ~3% of a core, not every second).

The check covers hosts on one broker (a session has one); it is an operator's safety net, not a defence
against a holder of the private keys who wants a double release: the observer catches that one
(:mod:`mpdp.parties.rounds.engine`, ``double-release``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from pydantic import ValidationError

from mpdp.broker.presence import PresenceClaim
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.protocols.errors import ParameterError

__all__ = ["PRESENCE_INTERVAL", "Presence"]

log = logging.getLogger("mpdp.host")
#: Seconds between a host's presence claims.
PRESENCE_INTERVAL = 1.0


class Presence:
    """A host's presence claim: check that no other live host serves its parties, then keep claiming.

    Args:
        session: the session id. parties: the hosted party ids, ascending.
        keys: the hosted parties' loaded private keys, in the order of ``parties``.
        public_keys: every party's raw public key by party id (the roster's).
        connector: the broker. interval: seconds between claims (> 0).

    Attributes:
        checked: set once the window passed without a conflicting claim.
        host: this instance's random id (16 hex digits).
    """

    def __init__(self, session: str, parties: Sequence[int], keys: Sequence[PrivateKey],
                 public_keys: Sequence[bytes] | Mapping[int, bytes], connector: Connector,
                 interval: float = PRESENCE_INTERVAL) -> None:
        self._topics = Topics(session)
        self._parties = tuple(parties)
        self._keys = tuple(keys)
        self._public_keys = public_keys if isinstance(public_keys, Mapping) else dict(enumerate(public_keys))
        self._connector = connector
        self._interval = interval
        self.host = secrets.token_hex(8)
        self._started_ms = int(time.time() * 1000)
        self._label = f"pid {os.getpid()} on {socket.gethostname()}"
        self.checked = asyncio.Event()
        self._claim: PresenceClaim | None = None
        self._signed_at = -float("inf")

    @property
    def window(self) -> float:
        """Seconds a starting host listens for other hosts' claims: 2.5 intervals (two claims of a live host)."""
        return 2.5 * self._interval

    @property
    def lifetime(self) -> float:
        """Seconds one signed claim stays valid: 30 intervals, at least 30 s (clock skew between machines and a
        busy machine's delays stay far inside it; a dead host's claims are not retained, so this does not delay
        its replacement)."""
        return max(30.0, 30 * self._interval)

    def _current_claim(self) -> bytes:
        """This host's claim, re-signed when a third of its lifetime has passed."""
        now = time.monotonic()
        if self._claim is None or now - self._signed_at >= self.lifetime / 3:
            self._claim = PresenceClaim.signed(self._keys, session=self._topics.session, host=self.host,
                                               started_ms=self._started_ms, label=self._label,
                                               parties=self._parties, lifetime=self.lifetime)
            self._signed_at = now
        return self._claim.to_wire()

    def _earlier_claim(self, payload: bytes) -> tuple[PresenceClaim, list[int]] | None:
        """Another instance's genuine, unexpired claim that started before this one, and the hosted parties it
        claims; None for anything else (this host's own claims, later ones, strangers' bytes)."""
        try:
            claim = PresenceClaim.model_validate_json(payload)
        except ValidationError:
            return None
        if (claim.session != self._topics.session or claim.host == self.host
                or claim.expires_ms <= time.time() * 1000
                or (claim.started_ms, claim.host) > (self._started_ms, self.host)):
            return None
        overlap = sorted(set(claim.parties) & set(self._parties))
        if not overlap or claim.unsigned({p: self._public_keys[p] for p in overlap if p in self._public_keys}):
            return None  # a party it lists without its signature (or no overlap): not a claim on ours
        return claim, overlap

    async def run(self) -> None:
        """Claim until cancelled; set :attr:`checked` once the window passed with no earlier claim.

        Raises:
            ParameterError: another live host serves some of the parties (names them and that host).
            TransportError: the broker is gone for good.
        """
        client_id = f"mpdp-{self._topics.session}-host-{self._parties[0]}-presence-{self.host[:8]}"
        async with self._connector.connect(client_id) as transport:
            await transport.subscribe(self._topics.presence)
            await self._claim_until_cancelled(transport)

    async def _claim_until_cancelled(self, transport: Transport) -> None:
        window_ends = time.monotonic() + self.window
        due = time.monotonic()
        while True:
            now = time.monotonic()
            if now >= due:
                await transport.publish(self._topics.presence, self._current_claim())
                due = now + self._interval
            if not self.checked.is_set() and now >= window_ends:
                self.checked.set()
            wait = due - now if self.checked.is_set() else min(due, window_ends) - now
            delivery = await next_delivery(transport, max(0.0, wait))
            if delivery is None or self.checked.is_set():
                continue  # once serving, a later host's claim is that host's to refuse
            found = self._earlier_claim(delivery.payload)
            if found is not None:
                raise self._refusal(*found)

    def _refusal(self, claim: PresenceClaim, overlap: list[int]) -> ParameterError:
        since = datetime.fromtimestamp(claim.started_ms / 1000, UTC).strftime("%H:%M:%S UTC")
        other = f"host {claim.host} ({claim.label}, serving since {since})" if claim.label else f"host {claim.host}"
        return ParameterError(
            "--parties", format_ranges(self._parties),
            f"parties no other live host serves in session {self._topics.session!r}: {other} serves "
            f"parties {format_ranges(overlap)}",
            hint="a second host of a party answers every round again with fresh randomness, a second release "
                 "of every bit: stop that host first (its claim lapses a few seconds after it stops), or host "
                 "other parties")
