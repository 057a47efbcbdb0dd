"""The broker SIGKILLed mid-session and restarted 1.5 s (and 20 s) later on the same port (real processes), without and
with mosquitto persistence (``persistence true`` in a directory that outlives the kill, saved on every change:
the restarted broker brings back the observer's persistent session and what it had queued): the party
hosts and the observer reconnect with backoff and resubscribe, every round completes, every (round,
party) entry is recorded exactly once and no party publishes two different answers."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from collections import defaultdict
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.ports import free_loopback_port
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.store import TranscriptStore
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _finish
from tests.integration.test_party_restart import K, watched_deployment
from tests.mqtt_fixtures import child_mosquitto, require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

R = 8


async def _outage(tmp_path: Path, persistent: bool, seconds: float, round_timeout: float
                  ) -> tuple[list[int], dict[str, str]]:
    """Run the deployment (observer and two hosts) over a mosquitto SIGKILLed when round 2 is announced and
    started again on the same port ``seconds`` later; the processes' exit codes and logs."""
    require_mosquitto()
    port = free_loopback_port()
    session = f"brk-{tmp_path.name[-10:].replace('_', '')}"
    broker = functools.partial(run_mosquitto, port=port, anonymous=True,  # bare URLs
                               persistence=tmp_path / "mosquitto-db" if persistent else None)
    async with contextlib.AsyncExitStack() as stack:
        first: BrokerEndpoint = await stack.enter_async_context(broker())
        async with watched_deployment(first, tmp_path, session, R) as (deployment, seen):
            hosts = [await deployment.host(name, 1) for name in ("a", "b")]
            async with asyncio.timeout(scaled(10)):  # with persistence: the broker saved its state at least once
                while persistent and not (tmp_path / "mosquitto-db" / "mosquitto.db").exists():
                    await asyncio.sleep(0.05)
            async with first.connect(f"{session}-watch") as watch:
                await watch.subscribe(Topics(session).rounds)
                observer = await deployment.observer(1, "--round-timeout", scaled_arg(round_timeout))
                async with asyncio.timeout(scaled(30)):
                    async for delivery in watch.deliveries():
                        announced = Announcement.model_validate_json(delivery.payload)
                        if announced.kind == "round" and announced.round == 2:
                            os.kill(child_mosquitto(port), signal.SIGKILL)
                            break
            await stack.aclose()
            await asyncio.sleep(seconds)
            second = await stack.enter_async_context(broker())
            assert second.port == port
            codes = [await _finish(proc, 60 + round_timeout) for proc in (observer, *hosts)]
            await asyncio.sleep(scaled(0.3))
            logs = deployment.logs()
            published: dict[tuple[int, int], set[str]] = defaultdict(set)  # what the watcher saw (not all:
            for message in seen:  # it was away during the outage too), but never two answers for one slot
                published[message.round, message.party].add(message.model_dump_json())
            assert published and all(len(texts) == 1 for texts in published.values()), "answered twice"
    assert codes == [0, 0, 0], logs
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        assert sorted((m["round"], m["party"]) for m in store.messages(session)) == [
            (r, p) for r in range(R) for p in range(K)]
        assert [store.load_round(session, r).status for r in range(R)] == ["complete"] * R
    return codes, logs


@pytest.mark.parametrize("persistent", [False, True], ids=["no-persistence", "persistence"])
async def test_broker_killed_and_restarted_mid_session(tmp_path: Path, persistent: bool) -> None:
    await _outage(tmp_path, persistent, 1.5, 20.0)


@pytest.mark.timeout(240)
async def test_a_deployment_rides_out_a_broker_down_for_20_s(tmp_path: Path) -> None:
    """Longer than the attempts of old (8, about 9 s for the observer): every process waits within its
    reconnect window (10 min by default) and says so in one line when it loses the broker and one when it
    has it back, however many connections it holds (a host: one per party)."""
    _, logs = await _outage(tmp_path, False, 20.0, 60.0)
    for name in ("observe1.log", "a1.log", "b1.log"):
        lost = [line for line in logs[name].splitlines() if "lost the connection to the MQTT broker" in line]
        back = [line for line in logs[name].splitlines() if "reconnected to the MQTT broker" in line]
        assert len(lost) == 1 and "reconnecting for up to 10 min" in lost[0], (name, logs[name])
        assert len(back) == 1, (name, logs[name])
        assert 20.0 <= float(back[0].split(" after ")[1].split(" s ")[0]) <= 20.0 + scaled(30.0), back
