"""The embedded broker: amqtt running in this process's event loop, on a free loopback port.

amqtt speaks MQTT 3.1.1 only, so the endpoint it yields says ``protocol="3.1.1"``. Only the anonymous
authentication plugin is loaded (no $SYS publisher, no packet logger): the broker exists to carry
one run's messages on the loopback interface.

It does not keep persistent sessions across reconnects (issue 9 measured 0 of 20 queued QoS 1 messages
delivered after a client reconnected), so the observer's reconnect guarantee does not hold on it: it
says so at start (:data:`NO_PERSISTENCE_NOTICE`, a WARNING on ``mpdp.broker``). Deployments use mosquitto.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable

from amqtt.broker import Broker
from amqtt.errors import BrokerError

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW
from mpdp.protocols.errors import TransportError

__all__ = ["NO_PERSISTENCE_NOTICE", "run_embedded"]

_ATTEMPTS = 3
log = logging.getLogger("mpdp.broker")

#: What the embedded broker says when it starts.
NO_PERSISTENCE_NOTICE = (
    "the embedded broker (amqtt) does not keep persistent sessions across reconnects: messages "
    "queued for a client that lost its connection are lost. Fine for a simulation on one machine; use "
    "mosquitto for deployments (--broker mosquitto, or a mosquitto URL)")


def _config(port: int) -> dict[str, object]:
    return {
        "listeners": {"default": {"type": "tcp", "bind": f"{LOOPBACK}:{port}", "max_connections": -1}},
        "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}},
    }


@contextlib.asynccontextmanager
async def run_embedded(*, timeout: float = 10.0, reconnect_window: float = DEFAULT_RECONNECT_WINDOW
                       ) -> AsyncIterator[BrokerEndpoint]:
    """Start an amqtt broker on a free loopback port in the running loop; shut it down on exit. A
    cancellation (Ctrl-C, SIGTERM, SIGHUP) while it starts or stops is raised once that step is done.

    Args:
        timeout, reconnect_window: the clients' timeout and reconnect window (seconds) recorded in the endpoint.

    Raises:
        TransportError: the broker could not bind a port after three attempts.
    """
    # amqtt logs every connection at INFO; a run opens hundreds.
    logging.getLogger("amqtt").setLevel(max(logging.WARNING, logging.getLogger("amqtt").level))
    last: Exception | None = None
    for _ in range(_ATTEMPTS):
        port = free_loopback_port()
        broker = Broker(_config(port))
        try:
            cancelled = await _to_the_end(broker.start())
        except BrokerError as exc:  # the port was taken between our probe and the bind
            last = exc
            continue
        try:
            if cancelled:
                raise asyncio.CancelledError
            log.warning(NO_PERSISTENCE_NOTICE)
            yield BrokerEndpoint("embedded", LOOPBACK, port, protocol="3.1.1", timeout=timeout,
                                 reconnect_window=reconnect_window)
        finally:
            if await _to_the_end(_shut_down(broker)):
                raise asyncio.CancelledError
        return
    raise TransportError(f"embedded amqtt broker could not start on {LOOPBACK}: {last}") from last


async def _to_the_end(step: Awaitable[None]) -> bool:
    """Await ``step`` to its end even when this task is cancelled meanwhile (a Ctrl-C, SIGTERM or SIGHUP
    while the broker starts or stops); its errors propagate. True if a cancellation arrived: the caller
    raises it once the broker is in order.

    A start or shutdown cut short leaves amqtt's listening socket open or its broadcast loop running, and
    ``asyncio.run`` cancels that loop on the way out: amqtt then logs "Broadcast loop stopped by exception"
    with a traceback after the run's one line.
    """
    future = asyncio.ensure_future(step)
    cancelled = False
    while True:
        try:
            await asyncio.shield(future)
            return cancelled
        except asyncio.CancelledError:
            if future.cancelled():
                raise
            cancelled = True


async def _shut_down(broker: Broker) -> None:
    """Stop ``broker``; a failure of amqtt's shutdown is one warning line (the run's outcome stands).
    amqtt's own warnings are silenced meanwhile: an interrupted run's broker logged "N messages not
    broadcasted" twice after the run's one line (the messages of a run that ended go nowhere)."""
    amqtt = logging.getLogger("amqtt.broker")
    level = amqtt.level
    amqtt.setLevel(max(logging.ERROR, level))
    try:
        await broker.shutdown()
    except Exception as exc:  # noqa: BLE001 - amqtt's own failure to stop, reported in one line
        log.warning("the embedded broker did not shut down cleanly: %s: %s", type(exc).__name__, exc)
    finally:
        amqtt.setLevel(level)
