"""An in-memory broker for unit tests: every client in one event loop, MQTT semantics, no network.

What it models (MQTT 3.1.1 §3.1.2.4, §3.3.5, §4.7):

* topic filters with ``+`` and ``#``; a client whose filters overlap gets each message once;
* QoS 1 in order per client, from a bounded queue: a publisher waits while a connected
  subscriber's queue is full (backpressure), nothing is dropped;
* a persistent session (``persistent=True``) keeps its subscriptions and queues what arrives while
  its client is disconnected (without bound, as a broker with ``max_queued_messages 0``); a clean
  session ends with its connection and what is published meanwhile is lost to it;
* a second connection with the same client id takes the session over: the first one fails with
  :class:`TransportError` (it is not reconnected);
* faults for tests: :meth:`InMemoryBroker.disconnect` drops a client's connection (it is offline:
  its publishes wait, as :class:`mpdp.broker.transport.mqtt.MqttTransport` waits while it
  reconnects), :meth:`InMemoryBroker.reconnect` brings it back (the transport resubscribes its
  filters), :meth:`InMemoryBroker.fail` makes it give up (its waits raise :class:`TransportError`).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from mpdp.broker.transport.base import Delivery, as_bytes
from mpdp.broker.transport.filters import check_filter, check_topic, matches
from mpdp.protocols.errors import ParameterError, TransportError

__all__ = ["InMemoryBroker", "MemoryTransport"]


@dataclass(eq=False)
class _Session:
    """The broker's state of one client id: subscriptions and queued messages."""

    persistent: bool
    capacity: int
    filters: dict[str, None] = field(default_factory=dict)  # an ordered set
    items: deque[Delivery] = field(default_factory=deque)
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    owner: MemoryTransport | None = None
    online: bool = False

    def wants(self, topic: str) -> bool:
        return any(matches(f, topic) for f in self.filters)

    async def offer(self, delivery: Delivery) -> None:
        """Queue ``delivery``: wait while online and full; offline, a persistent session keeps it."""
        async with self.changed:
            await self.changed.wait_for(lambda: not self.online or len(self.items) < self.capacity)
            if self.online or self.persistent:
                self.items.append(delivery)
                self.changed.notify_all()

    async def notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()


class InMemoryBroker:
    """A :class:`mpdp.broker.transport.base.Connector` whose clients live in the running event loop.

    Args:
        queue_size: messages a connected client's queue holds before publishers wait (>= 1).
        timeout: seconds a publish may wait for a full queue before :class:`TransportError`, as the MQTT
            transport's acknowledgement timeout.
        reconnect_window: seconds a publish or subscribe of a dropped client waits for its reconnect before
            :class:`TransportError`, as the MQTT transport's reconnect window (None: ``timeout``).

    Raises:
        ParameterError: ``queue_size`` < 1, ``timeout`` <= 0 or ``reconnect_window`` < 0.
    """

    def __init__(self, *, queue_size: int = 64, timeout: float = 5.0, reconnect_window: float | None = None) -> None:
        if isinstance(queue_size, bool) or not isinstance(queue_size, int) or queue_size < 1:
            raise ParameterError("queue_size", queue_size, "an integer >= 1")
        if not timeout > 0:
            raise ParameterError("timeout", timeout, "seconds > 0")
        if reconnect_window is not None and not reconnect_window >= 0:
            raise ParameterError("reconnect_window", reconnect_window, "seconds >= 0, or None")
        self.queue_size = queue_size
        self.timeout = float(timeout)
        self.reconnect_window = self.timeout if reconnect_window is None else float(reconnect_window)
        self._sessions: dict[str, _Session] = {}

    @contextlib.asynccontextmanager
    async def connect(self, client_id: str, *, persistent: bool = False) -> AsyncIterator[MemoryTransport]:
        """Connect as ``client_id`` (taking over a connection with the same id); disconnect on exit.

        A persistent session outlives the connection; a clean one is discarded on exit.

        Raises:
            ParameterError: an empty client id.
        """
        if not client_id:
            raise ParameterError("client_id", client_id, "a non-empty string")
        session = self._sessions.get(client_id)
        if session is not None and session.owner is not None:
            session.owner.failure = f"client {client_id!r}: session taken over by another connection"
            await session.notify()
        if session is None or not persistent or not session.persistent:
            if session is not None:  # discarded: publishers waiting on it move on
                session.online = session.persistent = False
                await session.notify()
            session = _Session(persistent, self.queue_size)
            self._sessions[client_id] = session
        transport = MemoryTransport(client_id, self, session)
        session.owner, session.online = transport, True
        try:
            yield transport
        finally:
            transport.failure = transport.failure or f"client {client_id!r}: connection closed"
            if session.owner is transport:
                session.owner, session.online = None, False
                if not session.persistent:
                    del self._sessions[client_id]
                await session.notify()

    def connected(self, client_id: str) -> bool:
        """True iff a client ``client_id`` is connected and online."""
        session = self._sessions.get(client_id)
        return session is not None and session.online

    async def disconnect(self, client_id: str) -> None:
        """Drop ``client_id``'s network connection (a fault): it stays offline until :meth:`reconnect`.

        A clean session loses its subscriptions and queued messages, as on a real broker.

        Raises:
            ParameterError: no client ``client_id`` is connected.
        """
        session = self._owned(client_id)
        session.online = False
        assert session.owner is not None
        session.owner._dropped(online=False)
        if not session.persistent:
            session.filters.clear()
            session.items.clear()
        await session.notify()

    async def reconnect(self, client_id: str) -> None:
        """Bring a dropped client back; its transport resubscribes the filters it had asked for.

        Raises:
            ParameterError: no client ``client_id``.
        """
        session = self._owned(client_id)
        assert session.owner is not None
        session.filters.update(session.owner.filters)
        session.owner.reconnects += 1
        session.owner._dropped(online=True)
        session.online = True
        await session.notify()

    async def fail(self, client_id: str, reason: str = "reconnecting failed") -> None:
        """Make ``client_id``'s transport give up: its waits and iterations raise :class:`TransportError`.

        Raises:
            ParameterError: no client ``client_id``.
        """
        session = self._owned(client_id)
        assert session.owner is not None
        session.owner.failure = f"client {client_id!r}: {reason}"
        await session.notify()

    def _owned(self, client_id: str) -> _Session:
        session = self._sessions.get(client_id)
        if session is None or session.owner is None:
            raise ParameterError("client_id", client_id, f"a connected client: {sorted(self._sessions)}")
        return session

    async def route(self, delivery: Delivery) -> None:
        """Queue ``delivery`` for every session with a matching filter (waits while one is full)."""
        for session in list(self._sessions.values()):
            if session.wants(delivery.topic):
                await session.offer(delivery)


