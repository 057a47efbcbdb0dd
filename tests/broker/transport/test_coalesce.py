"""One ``send`` for the packets paho queued (:mod:`mpdp.broker.transport.coalesce`): the same bytes in the same
order, partial writes resumed where they stopped, QoS 0 publishes and DISCONNECT left to paho's own write."""

from __future__ import annotations

import asyncio

import paho.mqtt.client as paho
from hypothesis import given
from hypothesis import strategies as st
from paho.mqtt.enums import CallbackAPIVersion, MQTTErrorCode

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.transport.coalesce import coalesce_writes
from mpdp.broker.transport.mqtt import open_transport
from tests.mqtt_fixtures import take


class _Socket:
    """Takes at most ``room`` bytes per send (then would block), recording each send."""

    def __init__(self, room: list[int]) -> None:
        self.sends: list[bytes] = []
        self._room = room

    def send(self, data: bytes | memoryview) -> int:
        if not self._room:
            raise BlockingIOError
        n = min(len(data), self._room.pop(0))
        self.sends.append(bytes(data[:n]))
        return n

    def close(self) -> None:
        """paho closes its socket at a DISCONNECT and when the client is collected."""


def _client(room: list[int]) -> tuple[paho.Client, _Socket]:
    client = paho.Client(CallbackAPIVersion.VERSION2)
    sock = _Socket(room)
    client._sock = sock  # type: ignore[assignment]
    coalesce_writes(client)
    return client, sock


def _queue(client: paho.Client, packets: list[bytes], command: int = paho.PUBACK, qos: int = 1) -> None:
    for i, packet in enumerate(packets):
        client._out_packet.append({"command": command, "mid": i, "qos": qos, "pos": 0, "to_process": len(packet),
                                   "packet": packet, "info": None})


@given(st.lists(st.binary(min_size=1, max_size=40), min_size=2, max_size=30),
       st.lists(st.integers(1, 120), min_size=1, max_size=40))
def test_the_bytes_sent_are_the_packets_in_order(packets: list[bytes], room: list[int]) -> None:
    left_room = list(room)
    client, sock = _client(left_room)
    _queue(client, packets)
    while client._out_packet and left_room:  # each call as the socket becomes writable again
        client._packet_write()
    sent = b"".join(sock.sends)
    everything = b"".join(packets)
    assert everything.startswith(sent)
    assert len(sent) == min(len(everything), sum(room))
    # what is not sent yet is still queued, resumed where it stopped
    left = b"".join(bytes(p["packet"][p["pos"]:]) for p in client._out_packet)
    assert sent + left == everything


def test_many_packets_go_in_one_send() -> None:
    client, sock = _client([1 << 20])
    _queue(client, [bytes([0x40, 2, 0, i]) for i in range(100)])
    assert client._packet_write() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert len(sock.sends) == 1 and len(sock.sends[0]) == 400 and not client._out_packet


def test_a_qos0_publish_is_left_to_paho() -> None:
    """paho marks a QoS 0 message published once written: it is written alone, by paho."""
    client, sock = _client([1 << 20] * 4)
    _queue(client, [b"ab", b"cd"])
    info = paho.MQTTMessageInfo(7)
    client._out_packet.append({"command": paho.PUBLISH, "mid": 7, "qos": 0, "pos": 0, "to_process": 3,
                               "packet": b"efg", "info": info})
    _queue(client, [b"hi"])
    assert client._packet_write() == MQTTErrorCode.MQTT_ERR_SUCCESS
    assert sock.sends == [b"abcd", b"efg", b"hi"] and info.is_published()


async def test_qos1_messages_through_mosquitto(mosquitto: BrokerEndpoint) -> None:
    """Hundreds of QoS 1 publishes queued at once, and their PUBACKs, arrive whole and in order."""
    async with open_transport(mosquitto, "coalesce-sub") as sub, open_transport(mosquitto, "coalesce-pub") as pub:
        await sub.subscribe("coalesce/+")
        payloads = [f"message {i}".encode() * (1 + i % 7) for i in range(300)]
        await asyncio.gather(*(pub.publish(f"coalesce/{i % 3}", p) for i, p in enumerate(payloads)))
        got = await take(sub, len(payloads), timeout=30.0)
    assert sorted(d.payload for d in got) == sorted(payloads)
    for topic in ("coalesce/0", "coalesce/1", "coalesce/2"):  # MQTT keeps the order per topic
        assert [d.payload for d in got if d.topic == topic] == [p for i, p in enumerate(payloads)
                                                                if f"coalesce/{i % 3}" == topic]


def test_disconnect_is_left_to_paho() -> None:
    """paho closes the socket once its DISCONNECT is written."""
    client, sock = _client([1 << 20] * 4)
    _queue(client, [b"ab", b"cd"])
    _queue(client, [b"\xe0\x00"], command=paho.DISCONNECT, qos=0)
    client._packet_write()
    assert sock.sends == [b"abcd", b"\xe0\x00"] and client._sock is None
