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
import logging
from collections.abc import AsyncIterator, Coroutine
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import Protocol

__all__ = ["RECANCEL_SECONDS", "STOP_ATTEMPTS", "Connector", "Delivery", "Transport", "as_bytes", "next_delivery",
           "running"]

log = logging.getLogger("mpdp.transport")


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


#: Seconds :func:`running` waits for its task to end after a cancellation before it cancels it again.
RECANCEL_SECONDS = 1.0
#: Cancellations :func:`running` makes before it leaves a task that outlived them all running (and logs it).
STOP_ATTEMPTS = 10


@contextlib.asynccontextmanager
async def running(coroutine: Coroutine[object, object, object], name: str) -> AsyncIterator[asyncio.Task[object]]:
    """Run ``coroutine`` as a background task named ``name`` for the block (a connection's reader loop);
    on exit, cancel it and wait until it ends, for at most :data:`STOP_ATTEMPTS` cancellations
    :data:`RECANCEL_SECONDS` apart (one WARNING line if it still runs then: it is left running).

    A task may outlive a cancellation: Python 3.11's ``asyncio.wait_for`` drops one that arrives in the loop
    pass of the awaited answer (:func:`mpdp.broker.transport.mqtt._keep_cancellation`), and a caller that
    waits for such a task without a bound hangs with it. A cancellation of the caller during the wait is
    raised once the task has ended (or been given up on); it does not cut the task's cleanup short.

    Raises:
        asyncio.CancelledError: the caller was cancelled while it waited for the task.
        BaseException: the task's own error (a task cancelled or finished without error raises nothing).
    """
    task = asyncio.create_task(coroutine, name=name)
    try:
        yield task
    finally:
        await _stop(task)


async def _stop(task: asyncio.Task[object]) -> None:
    """Cancel ``task`` and wait for its end, as :func:`running` says."""
    loop, interrupted, cancels = asyncio.get_running_loop(), False, 0
    while not task.done():
        if cancels == STOP_ATTEMPTS:
            log.warning("task %r still runs after %d cancellations %g s apart; left running", task.get_name(),
                        cancels, RECANCEL_SECONDS)
            break
        task.cancel()
        cancels += 1
        deadline = loop.time() + RECANCEL_SECONDS
        while not task.done() and loop.time() < deadline:
            try:
                await asyncio.wait({task}, timeout=deadline - loop.time())
            except asyncio.CancelledError:  # the caller's own: raised once the task has ended
                interrupted = True
    error = task.exception() if task.done() and not task.cancelled() else None
    if interrupted:
        raise asyncio.CancelledError
    if error is not None:
        raise error