class MemoryTransport:
    """One client of an :class:`InMemoryBroker` (a :class:`mpdp.broker.transport.base.Transport`).

    Attributes:
        client_id: the client id it connected with.
        filters: the filters it subscribed to (renewed after :meth:`InMemoryBroker.reconnect`).
        failure: why it gave up (taken over, closed, failed), or None while usable.
        reconnects: times :meth:`InMemoryBroker.reconnect` brought it back.
    """

    def __init__(self, client_id: str, broker: InMemoryBroker, session: _Session) -> None:
        self.client_id = client_id
        self.filters: dict[str, None] = {}
        self.failure: str | None = None
        self.reconnects = 0
        self._broker = broker
        self._session = session
        self._lost_at: float | None = None  # monotonic time of the current drop, None while online
        self._downtime = 0.0

    @property
    def connected(self) -> bool:
        """True while online (dropped by :meth:`InMemoryBroker.disconnect`: False until its reconnect; False
        once it gave up, was taken over or closed)."""
        return self.failure is None and self._session.owner is self and self._session.online

    @property
    def downtime(self) -> float:
        """Seconds this client spent dropped (:meth:`InMemoryBroker.disconnect` until its reconnect)."""
        current = 0.0 if self._lost_at is None else time.monotonic() - self._lost_at
        return self._downtime + current

    def _dropped(self, online: bool) -> None:
        """Start (``online`` False) or end (True) the downtime clock of a drop."""
        now = time.monotonic()
        if online and self._lost_at is not None:
            self._downtime += now - self._lost_at
            self._lost_at = None
        elif not online and self._lost_at is None:
            self._lost_at = now

    async def _online(self) -> None:
        """Wait until this client is online; raise if it gave up or the wait exceeds the reconnect window."""
        session = self._session
        try:
            async with asyncio.timeout(self._broker.reconnect_window), session.changed:
                await session.changed.wait_for(lambda: self.failure is not None or session.online)
        except TimeoutError:
            raise TransportError(
                f"client {self.client_id!r}: offline for more than {self._broker.reconnect_window:g} s") from None
        if self.failure is not None:
            raise TransportError(self.failure)

    async def subscribe(self, *filters: str) -> None:
        """Subscribe to ``filters`` (QoS 1); renewed after a reconnect.

        Raises:
            ParameterError: a malformed filter.
            TransportError: this client gave up, or stayed offline longer than the reconnect window.
        """
        for topic_filter in filters:
            check_filter(topic_filter)
        await self._online()
        for topic_filter in filters:
            self.filters[topic_filter] = None
            self._session.filters[topic_filter] = None

    async def publish(self, topic: str, payload: bytes | str) -> None:
        """Deliver ``payload`` to every matching subscriber (waits while one's queue is full).

        Raises:
            ParameterError: a malformed topic.
            TransportError: this client gave up, stayed offline longer than the reconnect window, or the
                publish waited longer than the timeout for a full queue.
        """
        delivery = Delivery(check_topic(topic), as_bytes(payload))
        await self._online()
        try:
            async with asyncio.timeout(self._broker.timeout):
                await self._broker.route(delivery)
        except TimeoutError:
            raise TransportError(
                f"client {self.client_id!r}: publish on {topic!r} blocked for {self._broker.timeout:g} s "
                "(a subscriber's queue stayed full)") from None

    async def deliveries(self) -> AsyncIterator[Delivery]:
        """The messages of this client's session in order (waits while offline or empty).

        Raises:
            TransportError: this client gave up (taken over, closed, :meth:`InMemoryBroker.fail`).
        """
        session = self._session
        while True:
            async with session.changed:
                await session.changed.wait_for(
                    lambda: self.failure is not None or (session.online and bool(session.items)))
                if self.failure is not None:
                    raise TransportError(self.failure)
                delivery = session.items.popleft()
                session.changed.notify_all()
            yield delivery
