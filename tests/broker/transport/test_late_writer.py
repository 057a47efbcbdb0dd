"""aiomqtt registers paho's writer one loop turn late (``call_soon_threadsafe(add_writer, fileno)``); a
socket closed in between (a DISCONNECT written, the broker's close read) must not be registered then: on
a closed descriptor epoll raises "Bad file descriptor" in an asyncio callback, one traceback per party
connection at the end of a per-party run (issue 20)."""

from __future__ import annotations

import asyncio
from typing import Any

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.transport.mqtt import aiomqtt_client


async def test_a_socket_closed_before_its_writer_is_registered_raises_nothing(mosquitto: BrokerEndpoint) -> None:
    loop = asyncio.get_running_loop()
    errors: list[dict[str, Any]] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: errors.append(context))
    try:
        client = aiomqtt_client(mosquitto, "late-writer")
        await client.__aenter__()
        paho = client._client
        await asyncio.sleep(0.2)  # the CONNECT written: no writer registered
        paho._registered_write = False
        paho._call_socket_register_write()  # as paho does on queueing a packet: add_writer on the next turn
        paho._sock_close()  # the socket closes in the same turn (as after a DISCONNECT, or the broker's close)
        for _ in range(3):
            await asyncio.sleep(0)
        client._disconnected.cancel()
    finally:
        loop.set_exception_handler(previous)
    assert errors == [], [str(e.get("exception")) for e in errors]
