"""The brokers a run starts: mosquitto child (config from broker/), embedded amqtt; connectivity."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
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
ROOT = Path(__file__).resolve().parents[2]


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


async def test_embedded_broker_shuts_down_fully_when_cancelled_at_any_step(caplog: pytest.LogCaptureFixture) -> None:
    """A run interrupted (Ctrl-C, SIGTERM: its task cancelled) at any step of starting or stopping the
    embedded broker leaves none of amqtt's tasks behind for ``asyncio.run`` to cancel on the way out (amqtt
    logs a traceback then), and the cancellation still ends the run."""

    async def start_and_stop() -> None:
        async with run_embedded(timeout=3.0):
            pass

    for steps in range(16):  # cancel after 0..15 event-loop steps: during the start, the yield, the shutdown
        task = asyncio.create_task(start_and_stop())
        for _ in range(steps):
            await asyncio.sleep(0)
        task.cancel()
        with caplog.at_level(logging.WARNING, "amqtt"):
            with contextlib.suppress(asyncio.CancelledError):
                await task
        left = [t for t in asyncio.all_tasks() if "amqtt" in t.get_coro().cr_code.co_filename]  # type: ignore[union-attr]
        assert left == [], (steps, left)
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_unreachable_broker_is_one_transport_error_naming_the_url() -> None:
    port = free_loopback_port()
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{port}?timeout=2", environ={}, reconnect_window=0.0)
    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        async with open_broker(settings):  # a window of 0: not waited for
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


async def test_a_port_taken_before_mosquitto_binds_is_retried_never_yielding_the_other_broker(
    mosquitto: BrokerEndpoint, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The race of issue 13 item 3: the free port is taken (here by another mosquitto, which accepts MQTT
    # as well as ours would) between the probe and the child's bind. Probing MQTT alone would yield the
    # other broker; the child's "running" log line tells, and a new port is tried.
    ports = iter([mosquitto.port, free_loopback_port()])
    monkeypatch.setattr("mpdp.broker.mosquitto.free_loopback_port", lambda: next(ports))
    async with run_mosquitto(timeout=3.0) as endpoint:
        assert endpoint.port != mosquitto.port
        assert await _echo(endpoint) == b"hello"
    with pytest.raises(TransportError, match=endpoint.url):  # it was ours: stopped on exit
        await check_connectivity(endpoint, timeout=2.0)
    await check_connectivity(mosquitto)  # the other broker was left alone


async def test_a_given_port_in_use_is_one_error_quoting_mosquitto(mosquitto: BrokerEndpoint) -> None:
    started = time.monotonic()
    with pytest.raises(TransportError, match="Address already in use") as info:
        async with run_mosquitto(port=mosquitto.port, timeout=3.0):
            pytest.fail("mosquitto started on a port in use")
    assert f"@127.0.0.1:{mosquitto.port}" in str(info.value) and "\n" not in str(info.value)  # mqtt://USER@...
    assert time.monotonic() - started < 5


def test_mosquitto_child_dies_with_its_parent_even_as_root() -> None:
    # Started by root, mosquitto drops to user "mosquitto" by default, and that change of credentials
    # clears PR_SET_PDEATHSIG: a SIGKILLed parent left its broker running. The child keeps our user.
    require_mosquitto()
    script = ("import asyncio\nfrom mpdp.broker.mosquitto import run_mosquitto\n"
              "async def main():\n    async with run_mosquitto() as endpoint:\n"
              "        print(endpoint.port, flush=True)\n        await asyncio.sleep(60)\n"
              "asyncio.run(main())\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert parent.stdout is not None and int(parent.stdout.readline()) > 0
        children = psutil.Process(parent.pid).children()
        assert [c.name() for c in children] == ["mosquitto"]
        assert children[0].uids().effective == os.geteuid()
    finally:
        parent.kill()
        parent.wait()
        if parent.stdout is not None:
            parent.stdout.close()
    _, alive = psutil.wait_procs(children, timeout=5)
    for child in alive:
        child.kill()
    assert alive == []
