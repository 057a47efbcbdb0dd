"""``ws://`` and ``wss://`` broker URLs end to end, against an amqtt broker with a WebSocket listener
(the mosquitto of this machine is built without WebSocket support); ``wss`` with a certificate of
``mpdp broker config``'s CA, verified by host name."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from amqtt.broker import Broker

from mpdp.broker.certificates import CertificateAuthority
from mpdp.broker.launch import external_endpoint
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.settings import BrokerSettings
from mpdp.protocols.errors import TransportError

pytestmark = pytest.mark.integration


@contextlib.asynccontextmanager
async def _ws_broker(port: int, tls: tuple[Path, Path] | None) -> AsyncIterator[None]:
    listener: dict[str, object] = {"type": "ws", "bind": f"{LOOPBACK}:{port}", "max_connections": -1}
    if tls is not None:
        listener.update(ssl=True, certfile=str(tls[0]), keyfile=str(tls[1]))
    logging.getLogger("amqtt").setLevel(logging.WARNING)
    broker = Broker({"listeners": {"default": listener},
                     "plugins": {"amqtt.plugins.authentication.AnonymousAuthPlugin": {"allow_anonymous": True}}})
    await broker.start()
    try:
        yield
    finally:
        await broker.shutdown()


async def _round_trip(url: str, cafile: Path | None = None) -> tuple[str, bytes]:
    endpoint = external_endpoint(BrokerSettings.from_url(url, {}, cafile=cafile))
    assert endpoint is not None
    async with endpoint.connect("mpdp-ws-a") as a, endpoint.connect("mpdp-ws-b") as b:
        await a.subscribe("mpdp/ws/party/+")
        await b.publish("mpdp/ws/party/1", b"over websockets")
        async with asyncio.timeout(5):
            async for delivery in a.deliveries():
                return delivery.topic, delivery.payload
    raise AssertionError("nothing delivered")


async def test_a_ws_url_connects_over_websockets() -> None:
    port = free_loopback_port()
    async with _ws_broker(port, None):
        assert await _round_trip(f"ws://127.0.0.1:{port}/mqtt?timeout=5") == ("mpdp/ws/party/1", b"over websockets")


# paho-mqtt 2.2 leaves the TLS socket of a failed handshake (the foreign CA) to the garbage collector
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
async def test_a_wss_url_verifies_the_broker_certificate(tmp_path: Path) -> None:
    ca = CertificateAuthority("mpdp CA ws")
    server = ca.server()
    files = {name: tmp_path / name for name in ("ca.crt", "server.crt", "server.key", "other.crt")}
    files["ca.crt"].write_bytes(ca.certificate_pem)
    files["server.crt"].write_bytes(server.certificate)
    files["server.key"].write_bytes(server.key)
    files["other.crt"].write_bytes(CertificateAuthority("someone else").certificate_pem)
    port = free_loopback_port()
    async with _ws_broker(port, (files["server.crt"], files["server.key"])):
        url = f"wss://localhost:{port}/mqtt?timeout=5"
        assert await _round_trip(url, files["ca.crt"]) == ("mpdp/ws/party/1", b"over websockets")
        with pytest.raises(TransportError, match="CERTIFICATE_VERIFY_FAILED"):
            await _round_trip(url, files["other.crt"])
