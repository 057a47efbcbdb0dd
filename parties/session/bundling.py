"""A worker's shared connection that sends its parties' answers in bundles (:mod:`mpdp.broker.bundle`).

:class:`AnswerBundler` stands for the worker's transport when its parties publish
(:func:`mpdp.parties.session.multiplex.serve_multiplexed`): a publication on a party topic joins the bundle
being filled, and the party's ``publish`` returns once the broker acknowledged the whole bundle (QoS 1,
as its own message would). A bundle is sent when it holds ``size`` answers or at the event loop's next turn
after its first answer (the parties answering in one turn share it), or sooner once it holds
:data:`BUNDLE_BYTES`. Every other publication (a party's
decisions) goes out as it is. Each bundle is signed with the worker's bundle key, the key its parties endorsed
in its signed "ready" (:mod:`mpdp.broker.bundle`), which authenticates the answers in it (a randomized-response
party's answer goes unsigned in a bundle: :attr:`mpdp.parties.rounds.party_spec.PartySpec.bundled`). Each answer
keeps its bytes and its party: what the party drew under its own policy, and what it sends again for a
re-announced round, are the party's
(:class:`mpdp.parties.rounds.answering.PartyLoop`); only the number of MQTT messages changes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from mpdp.broker.bundle import encode_bundle
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Delivery, Transport, as_bytes

__all__ = ["BUNDLE_BYTES", "BUNDLE_SIZE", "AnswerBundler"]

#: Answers one bundle carries at most. 1000 parties x 20 rounds over 2 workers, answers unsigned in their bundles
#: (cheaper to build): bundles of 64 / 128 / 256 with twice as many parties answering at once, 6.5-7.0k / 7.7k /
#: 9.2-9.4k answers/s (load ~5, 2026-12-03; 512: 8.5k).
BUNDLE_SIZE = 256
#: A bundle is sent once its answers hold this many bytes (256 answers of 10^6 repetitions would be 64 MB, over
#: a broker's packet limit: 16 MB in mpdp's mosquitto.conf, 4 MB locked down).
BUNDLE_BYTES = 1 << 20


class AnswerBundler:
    """A :class:`mpdp.broker.transport.Transport` over ``transport`` whose party-topic publications are
    bundled on ``topics.bundle(worker)``, each bundle signed with ``key`` (module docstring); use as an async
    context (its bundles in flight are cancelled on exit).

    Raises:
        ValueError: ``size`` < 1.
    """

    def __init__(self, transport: Transport, topics: Topics, worker: int, key: PrivateKey,
                 size: int = BUNDLE_SIZE) -> None:
        if size < 1:
            raise ValueError(f"bundle size must be >= 1, got {size}")
        self._transport = transport
        self._topics = topics
        self._topic = topics.bundle(worker)
        self._worker = worker
        self._key = key
        self._size = size
        self._party_ids: dict[str, int] = {}  # party topic -> party id, parsed once
        self._pending: list[tuple[int, bytes]] = []
        self._pending_bytes = 0
        self._waiters: list[asyncio.Future[None]] = []  # each pending answer's party, awaiting the bundle's PUBACK
        self._flush_soon: asyncio.Handle | None = None
        self._sending: set[asyncio.Task[None]] = set()
        self.client_id = transport.client_id
        self.bundles = 0  #: bundles sent (acknowledged or not)

    @property
    def reconnects(self) -> int:
        """The underlying transport's reconnects."""
        return self._transport.reconnects

    @reconnects.setter
    def reconnects(self, value: int) -> None:
        self._transport.reconnects = value

    @property
    def connected(self) -> bool:
        """True while the underlying transport is connected."""
        return self._transport.connected

    @property
    def downtime(self) -> float:
        """The underlying transport's downtime (seconds)."""
        return self._transport.downtime

    async def subscribe(self, *filters: str) -> None:
        """Subscribe the underlying transport."""
        await self._transport.subscribe(*filters)

    def deliveries(self) -> AsyncIterator[Delivery]:
        """The underlying transport's deliveries."""
        return self._transport.deliveries()

    async def publish(self, topic: str, payload: bytes | str) -> None:
        """Publish ``payload`` on ``topic``: in the next bundle if ``topic`` is a party topic, returning once
        that bundle is acknowledged; otherwise on its own.

        Raises:
            TransportError: the bundle (or the message) was not acknowledged in time, or the broker is gone.
        """
        party = self._party_ids.get(topic)
        if party is None and (party := self._topics.party_of(topic)) is not None:
            self._party_ids[topic] = party  # at most one entry per party of the worker
        if party is None:
            await self._transport.publish(topic, payload)
            return
        loop = asyncio.get_running_loop()
        if not self._pending:
            self._flush_soon = loop.call_soon(self._flush)
        waiter: asyncio.Future[None] = loop.create_future()  # one per party: a cancelled party leaves the others be
        message = as_bytes(payload)
        self._pending.append((party, message))
        self._pending_bytes += len(message)
        self._waiters.append(waiter)
        if len(self._pending) >= self._size or self._pending_bytes >= BUNDLE_BYTES:
            self._flush()
        await waiter

    def _flush(self) -> None:
        """Send the pending bundle in a task that settles its parties' waiters."""
        if self._flush_soon is not None:
            self._flush_soon.cancel()
        entries, waiters = self._pending, self._waiters
        self._pending, self._waiters, self._flush_soon, self._pending_bytes = [], [], None, 0
        if not entries:
            return
        self.bundles += 1
        task = asyncio.create_task(self._send(entries, waiters), name=f"bundle-{self._topic}")
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)

    async def _send(self, entries: list[tuple[int, bytes]], waiters: list[asyncio.Future[None]]) -> None:
        try:
            await self._transport.publish(self._topic, encode_bundle(entries, self._key, session=self._topics.session,
                                                                     worker=self._worker))
        except asyncio.CancelledError:
            _settle(waiters, None, cancel=True)
            raise
        except Exception as exc:  # noqa: BLE001 - every party of the bundle gets it
            _settle(waiters, exc)
        else:
            _settle(waiters, None)

    async def __aenter__(self) -> AnswerBundler:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._flush_soon is not None:
            self._flush_soon.cancel()
        _settle(self._waiters, None, cancel=True)
        for task in list(self._sending):
            task.cancel()
        for task in list(self._sending):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _settle(waiters: list[asyncio.Future[None]], error: Exception | None, *, cancel: bool = False) -> None:
    """Wake each party still waiting on its bundle: acknowledged (``error`` None), failed, or cancelled (a party
    cancelled meanwhile is done already and left alone)."""
    for waiter in waiters:
        if waiter.done():
            continue
        if cancel:
            waiter.cancel()
        elif error is not None:
            waiter.set_exception(error)
        else:
            waiter.set_result(None)
