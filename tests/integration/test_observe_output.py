"""What ``mpdp observe`` and ``mpdp party`` say (real processes, a real mosquitto): the observer's wait for the
hosts is announced on stderr at once (also into a file), a stopped observer names ``--resume``, and a host whose
every answer was a ``policy`` abstention says so instead of "answered"."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _finish
from tests.integration.test_party_restart import watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


async def test_observer_waiting_says_so_and_a_stop_names_resume(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"say-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, 2) as (deployment, _):
        wait = scaled_arg(300)
        observer = await deployment.observer(1, "--wait-parties", wait)
        log = tmp_path / "observe1.log"
        async with asyncio.timeout(scaled(20)):
            while "waiting up to" not in log.read_text():
                await asyncio.sleep(0.05)
        observer.send_signal(signal.SIGTERM)
        code = await _finish(observer, 20)
    text = log.read_text()
    assert code == 128 + signal.SIGTERM, text
    assert (f"mpdp: waiting up to {float(wait):g} s for the ready reports of 9 parties on "
            f"mqtt://127.0.0.1:{mosquitto.port} (mpdp party hosts)") in text, text
    assert (f"mpdp: the observer stopped: no round of 2 yet recorded in {tmp_path / 'out1' / 'transcripts.sqlite'}; "
            "to continue: the same command with --resume (within the party hosts' --observer-grace)") in text, text


async def test_a_host_that_abstained_from_every_round_says_so(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"abs-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, 3) as (deployment, _):
        hosts = [await deployment.host("a", 1), await deployment.host("b", 1)]
        observer = await deployment.observer(1, "--repetitions", "2")  # the hosts allow 1: policy abstentions
        codes = [await _finish(proc, 60) for proc in (observer, *hosts)]
    logs = deployment.logs()
    assert codes == [1, 0, 0], logs
    assert (f"session {session}: parties 0-4 abstained from all 3 rounds (policy: 3) until the end: nothing "
            "released (deployment mode)") in logs["a1.log"], logs
