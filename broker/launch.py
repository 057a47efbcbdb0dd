"""Start (or reach) the broker a run's settings ask for, as one async context manager."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from mpdp.broker.connectivity import check_connectivity
from mpdp.broker.embedded import run_embedded
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.settings import BrokerSettings, find_mosquitto

__all__ = ["external_endpoint", "open_broker"]


def external_endpoint(settings: BrokerSettings) -> BrokerEndpoint | None:
    """The endpoint of an external broker, or None when the run starts its own."""
    if settings.kind != "external":
        return None
    assert settings.host is not None and settings.port is not None  # guaranteed by from_url
    return BrokerEndpoint("external", settings.host, settings.port, settings.protocol, settings.timeout)


@contextlib.asynccontextmanager
async def open_broker(settings: BrokerSettings) -> AsyncIterator[BrokerEndpoint]:
    """Yield a broker endpoint that accepts connections; stop the broker on exit if we started it.

    ``auto`` starts mosquitto when its binary is found (PATH or /usr/sbin), else the embedded amqtt
    broker. An external broker is checked with one MQTT connection first.

    Raises:
        TransportError: an unreachable external broker (names the URL) or a broker that won't start.
    """
    external = external_endpoint(settings)
    if external is not None:
        await check_connectivity(external)
        yield external
        return
    use_mosquitto = settings.kind == "mosquitto" or (settings.kind == "auto" and find_mosquitto())
    runner = run_mosquitto if use_mosquitto else run_embedded
    async with runner(timeout=settings.timeout) as endpoint:
        yield endpoint
