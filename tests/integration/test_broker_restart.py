"""The broker SIGKILLed mid-session and restarted 1.5 s later on the same port (real processes), without and
with mosquitto persistence (``persistence true`` in a directory that outlives the kill, saved every second:
the restarted broker brings back the observer's persistent session and what it had queued): the party
hosts and the observer reconnect with backoff and resubscribe, every round completes, every (round,
party) entry is recorded exactly once and no party publishes two different answers."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
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
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

R = 8


def _child_mosquitto(port: int) -> int:
    """The pid of this process's mosquitto child listening on ``port`` (by /proc: our children only, and
    the one whose configuration names the port; never by name)."""
    children: list[str] = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with contextlib.suppress(OSError):
            children += Path(f"/proc/{os.getpid()}/task/{task}/children").read_text().split()
    found = []
    for pid in children:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if Path(args[0].decode()).name != "mosquitto" or b"-c" not in args:  # e.g. a `python -c` helper
            continue
        if f"listener {port} " in Path(args[args.index(b"-c") + 1].decode()).read_text():
            found.append(int(pid))
    assert len(found) == 1, found
    return found[0]


def _persistence(directory: Path) -> str:
    """mosquitto lines that keep sessions and queued messages in ``directory``, saved every second."""
    directory.mkdir()
    return f"persistence true\npersistence_location {directory}/\nautosave_interval 1\n"


@pytest.mark.parametrize("persistent", [False, True], ids=["no-persistence", "persistence"])
async def test_broker_killed_and_restarted_mid_session(tmp_path: Path, persistent: bool) -> None:
    require_mosquitto()
    port = free_loopback_port()
    session = f"brk-{tmp_path.name[-10:].replace('_', '')}"
    config = _persistence(tmp_path / "mosquitto-db") if persistent else ""
    broker = functools.partial(run_mosquitto, port=port, extra_config=config, anonymous=True)  # bare URLs
    async with contextlib.AsyncExitStack() as stack:
        first: BrokerEndpoint = await stack.enter_async_context(broker())
        async with watched_deployment(first, tmp_path, session, R) as (deployment, seen):
            hosts = [await deployment.host(name, 1) for name in ("a", "b")]
            async with asyncio.timeout(scaled(10)):  # with persistence: the broker saved its state at least once
                while persistent and not (tmp_path / "mosquitto-db" / "mosquitto.db").exists():
                    await asyncio.sleep(0.05)
            async with first.connect(f"{session}-watch") as watch:
                await watch.subscribe(Topics(session).rounds)
                observer = await deployment.observer(1, "--round-timeout", scaled_arg(20))
                async with asyncio.timeout(scaled(30)):
                    async for delivery in watch.deliveries():
                        announced = Announcement.model_validate_json(delivery.payload)
                        if announced.kind == "round" and announced.round == 2:
                            os.kill(_child_mosquitto(port), signal.SIGKILL)
                            break
            await stack.aclose()
            await asyncio.sleep(1.5)
            second = await stack.enter_async_context(broker())
            assert second.port == port
            codes = [await _finish(proc, 60) for proc in (observer, *hosts)]
            await asyncio.sleep(scaled(0.3))
    assert codes == [0, 0, 0], deployment.logs()
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        assert sorted((m["round"], m["party"]) for m in store.messages(session)) == [
            (r, p) for r in range(R) for p in range(K)]
        assert [store.load_round(session, r).status for r in range(R)] == ["complete"] * R
