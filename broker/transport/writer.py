"""paho's writer registered on the event loop only while its socket is open (issue 20).

aiomqtt (pinned <3) registers paho's writer one loop turn late: ``call_soon_threadsafe(add_writer,
sock.fileno(), ...)``, the descriptor read at once. When the socket closes in between (a DISCONNECT
written, the broker's close read: every party connection at the end of a per-party run), the late
``add_writer`` hands epoll a closed descriptor and asyncio logs "Bad file descriptor" with a traceback, or,
were the number reused meanwhile, watches another connection's socket. :func:`register_writes_when_open`
replaces that callback with one that registers on the loop only if the socket is still the client's own and
open at that turn; what the writer does is aiomqtt's (``loop_write``; an error ends the connection).
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiomqtt
import paho.mqtt.client as paho

__all__ = ["register_writes_when_open"]


def register_writes_when_open(client: aiomqtt.Client) -> None:
    """Make ``client``'s paho client register its writer only on a socket still open (module docstring);
    call before ``connect``. Uses aiomqtt's private ``_client``, ``_loop`` and ``_disconnected``."""
    loop: asyncio.AbstractEventLoop = client._loop

    def write(inner: paho.Client) -> None:
        try:
            inner.loop_write()
        except Exception as exc:  # as aiomqtt: a broken connection ends it
            if not client._disconnected.done():
                client._disconnected.set_exception(exc)

    def register(inner: paho.Client, _userdata: Any, sock: Any) -> None:  # a socket, or an SSL socket
        def add() -> None:
            fileno: int = sock.fileno()  # -1 once closed
            if fileno >= 0 and inner.socket() is sock:
                loop.add_writer(fileno, write, inner)

        loop.call_soon_threadsafe(add)  # paho may call from the thread that runs connect()

    client._client.on_socket_register_write = register
