"""The in-memory broker: MQTT filter matching, persistence across reconnects, takeover, backpressure,
faults."""

from __future__ import annotations

import asyncio

import pytest

from mpdp.broker.transport import (
    Delivery,
    InMemoryBroker,
    MemoryTransport,
    next_delivery,
)
from mpdp.protocols.errors import ParameterError, TransportError
from tests.calibration import scaled
from tests.mqtt_fixtures import take


async def _nothing_within(transport: MemoryTransport, seconds: float = 0.05) -> bool:
    try:
        async with asyncio.timeout(seconds):
            await anext(transport.deliveries())
    except TimeoutError:
        return True
    return False


@pytest.mark.parametrize(("topic_filter", "hits"), [
    ("a/b/c", ["a/b/c"]),
    ("a/+/c", ["a/b/c", "a/x/c"]),
    ("a/#", ["a/b/c", "a/x/c", "a", "a/b"]),
    ("+/b/#", ["a/b/c", "a/b"]),
    ("#", ["a/b/c", "a/x/c", "a", "a/b", "b"]),
])
async def test_wildcards_match_as_mqtt(topic_filter: str, hits: list[str]) -> None:
    broker = InMemoryBroker()
    async with broker.connect("sub") as sub, broker.connect("pub") as pub:
        await sub.subscribe(topic_filter)
        for topic in ["a/b/c", "a/x/c", "a", "a/b", "b"]:
            await pub.publish(topic, topic)
        got = await take(sub, len(hits))
        assert await _nothing_within(sub)
    assert [d.topic for d in got] == hits
    assert [d.payload for d in got] == [t.encode() for t in hits]


async def test_overlapping_filters_deliver_once() -> None:
    broker = InMemoryBroker()
    async with broker.connect("sub") as sub, broker.connect("pub") as pub:
        await sub.subscribe("s/party/+", "s/#")
        await pub.publish("s/party/3", b"x")
        assert await take(sub, 1) == [Delivery("s/party/3", b"x")]
        assert await _nothing_within(sub)


@pytest.mark.parametrize("bad", ["a/b+", "a/#/b", "#a", ""])
async def test_malformed_filter_is_a_parameter_error(bad: str) -> None:
    async with InMemoryBroker().connect("c") as client:
        with pytest.raises(ParameterError, match="topic filter"):
            await client.subscribe(bad)


async def test_publishing_on_a_wildcard_topic_is_a_parameter_error() -> None:
    async with InMemoryBroker().connect("c") as client:
        with pytest.raises(ParameterError, match="topic="):
            await client.publish("a/+", b"")


async def test_persistent_session_keeps_what_arrives_while_disconnected() -> None:
    broker = InMemoryBroker(queue_size=2)
    async with broker.connect("pub") as pub:
        async with broker.connect("obs", persistent=True) as obs:
            await obs.subscribe("s/#")
            await pub.publish("s/1", b"1")
        for i in range(2, 6):  # more than the queue holds: an offline backlog is not bounded
            await pub.publish(f"s/{i}", str(i))
        async with broker.connect("obs", persistent=True) as obs:
            got = await take(obs, 5)
    assert [d.payload for d in got] == [b"1", b"2", b"3", b"4", b"5"]


async def test_clean_session_forgets_subscriptions_and_messages() -> None:
    broker = InMemoryBroker()
    async with broker.connect("pub") as pub:
        async with broker.connect("obs") as obs:
            await obs.subscribe("s/#")
            await pub.publish("s/1", b"1")
        await pub.publish("s/2", b"2")
        async with broker.connect("obs") as obs:
            await pub.publish("s/3", b"3")
            assert await _nothing_within(obs)


async def test_dropped_client_resubscribes_on_reconnect() -> None:
    broker = InMemoryBroker()
    async with broker.connect("pub") as pub, broker.connect("party") as party:
        await party.subscribe("s/rounds")
        await broker.disconnect("party")
        assert not broker.connected("party")
        await pub.publish("s/rounds", b"lost")  # a clean session: lost while offline
        await broker.reconnect("party")
        await pub.publish("s/rounds", b"kept")
        assert await take(party, 1) == [Delivery("s/rounds", b"kept")]


async def test_dropped_persistent_client_gets_the_backlog_in_order() -> None:
    broker = InMemoryBroker()
    async with broker.connect("pub") as pub, broker.connect("obs", persistent=True) as obs:
        await obs.subscribe("s/#")
        await pub.publish("s/1", b"1")
        await broker.disconnect("obs")
        await pub.publish("s/2", b"2")
        assert await _nothing_within(obs)  # offline: nothing is delivered
        await broker.reconnect("obs")
        assert [d.payload for d in await take(obs, 2)] == [b"1", b"2"]


