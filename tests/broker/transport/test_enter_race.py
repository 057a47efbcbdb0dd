"""A connection attempt abandoned as it failed leaves no "Task exception was never retrieved" (a party host
stopping mid-reconnect after a broker restart printed aiomqtt's traceback)."""

from __future__ import annotations

import asyncio
import gc
from types import SimpleNamespace
from typing import Any

import aiomqtt

from mpdp.broker.transport.connecting import enter


class _RefusedClient:
    """Just enough of aiomqtt.Client for :func:`enter`: ``__aenter__`` fails with 'Connection refused'."""

    def __init__(self) -> None:
        self._client = SimpleNamespace(on_log=None, on_disconnect=None)
        self._connected: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._disconnected: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.attempt: asyncio.Task[Any] | None = None

    async def __aenter__(self) -> None:
        self.attempt = asyncio.current_task()
        await asyncio.sleep(0)
        raise aiomqtt.MqttError("[Errno 111] Connection refused")


async def test_cancelled_as_the_attempt_fails_leaves_no_unretrieved_error() -> None:
    loop = asyncio.get_running_loop()
    reported: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: reported.append(context))
    try:
        client = _RefusedClient()
        connecting = asyncio.ensure_future(enter(client))  # type: ignore[arg-type]
        while client.attempt is None or not client.attempt.done():
            await asyncio.sleep(0)
        connecting.cancel()  # the attempt failed; enter has not seen it yet (a timeout, a stop, at that moment)
        await asyncio.wait((connecting,))
        assert connecting.cancelled()
        del client, connecting
        gc.collect()
        assert reported == []
    finally:
        loop.set_exception_handler(None)
