"""A real mosquitto SIGKILLed and restarted on the same port: clients wait for it within their reconnect
window (publishes made meanwhile included), report one loss line and one return line per process, keep
their persistent sessions with mosquitto persistence; past the window they give up with one line."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.ports import free_loopback_port
from mpdp.broker.transport import MqttTransport
from mpdp.broker.transport.outage import OUTAGES
from mpdp.protocols.errors import TransportError
from tests.calibration import scaled
from tests.mqtt_fixtures import child_mosquitto, require_mosquitto, take

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

#: Seconds the broker stays down: more than the old 8 attempts' ~9 s, and a few backoff caps.
OUTAGE = 12.0


async def _until(condition: Callable[[], bool], limit: float = 30.0) -> None:
    async with asyncio.timeout(scaled(limit)):
        while not condition():
            await asyncio.sleep(0.02)


def _broker(port: int, directory: Path, window: float) -> contextlib.AbstractAsyncContextManager[BrokerEndpoint]:
    return run_mosquitto(port=port, anonymous=True, persistence=directory, timeout=5.0, reconnect_window=window)


async def test_clients_ride_out_an_outage_longer_than_the_old_attempts(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    require_mosquitto()
    caplog.set_level(logging.WARNING, logger="mpdp.transport")
    port, db = free_loopback_port(), tmp_path / "db"
    async with contextlib.AsyncExitStack() as brokers, contextlib.AsyncExitStack() as clients:
        first = await brokers.enter_async_context(_broker(port, db, 120.0))
        sub: MqttTransport = await clients.enter_async_context(first.connect("rw-sub", persistent=True))
        await sub.subscribe("rw/#")
        pubs = [await clients.enter_async_context(first.connect(f"rw-pub-{i}")) for i in range(5)]
        await pubs[0].publish("rw/before", b"0")
        assert [d.payload for d in await take(sub, 1, timeout=scaled(5))] == [b"0"]
        assert all(t.connected for t in (sub, *pubs)) and sub.downtime == 0.0
        os.kill(child_mosquitto(port), signal.SIGKILL)
        down = time.monotonic()
        await _until(lambda: not any(t.connected for t in (sub, *pubs)))
        during = asyncio.create_task(pubs[1].publish("rw/during", b"1"))  # waits for the new connection
        await asyncio.sleep(OUTAGE)
        assert not during.done()
        assert sub.downtime >= OUTAGE - 0.1
        second = await brokers.enter_async_context(_broker(port, db, 120.0))
        assert second.port == port
        async with asyncio.timeout(scaled(30)):
            await during
        await _until(lambda: all(t.connected for t in (sub, *pubs)))
        back = time.monotonic() - down
        assert [d.payload for d in await take(sub, 1, timeout=scaled(10))] == [b"1"]
        assert OUTAGE <= sub.downtime <= back + 0.1 and sub.reconnects == 1
        frozen = sub.downtime
        await asyncio.sleep(0.2)
        assert sub.downtime == frozen  # connected: the downtime clock stands still
    lines = [r.getMessage() for r in caplog.records if r.name == "mpdp.transport"]
    assert len(lines) == 2, lines
    assert lines[0].startswith(f"lost the connection to the MQTT broker at {first.url} (")
    assert lines[0].endswith("; reconnecting for up to 2 min")
    assert lines[1].startswith(f"reconnected to the MQTT broker at {first.url} after ")
    assert lines[1].endswith(" attempts each)") and "(6 connections, at most " in lines[1]
    seconds = float(lines[1].split(" after ")[1].split(" s ")[0])
    assert OUTAGE <= seconds <= back + 0.1


async def test_a_persistent_session_keeps_what_was_queued_for_it_across_a_kill(tmp_path: Path) -> None:
    """mosquitto persistence (saved on every change): a message acknowledged to its publisher while the
    subscriber was away reaches the subscriber from the restarted broker."""
    require_mosquitto()
    port, db = free_loopback_port(), tmp_path / "db"
    broker = functools.partial(_broker, port, db, 60.0)
    async with broker() as first:
        async with first.connect("rw-keep", persistent=True) as away:
            await away.subscribe("keep/#")
        async with first.connect("rw-keep-pub") as pub:
            await pub.publish("keep/answer", b"kept")  # acknowledged: queued for the absent session
        await _until(lambda: (db / "mosquitto.db").exists())
        await asyncio.sleep(0.5)  # autosave on change: written just after the change; no time-bound claim
        os.kill(child_mosquitto(port), signal.SIGKILL)
    async with broker() as second, second.connect("rw-keep", persistent=True) as back:
        assert [(d.topic, d.payload) for d in await take(back, 1, timeout=scaled(10))] == [("keep/answer", b"kept")]


async def test_past_the_window_every_wait_raises_one_line(tmp_path: Path) -> None:
    require_mosquitto()
    port = free_loopback_port()
    async with _broker(port, tmp_path / "db", 2.0) as endpoint, endpoint.connect("rw-lonely") as transport:
        await transport.subscribe("lonely/#")
        os.kill(child_mosquitto(port), signal.SIGKILL)
        started = time.monotonic()
        with pytest.raises(TransportError) as info:
            async with asyncio.timeout(scaled(30)):
                await anext(transport.deliveries())
        assert 2.0 <= time.monotonic() - started < 2.0 + scaled(10.0)  # the window, one attempt's timeout, slack
        message = str(info.value)
        assert "\n" not in message and endpoint.url in message and "within 2 s" in message
        assert "after the connection was lost" in message
        assert not transport.connected
        with pytest.raises(TransportError):
            await transport.publish("lonely/late", b"x")


async def test_a_client_cancelled_while_it_reconnects_stops_at_once(tmp_path: Path) -> None:
    """Ctrl-C or SIGTERM during an outage (a cancellation) does not wait out the window, and the client
    leaves the process's outage record (a later return line does not count it)."""
    require_mosquitto()
    port = free_loopback_port()
    async with _broker(port, tmp_path / "db", 600.0) as endpoint:
        connected = asyncio.Event()

        async def hold() -> None:
            async with endpoint.connect("rw-cancelled") as transport:
                await transport.subscribe("cancel/#")
                connected.set()
                await anext(transport.deliveries())

        task = asyncio.create_task(hold())
        await asyncio.wait_for(connected.wait(), scaled(10))
        os.kill(child_mosquitto(port), signal.SIGKILL)
        await _until(lambda: OUTAGES.ongoing(endpoint.url))
        await asyncio.sleep(1.0)  # inside the reconnect loop, the broker refusing
        task.cancel()
        started = time.monotonic()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, scaled(10))
        assert time.monotonic() - started < scaled(5)
        assert not OUTAGES.ongoing(endpoint.url)
