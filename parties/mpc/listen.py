"""Bind an MPyC server's listening socket to its own roster address instead of every interface.

MPyC's runtime (0.11, and upstream) opens its listening socket with ``loop.create_server(factory,
port=...)`` and no host, so it listens on 0.0.0.0 / :: whatever the address a server was given (``-P
host:port``). :func:`bind_own_address` makes the runtime's event loop pass the host of the server's own
party (``mpc.parties[mpc.pid].host``) to every ``create_server`` call that names none; the peers connect to
that address anyway (MPyC's ``create_connection(peer.host, peer.port)``).
"""

from __future__ import annotations

import functools
from typing import Any

__all__ = ["bind_own_address"]


def bind_own_address(mpc: Any) -> str:
    """Make the MPyC runtime ``mpc`` (imported, not yet started) listen on its own party's host only.

    Returns:
        The host it will bind (``mpc.parties[mpc.pid].host``, e.g. ``"127.0.0.1"`` or ``"localhost"``).

    Raises:
        ValueError: the runtime's own party has no host (an empty string).
    """
    host = str(mpc.parties[mpc.pid].host)
    if not host:
        raise ValueError(f"MPyC party {mpc.pid} has no host to listen on (got {host!r}); allowed: a host name or IP")
    loop = mpc._loop
    create_server = loop.create_server

    @functools.wraps(create_server)
    async def on_own_host(factory: Any, host_: Any = None, *args: Any, **kwargs: Any) -> Any:
        return await create_server(factory, host_ if host_ is not None else host, *args, **kwargs)

    loop.create_server = on_own_host
    return host
