"""Is the broker there? One MQTT connect and disconnect, or a one-line :class:`TransportError`."""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import time
from collections.abc import Callable

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.protocols.errors import TransportError

__all__ = ["check_connectivity", "wait_until_accepting"]


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
