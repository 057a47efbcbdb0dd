"""Receive loops of Python MQTT clients against mosquitto's own subscriber, in one run (issue 13: is
aiomqtt's receive loop the bottleneck?).

One mosquitto child (mpdp's configuration). For each receiver, one ``mosquitto_pub`` publishes N QoS 1
messages as long as one signed party message of 1 repetition to a topic the receiver subscribed to at
QoS 1; the time runs from the publisher's start to the receiver's N-th message. Receivers:

* ``mosquitto_sub`` (C, the ceiling; :func:`broker_ceiling.measure_ceiling`);
* ``paho-mqtt`` (its own network thread, ``on_message`` counts);
* ``aiomqtt`` (``async for message in client.messages``, paho acknowledges on receipt);
* mpdp's :class:`mpdp.broker.transport.mqtt.MqttTransport` (aiomqtt + the bounded queue and the manual
  PUBACK after queueing: what every mpdp client runs);
* ``gmqtt`` when it is installed (skipped with a note otherwise).

Printed: messages/s of each and its ratio to ``mosquitto_sub``'s in the same run, and the load average.

Run: python benchmarks/bench_mqtt_clients.py [N]   (default 20,000)
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable

import aiomqtt
import paho.mqtt.client as paho
from broker_ceiling import measure_ceiling, party_message_bytes

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto

Receiver = Callable[[BrokerEndpoint, str, int, asyncio.Event], Awaitable[None]]


async def _publish(endpoint: BrokerEndpoint, topic: str, messages: int, payload_bytes: int) -> None:
    pub = shutil.which("mosquitto_pub")
    if pub is None:
        raise SystemExit("mosquitto_pub not found: apt-get install mosquitto-clients")
    sender = await asyncio.create_subprocess_exec(
        pub, "-h", endpoint.host, "-p", str(endpoint.port), "-t", topic, "-q", "1", "-m", "x" * payload_bytes,
        "--repeat", str(messages), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE)
    _, err = await sender.communicate()
    if sender.returncode:
        raise RuntimeError(f"mosquitto_pub failed ({sender.returncode}): {err.decode()!r}")


async def _timed(receiver: Receiver, endpoint: BrokerEndpoint, messages: int, payload_bytes: int) -> float:
    """Messages/s of ``receiver`` for ``messages`` publications (from the publisher's start)."""
    topic = f"bench/clients/{uuid.uuid4().hex[:8]}"
    subscribed = asyncio.Event()
    receiving = asyncio.create_task(receiver(endpoint, topic, messages, subscribed))
    await asyncio.wait_for(subscribed.wait(), 10)
    start = time.perf_counter()
    await _publish(endpoint, topic, messages, payload_bytes)
    await asyncio.wait_for(receiving, 300)
    return messages / (time.perf_counter() - start)


async def receive_aiomqtt(endpoint: BrokerEndpoint, topic: str, messages: int, subscribed: asyncio.Event) -> None:
    """aiomqtt's own iterator (paho acknowledges on receipt)."""
    async with aiomqtt.Client(endpoint.host, endpoint.port, identifier=f"bench-aiomqtt-{topic[-8:]}") as client:
        await client.subscribe(topic, qos=1)
        subscribed.set()
        seen = 0
        async for _ in client.messages:
            seen += 1
            if seen == messages:
                return


async def receive_transport(endpoint: BrokerEndpoint, topic: str, messages: int, subscribed: asyncio.Event) -> None:
    """mpdp's transport: aiomqtt, bounded queue, PUBACK after queueing."""
    async with endpoint.connect(f"bench-mpdp-{topic[-8:]}") as transport:
        await transport.subscribe(topic)
        subscribed.set()
        seen = 0
        async for _ in transport.deliveries():
            seen += 1
            if seen == messages:
                return


async def receive_paho(endpoint: BrokerEndpoint, topic: str, messages: int, subscribed: asyncio.Event) -> None:
    """paho-mqtt with its network thread; ``on_message`` counts."""
    loop = asyncio.get_running_loop()
    done, ready = threading.Event(), threading.Event()
    seen = [0]

    def on_message(client: paho.Client, userdata: object, message: paho.MQTTMessage) -> None:
        seen[0] += 1
        if seen[0] == messages:
            done.set()

    client = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id=f"bench-paho-{topic[-8:]}")
    client.on_message = on_message
    client.on_subscribe = lambda *args: ready.set()
    client.connect(endpoint.host, endpoint.port)
    client.subscribe(topic, qos=1)
    client.loop_start()
    try:
        await loop.run_in_executor(None, ready.wait, 10)
        subscribed.set()
        await loop.run_in_executor(None, done.wait, 300)
    finally:
        client.disconnect()
        client.loop_stop()


async def receive_gmqtt(endpoint: BrokerEndpoint, topic: str, messages: int, subscribed: asyncio.Event) -> None:
    """gmqtt (asyncio-native); ``on_message`` counts."""
    import gmqtt  # type: ignore[import-not-found]

    done = asyncio.Event()
    seen = [0]

    def on_message(client: object, topic_name: str, payload: bytes, qos: int, properties: object) -> int:
        seen[0] += 1
        if seen[0] == messages:
            done.set()
        return 0

    client = gmqtt.Client(f"bench-gmqtt-{topic[-8:]}")
    client.on_message = on_message
    client.on_subscribe = lambda *args: subscribed.set()
    await client.connect(endpoint.host, endpoint.port, version=gmqtt.constants.MQTTv311)
    client.subscribe(topic, qos=1)
    try:
        await done.wait()
    finally:
        await client.disconnect()


def _gmqtt_installed() -> bool:
    try:
        import gmqtt  # noqa: F401
    except ImportError:
        return False
    return True


async def main(messages: int) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)")
    payload = party_message_bytes(1)
    receivers: dict[str, Receiver] = {"paho-mqtt": receive_paho, "aiomqtt": receive_aiomqtt,
                                      "mpdp MqttTransport": receive_transport}
    if _gmqtt_installed():
        receivers["gmqtt"] = receive_gmqtt
    else:
        print("gmqtt: not installed (pip install gmqtt), skipped")
    async with run_mosquitto(anonymous=True) as endpoint:
        print(f"{messages} QoS 1 messages of {payload} B from mosquitto_pub, one receiver at a time")
        raw = (await measure_ceiling(endpoint, 1, messages, payload)).rate
        print(f"{'receiver':<20} {'msg/s':>8} {'/mosquitto_sub':>14}")
        print(f"{'mosquitto_sub (C)':<20} {raw:>8.0f} {1.0:>14.2f}")
        for name, receiver in receivers.items():
            rate = await _timed(receiver, endpoint, messages, payload)
            print(f"{name:<20} {rate:>8.0f} {rate / raw:>14.2f}", flush=True)
        again = (await measure_ceiling(endpoint, 1, messages, payload)).rate
        print(f"{'mosquitto_sub again':<20} {again:>8.0f} {again / raw:>14.2f}")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20_000))
