"""Two connections that a broker gives one client id (mosquitto's ``use_username_as_clientid``: every connection
of one login gets the login as its id, as on the observer's listener of ``mpdp broker config``) take the id
from each other in turn. Each transport used to reconnect and kick the other for ever, or, when the broker
closed a connection just after its CONNACK, look connected for ever and sit silent; now it fails with one line
naming its client id and the login (:data:`mpdp.broker.transport.mqtt.TAKEOVER_LIMIT`)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from mpdp.broker.mosquitto import run_mosquitto
from mpdp.protocols.errors import TransportError
from tests.calibration import scaled
from tests.mqtt_fixtures import require_mosquitto


async def test_connections_that_take_one_client_id_from_each_other_fail_with_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    require_mosquitto()
    async with run_mosquitto(timeout=scaled(2.0), extra_config="use_username_as_clientid true") as endpoint:
        assert endpoint.username is not None

        async def serve(name: str) -> None:
            async with endpoint.connect(f"mpdp-test-{name}") as transport:
                await transport.subscribe(f"t/{name}")
                async for _ in transport.deliveries():
                    pass

        with pytest.raises(ExceptionGroup) as raised:
            async with asyncio.timeout(scaled(30)), asyncio.TaskGroup() as tg:  # 5 kicks: a few seconds
                for name in ("presence", "beacon", "party-0"):
                    tg.create_task(serve(name))
    errors = [e for e in raised.value.exceptions if isinstance(e, TransportError)]
    assert errors, raised.value.exceptions
    assert ("closed the connection of client 'mpdp-test-" in str(errors[0])
            and f"5 times in a row within 10 s of accepting it: another connection has the same client id (the "
                f"listener may make the login {endpoint.username!r} the client id" in str(errors[0])), errors
    gc.collect()  # a disconnection future left unread is reported when collected
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and "never retrieved" in r.getMessage()]
