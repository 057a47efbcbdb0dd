"""Two `mpdp party` hosts for the same parties (the keys copied to a second folder, so each host has its own
answer record) release every bit twice with fresh randomness (real processes, a real mosquitto). The
observer keeps both signed answers, names the parties, charges their privacy for both and exits 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.rounds.store import TranscriptStore
from tests.integration.test_deploy import _finish, _start
from tests.integration.test_party_restart import HOSTS, watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ROUNDS = 3


async def test_a_second_host_of_the_same_parties_is_a_double_release(mosquitto: BrokerEndpoint,
                                                                      tmp_path: Path) -> None:
    session = f"dbl-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, ROUNDS) as (deployment, _):
        copy = deployment.keys / "parties-0-4-copy"
        shutil.copytree(deployment.keys / "parties-0-4", copy)
        hosts = [await deployment.host("a", 1), await deployment.host("b", 1)]
        hosts.append(await _start("party", "--roster", str(deployment.keys / "roster.json"), "--dataset",
                                  str(deployment.votes), "--broker", deployment.broker, "--keys", str(copy),
                                  "--parties", HOSTS["a"][1], log=tmp_path / "a-copy.log"))
        deployment.procs.append(hosts[-1])
        observer = await deployment.observer(1)
        code = await _finish(observer, 60)
        for host in hosts:
            await _finish(host, 30)
    log = (tmp_path / "observe1.log").read_text()
    assert code == 1, deployment.logs()
    assert "DOUBLE RELEASE: 5 parties sent two different validly signed answers" in log
    assert "DOUBLE RELEASE: party 0 sent two different validly signed answers to round 0" in log
    document = json.loads((tmp_path / "out1" / "decisions.json").read_text())
    doubled = [r["double_released"] for r in document["rounds"]]
    assert doubled[0] == [0, 1, 2, 3, 4] and doubled[1] == [0, 1, 2, 3, 4]  # the last round's second answers may
    # come after the end: those are kept by nobody
    privacy = document["privacy"]
    assert privacy["summary"]["parties_double_released"] == [0, 1, 2, 3, 4]
    releases = [p["releases"] for p in privacy["parties"]]
    assert all(releases[p] >= 2 * (ROUNDS - 1) + 1 for p in range(5)) and releases[5:] == [ROUNDS] * 4
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        kept = store.query("SELECT round, party, payload FROM double_releases WHERE session = ? ORDER BY round, party",
                           (session,))
        first = {(r, p): store.recorded_payload(session, r, p) for r, p, _ in kept}
    assert {(r, p) for r, p, _ in kept} >= {(r, p) for r in range(ROUNDS - 1) for p in range(5)}
    assert all(bytes(payload) != first[r, p] for r, p, payload in kept)
