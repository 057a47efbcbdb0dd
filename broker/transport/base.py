"""The transport interface: one connected publish/subscribe client, and where clients connect.

Two implementations: :class:`mpdp.broker.transport.mqtt.MqttTransport` (aiomqtt on a real broker, made by
:meth:`mpdp.broker.endpoint.BrokerEndpoint.connect`) and :class:`mpdp.broker.transport.memory.InMemoryBroker`
(one event loop, for unit tests). Both follow MQTT semantics: topic filters with ``+`` and ``#``, QoS 1
(at least once: a consumer dedupes), persistent sessions that keep what arrives while disconnected.
Client ids must be unique per broker: a second connection with the same id takes the session over.
Overlapping filters of one client: the in-memory broker and mosquitto with MQTT 3.1.1 deliver a
message once, mosquitto with MQTT 5 once per matching subscription.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["Connector", "Delivery", "Transport", "as_bytes", "next_delivery", "running"]


@dataclass(frozen=True, slots=True)
class Delivery:
    """One incoming message."""

    topic: str
    payload: bytes


class Transport(Protocol):
    """One connected client of a publish/subscribe broker (MQTT semantics: topic filters with + and #, QoS 1)."""

    client_id: str
    #: connections made after the first (a lost connection re-established: the broker restarted or the
    #: network failed; a broker that kept no session may have lost messages in flight then)
    reconnects: int

    @property
    def connected(self) -> bool:
        """True while the client holds its connection to the broker; False while it reconnects (the broker
        is away: a clock that measures the broker's or the other clients' silence should pause) and once
        it gave up or closed."""
        ...

    @property
    def downtime(self) -> float:
        """Seconds the client has spent without its connection since it first connected (ended outages and
        the current one); a deadline that pauses while the broker is away adds the downtime gained since
        the deadline was set."""
        ...

    async def subscribe(self, *filters: str) -> None:
        """Subscribe to ``filters`` with QoS 1; they are remembered and renewed after a reconnect.

        Raises:
            TransportError: the broker failed or did not acknowledge in time.
        """
        ...

    async def publish(self, topic: str, payload: bytes | str) -> None:
        """Publish ``payload`` (str is sent as UTF-8) on ``topic`` with QoS 1, inside a timeout.

        Raises:
            TransportError: the broker failed or did not acknowledge in time.
        """
        ...

    def deliveries(self) -> AsyncIterator[Delivery]:
        """The incoming messages in arrival order, from a bounded queue (backpressure, never a drop).

        Raises (while iterating):
            TransportError: the connection is lost for good (reconnecting failed, or taken over).
        """
        ...


class Connector(Protocol):
    """Where clients connect. The MQTT one is picklable (worker processes receive it)."""

    def connect(self, client_id: str, *, persistent: bool = False) -> AbstractAsyncContextManager[Transport]:
        """A context that connects as ``client_id`` on entry and disconnects on exit.

        Args:
            client_id: unique per broker (callers add a random suffix where no fixed id is needed).
            persistent: keep the session (subscriptions and QoS 1 messages that arrive while
                disconnected) across reconnects.

        Raises (on entry):
            TransportError: the broker cannot be reached.
        """
        ...


def as_bytes(payload: bytes | str) -> bytes:
    """``payload`` as bytes: str is encoded as UTF-8, bytes pass through.

    Raises:
        TypeError: any other type (names it).
    """
    if isinstance(payload, str):
        return payload.encode("utf-8")
    if isinstance(payload, bytes | bytearray | memoryview):
        return bytes(payload)
    raise TypeError(f"payload of type {type(payload).__name__}: need bytes or str")


#: Loop turns a timed-out :func:`next_delivery` still gives what reached the process by its deadline: a
#: message read from the socket takes a few turns to reach the transport's queue (aiomqtt's reader, ours).
_SETTLE_TURNS = 8


async def next_delivery(transport: Transport, timeout: float) -> Delivery | None:
    """The next incoming message, or None when none arrives within ``timeout`` seconds.

    Each call takes a fresh :meth:`Transport.deliveries` iterator (a timeout cancels the one it
    interrupts; no message is lost: both transports keep their queue outside the iterator). When the
    timeout fires, the event loop gets a few more turns (:data:`_SETTLE_TURNS`, no more time) to hand over
    a message that is already here: on a starved loop (a busy machine, a long callback) the deadline passes
    while a message that arrived in time still sits in the socket or between the reader tasks, and a
    wait that ended then reported a silence that was not there (issue 20).

    Raises:
        TransportError: the connection is lost for good.
    """
    try:
        async with asyncio.timeout(timeout):
            return await anext(transport.deliveries())
    except TimeoutError:
        pass
    late = asyncio.ensure_future(anext(transport.deliveries()))
    for _ in range(_SETTLE_TURNS):
        if late.done():
            break
        await asyncio.sleep(0)
    late.cancel()
    await asyncio.wait({late})  # a cancellation of this task still raises here
    return None if late.cancelled() else late.result()


@contextlib.asynccontextmanager
async def running(coroutine: Coroutine[object, object, object], name: str) -> AsyncIterator[asyncio.Task[object]]:
    """Run ``coroutine`` as a background task named ``name`` for the block (a connection's reader loop);
    cancel it and wait for it on exit."""
    task = asyncio.create_task(coroutine, name=name)
    try:
        yield task
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
