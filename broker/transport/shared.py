"""Many logical clients over one connection: a simulation's worker multiplexes its parties on one MQTT client.

:func:`shared_connection` connects once (one client id) and yields a :class:`SharedConnector`; each
``connect(client_id)`` on it is a :class:`SharedChannel`, a :class:`mpdp.broker.transport.base.Transport`
that publishes on the shared connection and receives the messages matching its own filters. The wire is
unchanged: each party still signs with its own key and publishes on its own topic; only the number of TCP
connections (and their sockets, buffers and keep-alives) drops from one per party to one per worker.

One reader task fans each incoming message out to every channel whose filters match, into that channel's
queue; a channel's queue is not bounded (a party receives a few announcements per round; the shared
connection's own bounded queue still applies backpressure to the broker). A filter is subscribed on the
connection once, however many channels ask for it. When the connection fails for good, every channel's
:meth:`SharedChannel.deliveries` raises that error.

Deployments keep one connection per party host (each host is its own process); this is a simulation
device for thousands of parties in a few processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from mpdp.broker.transport.base import Connector, Delivery, Transport, running
from mpdp.broker.transport.filters import check_filter, matches
from mpdp.protocols.errors import ParameterError, TransportError

__all__ = ["MAX_IN_FLIGHT", "SharedChannel", "SharedConnector", "shared_connection"]

#: Publishes of one shared connection awaiting their PUBACK at once: enough to keep the connection busy;
#: aiomqtt looks each new message id up in a linear scan of its pending calls, so thousands at once
#: (every party of a worker answering a round) would cost time quadratic in the parties.
MAX_IN_FLIGHT = 64
_FAILED = None  # wakes a channel's consumer once the shared connection failed


@functools.lru_cache(maxsize=4096)
def _matches(topic_filter: str, topic: str) -> bool:
    return matches(topic_filter, topic)


@dataclass(eq=False)
class SharedChannel:
    """One logical client on a :class:`SharedConnector` (a ``Transport``)."""

    client_id: str
    _owner: SharedConnector = field(repr=False)
    _filters: tuple[str, ...] = ()
    _queue: asyncio.Queue[Delivery | None] = field(default_factory=asyncio.Queue, repr=False)

    def wants(self, topic: str) -> bool:
        """True iff ``topic`` matches one of this channel's filters."""
        return any(_matches(f, topic) for f in self._filters)

    async def subscribe(self, *filters: str) -> None:
        """Receive messages matching ``filters`` (subscribed on the shared connection once, QoS 1).

        Raises:
            ParameterError: a malformed filter.
            TransportError: the broker refused or did not acknowledge in time.
        """
        for topic_filter in filters:
            check_filter(topic_filter)
        await self._owner.subscribe(filters)
        self._filters = tuple(dict.fromkeys((*self._filters, *filters)))

    async def publish(self, topic: str, payload: bytes | str) -> None:
        """Publish on the shared connection (QoS 1, acknowledged).

        Raises:
            ParameterError: a malformed topic.
            TransportError: not acknowledged in time, or the connection is gone for good.
        """
        async with self._owner.in_flight:
            await self._owner.transport.publish(topic, payload)

    async def deliveries(self) -> AsyncIterator[Delivery]:
        """This channel's incoming messages in arrival order.

        Raises:
            TransportError: the shared connection failed for good.
        """
        while True:
            item = await self._queue.get()
            if item is _FAILED:
                self._queue.put_nowait(_FAILED)
                raise TransportError(self._owner.failure or f"shared connection of {self.client_id!r} closed")
            yield item


class SharedConnector:
    """A :class:`mpdp.broker.transport.base.Connector` whose clients share one connected ``transport``;
    made by :func:`shared_connection`."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.failure: str | None = None
        self._channels: dict[str, SharedChannel] = {}
        self._subscribed: set[str] = set()
        self._lock = asyncio.Lock()
        #: bounds the publishes awaiting their PUBACK at once (aiomqtt scans its pending calls on each one)
        self.in_flight = asyncio.Semaphore(MAX_IN_FLIGHT)

    @contextlib.asynccontextmanager
    async def connect(self, client_id: str, *, persistent: bool = False) -> AsyncIterator[SharedChannel]:
        """A channel named ``client_id`` for the duration of the context.

        Raises:
            ParameterError: ``persistent`` (a shared connection has one session for all its channels),
                or ``client_id`` already in use on this connection.
        """
        if persistent:
            raise ParameterError("persistent", persistent, "False: channels of a shared connection have no "
                                 "session of their own")
        if client_id in self._channels:
            raise ParameterError("client_id", client_id, "an id not already connected on this shared connection")
        channel = SharedChannel(client_id, self)
        self._channels[client_id] = channel
        try:
            yield channel
        finally:
            del self._channels[client_id]

    async def subscribe(self, filters: tuple[str, ...]) -> None:
        """Subscribe the shared connection to those of ``filters`` it is not subscribed to yet."""
        async with self._lock:
            new = [f for f in dict.fromkeys(filters) if f not in self._subscribed]
            if new:
                await self.transport.subscribe(*new)
                self._subscribed.update(new)

    async def dispatch(self) -> None:
        """Fan every incoming message out to the channels that want it, until cancelled; on a failure of
        the connection, wake every channel with it."""
        try:
            async for delivery in self.transport.deliveries():
                for channel in list(self._channels.values()):
                    if channel.wants(delivery.topic):
                        channel._queue.put_nowait(delivery)
        except TransportError as exc:
            self.failure = str(exc)
            for channel in list(self._channels.values()):
                channel._queue.put_nowait(_FAILED)


@contextlib.asynccontextmanager
async def shared_connection(connector: Connector, client_id: str) -> AsyncIterator[SharedConnector]:
    """Connect once to ``connector`` as ``client_id`` and yield a :class:`SharedConnector` over it; stop
    the fan-out and disconnect on exit.

    Raises:
        TransportError: the broker cannot be reached.
    """
    async with connector.connect(client_id) as transport:
        shared = SharedConnector(transport)
        async with running(shared.dispatch(), f"shared-{client_id}"):
            yield shared
