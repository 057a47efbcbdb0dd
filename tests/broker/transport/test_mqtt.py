"""MqttTransport against a real mosquitto: round trip, reconnect after a broker restart, persistent
sessions, backpressure without loss, and one-line errors when the broker is unreachable."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import gc
import logging
import re
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import paho.mqtt.client as paho_client
import paho.mqtt.publish as paho_publish
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.transport import Delivery, MqttTransport, next_delivery
from mpdp.protocols.errors import TransportError
from tests.calibration import scaled
from tests.mqtt_fixtures import require_mosquitto, take

ROOT = Path(__file__).resolve().parents[3]

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def _id(role: str) -> str:
    return f"test-{role}-{uuid.uuid4().hex[:8]}"



@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
async def test_round_trip_with_wildcards(mosquitto: BrokerEndpoint, protocol: str) -> None:
    endpoint = dataclasses.replace(mosquitto, protocol=protocol)
    async with endpoint.connect(_id("rx")) as rx, endpoint.connect(_id("tx")) as tx:
        await rx.subscribe("t/rt/+/x", "t/rt/+")
        await tx.publish("t/rt/1/x", b"\x00\xff")
        await tx.publish("t/rt/1/y/z", "not")
        await tx.publish("t/rt/2", "text")
        got = await take(rx, 2)
    assert got == [Delivery("t/rt/1/x", b"\x00\xff"), Delivery("t/rt/2", b"text")]


@pytest.mark.parametrize("protocol", ["3.1.1", "5"])
async def test_persistent_session_delivers_what_arrived_while_disconnected(
        mosquitto: BrokerEndpoint, protocol: str) -> None:
    endpoint = dataclasses.replace(mosquitto, protocol=protocol)
    observer = _id("observer")
    async with endpoint.connect(_id("tx")) as tx:
        async with endpoint.connect(observer, persistent=True) as rx:
            await rx.subscribe("t/persist/#")
        for i in range(5):
            await tx.publish(f"t/persist/{i}", str(i))
        async with endpoint.connect(observer, persistent=True) as rx:  # no new subscribe
            got = await take(rx, 5)
        async with endpoint.connect(observer):  # a clean connection ends the session
            pass
    assert got == [Delivery(f"t/persist/{i}", str(i).encode()) for i in range(5)]


async def test_reconnects_and_resubscribes_after_a_broker_restart() -> None:
    require_mosquitto()
    port = free_loopback_port()
    endpoint = BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=2.0)
    first = run_mosquitto(timeout=2.0, port=port, anonymous=True)
    await first.__aenter__()
    async with endpoint.connect(_id("rx")) as rx, endpoint.connect(_id("tx")) as tx:
        await rx.subscribe("t/restart")
        await tx.publish("t/restart", b"before")
        assert await take(rx, 1) == [Delivery("t/restart", b"before")]
        await first.__aexit__(None, None, None)  # the broker is gone (it keeps no sessions)
        publishing = asyncio.create_task(tx.publish("t/restart", b"during"))
        await asyncio.sleep(0.3)
        assert not publishing.done()  # waits for the broker to come back
        async with run_mosquitto(timeout=2.0, port=port, anonymous=True):
            await publishing
            await rx.publish("t/restart", b"echo")  # rx has reconnected: its filter was renewed
            got: list[bytes] = []
            while b"echo" not in got:
                got += [d.payload for d in await take(rx, 1)]
    assert set(got) <= {b"during", b"echo"}


async def test_slow_consumer_loses_nothing_and_holds_a_bounded_queue(mosquitto: BrokerEndpoint) -> None:
    endpoint = dataclasses.replace(mosquitto, queue_size=4)
    count = 300
    async with endpoint.connect(_id("rx")) as rx, endpoint.connect(_id("tx")) as tx:
        await rx.subscribe("t/slow")
        for i in range(count):
            await tx.publish("t/slow", str(i))
        await asyncio.sleep(0.3)
        assert isinstance(rx, MqttTransport)
        assert rx._queue.qsize() == 4  # full; the reader waits and the broker keeps the rest
        client = rx._client
        assert client is not None and len(client.messages) <= 20  # max_inflight_messages of mosquitto.conf
        got = []
        for _ in range(count):
            got += await take(rx, 1)
            await asyncio.sleep(0.001)
    assert [d.payload for d in got] == [str(i).encode() for i in range(count)]


async def test_a_task_group_error_does_not_cancel_the_tasks_later_connections(mosquitto: BrokerEndpoint) -> None:
    """Python 3.11's TaskGroup leaves its own cancellation request of the parent task counted after a child's
    error (``Task.cancelling()`` stays 1); the parent's next connection and publish must still work (a worker
    reports its failure that way), and a cancellation that arrives during a wait still cancels."""

    async def fail() -> None:
        raise ValueError("planted")

    with pytest.raises(ExceptionGroup):
        async with asyncio.TaskGroup() as group:
            group.create_task(fail())
    stale = asyncio.current_task().cancelling()  # type: ignore[union-attr]
    async with mosquitto.connect(_id("rx")) as rx, mosquitto.connect(_id("after-error")) as tx:
        await rx.subscribe("t/after-error")
        await tx.publish("t/after-error", "reported")
        assert await take(rx, 1) == [Delivery("t/after-error", b"reported")]
    assert sys.version_info >= (3, 12) or stale == 1  # the case this test is about (fixed in CPython 3.12)

    async def publish_forever(tx: MqttTransport) -> None:
        while True:
            await tx.publish("t/after-error", "x")

    async with mosquitto.connect(_id("cancelled")) as tx:
        task = asyncio.create_task(publish_forever(tx))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await asyncio.wait_for(task, 5.0)


async def test_a_connect_cancelled_at_any_step_leaves_no_error_behind(caplog: pytest.LogCaptureFixture) -> None:
    """A client cancelled while it connects or subscribes (Ctrl-C, SIGTERM) closes its half-made connection
    quietly: when the broker goes away afterwards, no aiomqtt future of that connection is left with an
    error nobody retrieves ("Future exception was never retrieved" after the run's one line)."""
    require_mosquitto()
    port = free_loopback_port()
    endpoint = BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=2.0)
    with caplog.at_level(logging.ERROR, "asyncio"):
        async with run_mosquitto(timeout=2.0, port=port, anonymous=True):
            for steps in range(30):  # cancel after 0..29 event-loop steps: before, during, after the CONNACK
                async def connect_and_wait(name: str) -> None:
                    async with endpoint.connect(name) as transport:
                        await transport.subscribe("t/cancelled/#")
                        await asyncio.sleep(30)

                task = asyncio.create_task(connect_and_wait(_id("cancelled")))
                for _ in range(steps):
                    await asyncio.sleep(0)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await asyncio.sleep(0.2)  # the broker is gone: what was left connected hears it now
        gc.collect()  # a future's unretrieved error is logged when the future is collected
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


