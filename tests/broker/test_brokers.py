"""The brokers a run starts: mosquitto child (config from broker/), embedded amqtt; connectivity."""

from __future__ import annotations

import logging
import time

import pytest

from mpdp.broker.connectivity import check_connectivity
from mpdp.broker.embedded import NO_PERSISTENCE_NOTICE, run_embedded
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import open_broker
from mpdp.broker.mosquitto import CONFIG_TEMPLATE, render_config, run_mosquitto
from mpdp.broker.ports import free_loopback_port
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.transport import next_delivery
from mpdp.protocols.errors import TransportError
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


async def _echo(endpoint: BrokerEndpoint, persistent_receiver: bool = False) -> bytes:
    """Publish one QoS 1 message and receive it on another connection."""
    async with endpoint.connect("echo-rx", persistent=persistent_receiver) as rx, endpoint.connect("echo-tx") as tx:
        await rx.subscribe("t/echo")
        await tx.publish("t/echo", b"hello")
        delivery = await next_delivery(rx, 5.0)
    assert delivery is not None
    return delivery.payload


def test_render_config_moves_the_listener_to_loopback_and_keeps_the_rest() -> None:
    template = CONFIG_TEMPLATE.read_text()
    rendered = render_config(template, 4321)
    assert "listener 4321 127.0.0.1" in rendered.splitlines()
    assert "listener 1883" not in rendered
    keep = [line for line in template.splitlines() if not line.startswith("listener")]
    assert [line for line in rendered.splitlines() if not line.startswith("listener")] == keep
    with pytest.raises(TransportError, match="listener"):
        render_config("allow_anonymous true\n", 1)


async def test_session_mosquitto_carries_qos1_messages(mosquitto: BrokerEndpoint) -> None:
    assert mosquitto.kind == "mosquitto" and mosquitto.host == "127.0.0.1"
    assert await _echo(mosquitto, persistent_receiver=True) == b"hello"


async def test_mosquitto_child_is_stopped_on_exit() -> None:
    require_mosquitto()
    async with run_mosquitto(timeout=3.0) as endpoint:
        await check_connectivity(endpoint)
    with pytest.raises(TransportError, match=endpoint.url):
        await check_connectivity(endpoint, timeout=2.0)


async def test_embedded_broker_speaks_mqtt_311_and_stops_on_exit(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, "mpdp.broker"):
        async with run_embedded(timeout=3.0) as endpoint:
            # it says at start that it keeps no persistent session across reconnects
            assert [r.getMessage() for r in caplog.records if r.name == "mpdp.broker"] == [NO_PERSISTENCE_NOTICE]
            assert "does not keep persistent sessions" in NO_PERSISTENCE_NOTICE and "mosquitto" in NO_PERSISTENCE_NOTICE
            assert (endpoint.kind, endpoint.protocol) == ("embedded", "3.1.1")
            assert await _echo(endpoint, persistent_receiver=True) == b"hello"
    with pytest.raises(TransportError, match=endpoint.url):
        await check_connectivity(endpoint, timeout=2.0)


async def test_unreachable_broker_is_one_transport_error_naming_the_url() -> None:
    port = free_loopback_port()
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{port}?timeout=2", environ={})
    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        async with open_broker(settings):
            pytest.fail("an unreachable broker was opened")
    assert f"mqtt://127.0.0.1:{port}" in str(info.value) and "\n" not in str(info.value)
    assert time.monotonic() - started < 5


async def test_external_broker_is_used_as_is(mosquitto: BrokerEndpoint) -> None:
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    async with open_broker(settings) as endpoint:
        assert (endpoint.kind, endpoint.port) == ("external", mosquitto.port)
        assert await _echo(endpoint) == b"hello"


async def test_mqtt5_clients_work_with_mosquitto(mosquitto: BrokerEndpoint) -> None:
    v5 = BrokerEndpoint("external", mosquitto.host, mosquitto.port, protocol="5", timeout=5.0)
    assert await _echo(v5, persistent_receiver=True) == b"hello"
