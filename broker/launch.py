"""Start (or reach) the broker a run's settings ask for, as one async context manager."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

from mpdp.broker.connectivity import wait_for_broker
from mpdp.broker.embedded import run_embedded
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.settings import BrokerSettings, find_mosquitto

__all__ = ["external_endpoint", "open_broker"]


def external_endpoint(settings: BrokerSettings) -> BrokerEndpoint | None:
    """The endpoint of an external broker (its reconnect window :data:`mpdp.broker.reconnect_window.DEFAULT_RECONNECT_WINDOW`
    unless the settings give one), or None when the run starts its own."""
    if settings.kind != "external":
        return None
    assert settings.host is not None and settings.port is not None  # guaranteed by from_url
    password = None if settings.password is None else settings.password.get_secret_value()
    return BrokerEndpoint(
        "external", settings.host, settings.port, settings.protocol, settings.timeout,
        reconnect_window=settings.window(), scheme=settings.scheme,
        username=settings.username, password=password, websocket_path=settings.path,
        cafile=_path(settings.cafile), certfile=_path(settings.certfile), keyfile=_path(settings.keyfile),
    )


def _path(path: Path | None) -> str | None:
    return None if path is None else str(path)


@contextlib.asynccontextmanager
async def open_broker(settings: BrokerSettings) -> AsyncIterator[BrokerEndpoint]:
    """Yield a broker endpoint that accepts connections; stop the broker on exit if we started it.

    ``auto`` starts mosquitto when its binary is found (PATH or /usr/sbin), else the embedded amqtt
    broker. An external broker is waited for within its reconnect window when it does not answer yet
    (:func:`mpdp.broker.connectivity.wait_for_broker`).

    Raises:
        TransportError: an external broker that refused us or did not answer within its reconnect window
            (names the URL), a broker that won't start, or a mosquitto child that exited while the body ran
            (names its pid, port and exit code: nobody restarts our own broker).
    """
    external = external_endpoint(settings)
    if external is not None:
        await wait_for_broker(external)
        yield external
        return
    use_mosquitto = settings.kind == "mosquitto" or (settings.kind == "auto" and find_mosquitto())
    started = (run_mosquitto(timeout=settings.timeout, reconnect_window=settings.window(), watch=True) if use_mosquitto
               else run_embedded(timeout=settings.timeout, reconnect_window=settings.window()))
    async with started as endpoint:
        yield endpoint