async def test_offline_publisher_waits_for_reconnect_then_times_out() -> None:
    broker = InMemoryBroker(timeout=0.1)
    async with broker.connect("pub") as pub, broker.connect("sub") as sub:
        await sub.subscribe("t")
        await broker.disconnect("pub")
        waiting = asyncio.create_task(pub.publish("t", b"x"))
        await asyncio.sleep(0.02)
        assert not waiting.done()
        await broker.reconnect("pub")
        await waiting
        assert await take(sub, 1) == [Delivery("t", b"x")]
        await broker.disconnect("pub")
        with pytest.raises(TransportError, match="offline for more than 0.1 s"):
            await pub.publish("t", b"y")


async def test_second_connection_takes_the_session_over() -> None:
    broker = InMemoryBroker()
    async with broker.connect("pub") as pub, broker.connect("c", persistent=True) as first:
        await first.subscribe("t")
        async with broker.connect("c", persistent=True) as second:
            with pytest.raises(TransportError, match="taken over"):
                await take(first, 1)
            with pytest.raises(TransportError, match="taken over"):
                await first.publish("t", b"")
            await pub.publish("t", b"x")  # the persistent session kept the subscription
            assert await take(second, 1) == [Delivery("t", b"x")]


async def test_full_queue_blocks_the_publisher_and_drops_nothing() -> None:
    broker = InMemoryBroker(queue_size=3)
    async with broker.connect("pub") as pub, broker.connect("sub") as sub:
        await sub.subscribe("t")

        async def publish_all() -> None:
            for i in range(10):
                await pub.publish("t", str(i))

        publisher = asyncio.create_task(publish_all())
        await asyncio.sleep(0.05)
        assert not publisher.done()  # three queued, the fourth waits
        assert len(broker._sessions["sub"].items) == 3
        got = await take(sub, 10)
        await publisher
    assert [d.payload for d in got] == [str(i).encode() for i in range(10)]


async def test_publisher_blocked_by_a_full_queue_times_out() -> None:
    broker = InMemoryBroker(queue_size=1, timeout=0.1)
    async with broker.connect("pub") as pub, broker.connect("sub") as sub:
        await sub.subscribe("t")
        await pub.publish("t", b"0")
        with pytest.raises(TransportError, match="blocked for 0.1 s"):
            await pub.publish("t", b"1")


async def test_failed_client_raises_and_closed_client_raises() -> None:
    broker = InMemoryBroker()
    async with broker.connect("c") as client:
        await broker.fail("c", "broker gone")
        with pytest.raises(TransportError, match="broker gone"):
            await take(client, 1)
    async with broker.connect("d") as closed:
        pass
    with pytest.raises(TransportError, match="connection closed"):
        await closed.subscribe("t")
    with pytest.raises(ParameterError, match="connected client"):
        await broker.disconnect("c")


async def test_a_dropped_client_waits_within_its_reconnect_window_and_counts_its_downtime() -> None:
    broker = InMemoryBroker(timeout=0.05, reconnect_window=scaled(5.0))
    async with broker.connect("pub") as pub, broker.connect("sub") as sub:
        await sub.subscribe("t")
        assert pub.connected and pub.downtime == 0.0
        await broker.disconnect("pub")
        assert not pub.connected
        waiting = asyncio.create_task(pub.publish("t", b"x"))
        await asyncio.sleep(0.2)  # past the ack timeout (0.05 s), within the window: still waiting
        assert not waiting.done() and pub.downtime >= 0.2
        await broker.reconnect("pub")
        await waiting
        assert pub.connected and pub.reconnects == 1
        frozen = pub.downtime
        await asyncio.sleep(0.05)
        assert pub.downtime == frozen >= 0.2  # online: the clock stands still
    assert not sub.connected  # closed


@pytest.mark.parametrize(("kwargs", "name"), [({"queue_size": 0}, "queue_size"), ({"timeout": 0}, "timeout"),
                                              ({"reconnect_window": -1.0}, "reconnect_window")])
def test_bad_broker_parameters(kwargs: dict[str, float], name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        InMemoryBroker(**kwargs)  # type: ignore[arg-type]


async def test_next_delivery_times_out_with_none_and_loses_nothing() -> None:
    broker = InMemoryBroker()
    async with broker.connect("pub") as pub, broker.connect("sub") as sub:
        await sub.subscribe("t")
        assert await next_delivery(sub, 0.02) is None
        await pub.publish("t", b"1")
        await pub.publish("t", b"2")
        assert await next_delivery(sub, 0.5) == Delivery("t", b"1")
        assert await next_delivery(sub, 0.5) == Delivery("t", b"2")
        assert await next_delivery(sub, 0.02) is None