async def test_unreachable_broker_is_one_line_naming_url_and_client() -> None:
    """Refused at once each time: attempts until the 1.5 s window is over, then one line with their count."""
    endpoint = BrokerEndpoint("external", LOOPBACK, free_loopback_port(), timeout=0.5, reconnect_window=1.5)
    started = time.monotonic()
    with pytest.raises(TransportError) as info:
        async with endpoint.connect("lonely"):
            pytest.fail("connected to nothing")
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert endpoint.url in message and "'lonely'" in message and "within 1.5 s" in message
    attempts = int(re.search(r"\((\d+) attempts\)", message).group(1))  # type: ignore[union-attr]
    assert attempts >= 3  # delays drawn from [0, 0.1], [0, 0.2], [0, 0.4], ...: at least 3 fit in 1.5 s
    assert "\n" not in message
    assert 1.5 <= elapsed < 1.5 + scaled(1.5)  # the window, at most one attempt's timeout past it, slack


async def test_silent_server_times_out() -> None:
    """A TCP listener that never answers CONNECT: each attempt ends after ``timeout``."""
    accepted: list[asyncio.StreamWriter] = []
    server = await asyncio.start_server(lambda r, w: accepted.append(w), LOOPBACK, 0)
    port = server.sockets[0].getsockname()[1]
    endpoint = BrokerEndpoint("external", LOOPBACK, port, timeout=0.3, reconnect_window=0.0)
    async with server:
        with pytest.raises(TransportError, match="no answer within 0.3 s"):
            async with endpoint.connect("mute"):
                pass
        for writer in accepted:
            writer.close()


def test_a_failed_connect_prints_one_error_line() -> None:
    # a listener that never answers MQTT: the connect times out; aiomqtt used to add "Could not gracefully
    # disconnect: 4. Forcing disconnection." and an asyncio traceback from a callback on its cancelled future
    with socket.create_server((LOOPBACK, 0)) as silent:
        url = f"mqtt://{LOOPBACK}:{silent.getsockname()[1]}?timeout=1"
        done = subprocess.run([sys.executable, "-m", "mpdp", "simulate", "--parties", "3", "--quiet", "--broker", url,
                               "--reconnect-window", "0"],
                              capture_output=True, text=True, timeout=scaled(60), cwd=ROOT)
    assert (done.returncode, done.stdout) == (2, "")
    (line,) = done.stderr.splitlines()  # nothing decided: no advice to resume, the cause alone
    assert re.fullmatch(rf"mpdp: error: cannot reach the MQTT broker at {re.escape(url.split('?')[0])} as client "
                        r"'[\w-]+' \(1 attempt\): no answer within 1 s", line), line


async def test_a_starved_loop_still_hands_over_the_message_that_came_in_time(mosquitto: BrokerEndpoint) -> None:
    """A busy machine starves the event loop past a wait's deadline while a message comes in and sits in the
    socket: :func:`next_delivery` hands it over (it answered None: a silence that was not there)."""
    wait = 0.3
    async with mosquitto.connect(_id("rx")) as rx:
        await rx.subscribe("t/starved")
        waiting = asyncio.create_task(next_delivery(rx, wait))
        await asyncio.sleep(0)  # the wait has begun
        began = time.monotonic()
        # the loop starves past the deadline (it reads no socket) while another client's message comes in
        paho_publish.single("t/starved", b"in time", qos=1, hostname=LOOPBACK, port=mosquitto.port,
                            protocol=paho_client.MQTTv311)
        time.sleep(max(0.0, began + wait - time.monotonic()) + 0.3)
        assert await waiting == Delivery("t/starved", b"in time")
        assert await next_delivery(rx, 0.1) is None  # and a real silence is still one
