"""Is the broker there? One MQTT connect and disconnect, or a one-line :class:`TransportError`."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import secrets
import time
from collections.abc import Callable

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.transport.outage import duration
from mpdp.protocols.errors import TransportError

__all__ = ["check_connectivity", "wait_for_broker", "wait_until_accepting"]

log = logging.getLogger("mpdp.transport")


async def check_connectivity(endpoint: BrokerEndpoint, timeout: float | None = None) -> None:
    """Open and close one MQTT connection to ``endpoint`` (one attempt, no retry).

    Args:
        endpoint: the broker.
        timeout: seconds for the attempt; defaults to ``endpoint.timeout``.

    Raises:
        TransportError: refused, unreachable, not an MQTT broker, or no answer in time; the message
            names the URL.
    """
    limit = endpoint.timeout if timeout is None else timeout
    probe = dataclasses.replace(endpoint, timeout=limit, reconnect_window=0.0)
    async with probe.connect(f"mpdp-check-{secrets.token_hex(6)}"):
        pass


async def wait_for_broker(endpoint: BrokerEndpoint) -> None:
    """Return once ``endpoint`` accepts an MQTT connection, waiting for it within its reconnect window.

    A process started while its broker is down (a deployment's hosts and observer started together, a
    broker restarted) waits for it: one WARNING line on ``mpdp.transport`` says it waits, for which broker
    and for how long, and one more when the broker answered. A refusal that trying again cannot cure (the
    login, the client id, the certificate: :attr:`TransportError.final`), or a window of 0, fails at once.

    Raises:
        TransportError: refused for good, or no connection within ``endpoint.reconnect_window`` seconds
            (one line naming the URL, the attempts and the last cause).
    """
    try:
        await check_connectivity(endpoint)
        return
    except TransportError as exc:
        if exc.final or endpoint.reconnect_window <= 0:
            raise
        cause = exc.reason or str(exc)
    started = time.monotonic()
    log.warning("the MQTT broker at %s does not answer (%s); waiting for it for up to %s (--reconnect-window)",
                endpoint.url, cause, duration(endpoint.reconnect_window))
    async with endpoint.connect(f"mpdp-check-{secrets.token_hex(6)}"):
        pass
    log.warning("the MQTT broker at %s answered after %.1f s", endpoint.url, time.monotonic() - started)


async def wait_until_accepting(endpoint: BrokerEndpoint, timeout: float, *, alive: Callable[[], bool] | None = None
) -> None:
    """Retry :func:`check_connectivity` until it succeeds or ``timeout`` seconds pass.

    Args:
        alive: optional callable returning False once the broker process has died (stop early).

    Raises:
        TransportError: the broker did not accept a connection in time (the last error attached).
    """
    deadline = time.monotonic() + timeout
    while True:
        try:
            await check_connectivity(endpoint, timeout=max(0.5, min(2.0, deadline - time.monotonic())))
            return
        except TransportError as exc:
            if time.monotonic() >= deadline or (alive is not None and not alive()):
                raise TransportError(
                    f"MQTT broker at {endpoint.url} did not start accepting connections "
                    f"within {timeout:g} s: {exc}"
                ) from exc
        await asyncio.sleep(0.05)
