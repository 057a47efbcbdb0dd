"""An MPyC server listens on its own roster address, not on every interface (issue 23)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import pytest

from mpdp.parties.mpc.listen import bind_own_address


@dataclass
class _Party:
    pid: int
    host: str
    port: int


@dataclass
class _Runtime:
    """What bind_own_address reads of MPyC's runtime: its loop, its parties and its own pid."""

    _loop: asyncio.AbstractEventLoop
    parties: list[_Party]
    pid: int


def test_the_listening_socket_is_bound_to_the_own_roster_address() -> None:
    """MPyC's call (``create_server(factory, port=..)``, no host) on the patched loop: a real socket bound
    to 127.0.0.2 (the own party's host), not 0.0.0.0; another party's host is not used."""
    loop = asyncio.new_event_loop()
    try:
        mpc = _Runtime(loop, [_Party(0, "127.0.0.3", 0), _Party(1, "127.0.0.2", 0)], pid=1)
        assert bind_own_address(mpc) == "127.0.0.2"
        server = loop.run_until_complete(loop.create_server(asyncio.Protocol, port=0))
        try:
            assert [s.getsockname()[0] for s in server.sockets] == ["127.0.0.2"]
        finally:
            server.close()
            loop.run_until_complete(server.wait_closed())
    finally:
        loop.close()


def test_a_party_without_host_is_refused() -> None:
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(ValueError, match="MPyC party 0 has no host"):
            bind_own_address(_Runtime(loop, [_Party(0, "", 0)], pid=0))
    finally:
        loop.close()
