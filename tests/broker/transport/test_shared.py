"""A shared connection (many logical clients over one MQTT client): routing by each channel's filters, one
subscription per filter, publishing on the shared connection, failure reaching every channel; and against a
real mosquitto, one TCP connection carrying many channels."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.broker.transport.shared import shared_connection
from mpdp.protocols.errors import ParameterError, TransportError
from tests.mqtt_fixtures import take



async def test_each_channel_gets_exactly_its_filters_messages() -> None:
    broker = InMemoryBroker()
    async with shared_connection(broker, "worker") as shared, broker.connect("other") as other:
        async with shared.connect("a") as a, shared.connect("b") as b:
            await a.subscribe("s/rounds", "s/transcript")
            await b.subscribe("s/rounds")
            for topic in ("s/rounds", "s/transcript", "s/elsewhere"):
                await other.publish(topic, topic)
            assert [d.topic for d in await take(a, 2)] == ["s/rounds", "s/transcript"]
            assert [d.topic for d in await take(b, 1)] == ["s/rounds"]
            assert await next_delivery(b, 0.05) is None  # nothing else reached b
            assert await next_delivery(a, 0.05) is None


async def test_filters_subscribed_once_and_publishes_go_out_on_the_shared_connection() -> None:
    broker = InMemoryBroker()
    async with shared_connection(broker, "worker") as shared, broker.connect("observer") as observer:
        await observer.subscribe("s/party/+")
        async with shared.connect("p1") as p1, shared.connect("p2") as p2:
            await p1.subscribe("s/rounds")
            await p2.subscribe("s/rounds")
            assert shared._subscribed == {"s/rounds"}
            await p1.publish("s/party/1", b"one")
            await p2.publish("s/party/2", b"two")
            got = await take(observer, 2)
        assert sorted((d.topic, d.payload) for d in got) == [("s/party/1", b"one"), ("s/party/2", b"two")]
        assert broker.connected("worker") and not broker.connected("p1")  # no connection of its own


async def test_a_failed_connection_reaches_every_channel() -> None:
    broker = InMemoryBroker()
    async with shared_connection(broker, "worker") as shared:
        async with shared.connect("a") as a, shared.connect("b") as b:
            await a.subscribe("s/rounds")
            await broker.fail("worker", "gone for good")
            for channel in (a, b):
                with pytest.raises(TransportError, match="gone for good"):
                    await take(channel, 1)


async def test_refuses_persistent_and_duplicate_ids() -> None:
    broker = InMemoryBroker()
    async with shared_connection(broker, "worker") as shared:
        with pytest.raises(ParameterError, match="persistent"):
            async with shared.connect("a", persistent=True):
                pass
        async with shared.connect("a"):
            with pytest.raises(ParameterError, match="client_id"):
                async with shared.connect("a"):
                    pass


async def test_many_channels_over_one_mosquitto_connection(mosquitto: BrokerEndpoint) -> None:
    async with shared_connection(mosquitto, "mpdp-test-shared") as shared, \
            mosquitto.connect("mpdp-test-shared-observer") as observer, contextlib.AsyncExitStack() as stack:
        await observer.subscribe("t/party/+")
        channels = [await stack.enter_async_context(shared.connect(f"p{i}")) for i in range(50)]
        await asyncio.gather(*(c.subscribe("t/rounds") for c in channels))
        await observer.publish("t/rounds", b"round 0")
        for i, channel in enumerate(channels):
            assert [d.payload for d in await take(channel, 1)] == [b"round 0"]
        await asyncio.gather(*(c.publish(f"t/party/{i}", str(i)) for i, c in enumerate(channels)))
        got = await take(observer, 50, timeout=10.0)
        assert sorted(int(d.payload) for d in got) == list(range(50))
