"""A cancellation that arrives in the same event-loop pass as the broker's answer still cancels.

On Python 3.11 ``asyncio.wait_for`` (which aiomqtt awaits every acknowledgement with) returns the answer and
drops a cancellation that reached the task in the same loop pass. The takeover test
(tests/broker/transport/test_takeover.py) hung a pytest worker for 20 minutes that way beside 8 CPU burners:
its ``asyncio.timeout`` cancelled a task that was disconnecting, the DISCONNECT's answer won, and the task
went on reconnecting and reading for ever. Here the cancel is made to arrive in that pass deterministically:
a callback on the answer's future (a real aiomqtt client, a real mosquitto) cancels the task, so it runs
before the task resumes (:func:`mpdp.broker.transport.mqtt._keep_cancellation`,
:func:`mpdp.broker.transport.base.running`)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from typing import Any

import aiomqtt
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.transport import MqttTransport, base
from mpdp.broker.transport import mqtt as mqtt_module
from mpdp.broker.transport.base import running
from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]


def _id(role: str) -> str:
    return f"test-{role}-{uuid.uuid4().hex[:8]}"


async def test_a_cancel_in_the_pass_of_the_disconnect_answer_cancels_close(mosquitto: BrokerEndpoint) -> None:
    transport = MqttTransport(mosquitto, _id("close"))
    await transport.connect()
    client = transport._client
    assert client is not None
    closing = asyncio.create_task(transport.close())
    client._disconnected.add_done_callback(lambda _: closing.cancel())  # before aiomqtt's own wait_for callback
    await asyncio.wait({closing}, timeout=scaled(10))
    assert client._disconnected.done() and not client._disconnected.cancelled()  # the broker's answer came
    assert client._disconnected.exception() is None and not client._client.is_connected()
    assert closing.cancelled()


async def test_a_cancel_in_the_pass_of_the_suback_cancels_the_reconnect(
        mosquitto: BrokerEndpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    """The reconnect (:meth:`MqttTransport.connect` with remembered filters) renews the subscriptions; the
    SUBACK's callback cancels it."""
    made: list[aiomqtt.Client] = []
    original = mqtt_module.aiomqtt_client
    connecting: asyncio.Task[None] | None = None

    def with_cancelling_suback(*args: Any, **kwargs: Any) -> aiomqtt.Client:
        client = original(*args, **kwargs)
        on_subscribe = client._client.on_subscribe

        def answer_then_cancel(*suback: Any) -> None:
            on_subscribe(*suback)  # sets aiomqtt's future: its wait_for resumes in a later pass
            assert connecting is not None
            connecting.cancel()

        client._client.on_subscribe = answer_then_cancel
        made.append(client)
        return client

    transport = MqttTransport(mosquitto, _id("reconnect"))
    transport._filters = {"t/cancel-race/#": None}  # as after subscribe(): renewed on every connection
    with monkeypatch.context() as patch:
        patch.setattr(mqtt_module, "aiomqtt_client", with_cancelling_suback)
        connecting = asyncio.create_task(transport.connect())
        await asyncio.wait({connecting}, timeout=scaled(10))
    assert len(made) == 1 and not made[0]._client.is_connected()  # one attempt, its connection dropped
    assert connecting.cancelled() and transport._client is None


async def test_running_ends_a_task_that_swallowed_its_cancellation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "RECANCEL_SECONDS", 0.2)
    swallowed = 0

    async def stubborn() -> None:
        nonlocal swallowed
        while swallowed < 2:
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:  # as wait_for above, twice
                swallowed += 1
        await asyncio.sleep(3600)

    started = time.monotonic()
    async with asyncio.timeout(scaled(10)), running(stubborn(), "stubborn") as task:
        await asyncio.sleep(0)
    assert task.cancelled() and swallowed == 2
    assert time.monotonic() - started < scaled(5)  # 3 cancellations 0.2 s apart, not an hour


async def test_running_gives_up_on_a_task_that_swallows_every_cancellation(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(base, "RECANCEL_SECONDS", 0.05)
    monkeypatch.setattr(base, "STOP_ATTEMPTS", 3)
    swallowed = 0
    release = asyncio.Event()

    async def deaf() -> None:
        nonlocal swallowed
        while not release.is_set():
            try:
                await release.wait()
            except asyncio.CancelledError:
                swallowed += 1

    async with asyncio.timeout(scaled(10)), running(deaf(), "deaf") as task:
        await asyncio.sleep(0)
    assert swallowed == 3 and not task.done()
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING] == [
        "task 'deaf' still runs after 3 cancellations 0.05 s apart; left running"]
    release.set()
    await task


async def test_running_keeps_the_callers_own_cancellation() -> None:
    """A caller cancelled while it waits for the task to end ends cancelled, once the task has ended (its
    cleanup not cut short by another cancellation)."""
    stopping = asyncio.Event()
    cleaned = False
    tasks: list[asyncio.Task[object]] = []

    async def slow_to_stop() -> None:
        nonlocal cleaned
        try:
            await asyncio.sleep(3600)
        finally:
            stopping.set()
            await asyncio.sleep(0.2)  # a cleanup that awaits
            cleaned = True

    async def caller() -> None:
        async with running(slow_to_stop(), "slow") as task:
            tasks.append(task)
            await asyncio.sleep(0)

    outer = asyncio.create_task(caller())
    await stopping.wait()  # the caller waits in running() for the task, which is in its cleanup
    outer.cancel()
    await asyncio.wait({outer}, timeout=scaled(10))
    assert outer.cancelled() and cleaned and tasks[0].cancelled()
