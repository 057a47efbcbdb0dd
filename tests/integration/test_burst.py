"""Backpressure, not drops: 20 parties x 500 QoS 1 messages published into a receiver (mpdp's persistent
transport, as the observer's) that is paused with SIGSTOP for 5 s and then resumed: every one of the
10,000 messages arrives (the broker queues what the paused client cannot take). The pause lasts as long as
the burst takes to publish, at least 5 s."""

from __future__ import annotations

import asyncio
import signal
import sys
import time
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.topics import Topics
from tests.calibration import scaled
from tests.integration.test_deploy import ROOT, _kill_all

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

PARTIES, MESSAGES, PAUSE = 20, 500, 5.0


async def _burst(endpoint: BrokerEndpoint, topics: Topics, party: int) -> None:
    async with endpoint.connect(f"{topics.session}-burst-{party}") as transport:
        for i in range(MESSAGES):
            await transport.publish(topics.party(party), f"{party}:{i}")


async def test_a_paused_receiver_loses_nothing_of_a_burst(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    topics = Topics(f"burst-{tmp_path.name[-8:].replace('_', '')}")
    receiver = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.integration.burst_receiver", str(mosquitto.port), topics.session,
        str(PARTIES * MESSAGES), str(scaled(20)), cwd=ROOT, stdout=asyncio.subprocess.PIPE)
    try:
        assert receiver.stdout is not None
        async with asyncio.timeout(scaled(30)):
            assert (await receiver.stdout.readline()).strip() == b"ready"
        receiver.send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        async with asyncio.TaskGroup() as tg:
            for party in range(PARTIES):
                tg.create_task(_burst(mosquitto, topics, party))
        await asyncio.sleep(max(0.0, PAUSE - (time.monotonic() - paused)))
        receiver.send_signal(signal.SIGCONT)
        async with asyncio.timeout(scaled(60)):
            received = int((await receiver.stdout.readline()).strip())
            code = await receiver.wait()
    finally:
        if receiver.returncode is None:
            receiver.send_signal(signal.SIGCONT)
        await _kill_all([receiver])
    assert (received, code) == (PARTIES * MESSAGES, 0)
