"""The mpc deployment with real processes on loopback: `mpdp keys --protocol mpc`, a real mosquitto, three
`mpdp mpc-server` (MPyC over TCP between them), two `mpdp party` hosts and `mpdp observe`, each its own
OS process; every round's release is recorded and signed by every server, and no process is left."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mpc_messages import SharedBallot
from mpdp.broker.signing import verify_message
from mpdp.parties.mpc.sealed_shares import open_share
from mpdp.parties.mpc.sharing import recombine
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.files import read_roster, read_server_keys, server_key_path
from tests.integration.test_deploy import VOTES, _finish, _kill_all, _start

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

K, R, M = 9, 3, 3


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


async def test_keys_three_servers_two_hosts_and_the_coordinator_as_processes(mosquitto: BrokerEndpoint,
                                                                            tmp_path: Path) -> None:
    session = f"mpcdep-{tmp_path.name[-10:].replace('_', '')}"
    keys, out, votes = tmp_path / "keys", tmp_path / "out", tmp_path / "votes.csv"
    votes.write_text(VOTES)
    procs: list[asyncio.subprocess.Process] = []
    try:
        procs.append(await _start("keys", "--parties", str(K), "--epsilon", "inf", "--split", "0-4", "--split",
                                  "5-8", "--protocol", "mpc", "--servers", str(M), "--threshold", "1",
                                  "--session", session, "--out", str(keys), log=tmp_path / "keys.log"))
        assert await _finish(procs.pop(), 15) == 0, (tmp_path / "keys.log").read_text()
        facts = read_roster(keys / "roster.json")
        assert facts.servers is not None and facts.servers.servers == M and facts.servers.threshold == 1
        assert len(set(facts.servers.addresses)) == M
        for i in range(M):
            assert stat.S_IMODE(server_key_path(keys, i).stat().st_mode) == 0o600
            assert read_server_keys(server_key_path(keys, i), facts).server == i

        broker = ["--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]
        roster = ("--roster", str(keys / "roster.json"))
        for i in range(M):
            procs.append(await _start("mpc-server", *roster, "--keys", str(server_key_path(keys, i)), *broker,
                                      "--idle-timeout", "40", log=tmp_path / f"server{i}.log"))
        host = ("party", *roster, "--dataset", str(votes), *broker)
        procs.append(await _start(*host, "--keys", str(keys / "parties-0-4"), "--parties", "0-4", "--protocol",
                                  "mpc", "--record", str(tmp_path / "a.sqlite"), log=tmp_path / "a.log"))
        procs.append(await _start("observe", *roster, "--keys", str(keys / "coordinator"), "--dataset-rounds",
                                  str(votes), "--function", "passed", *broker, "--out", str(out), "--wait-parties",
                                  "30", "--round-timeout", "20", log=tmp_path / "observe.log"))
        # host B takes the protocol from the roster
        procs.append(await _start(*host, "--keys", str(keys / "parties-5-8"), "--parties", "5-8",
                                  log=tmp_path / "b.log"))
        codes = [await _finish(p, 50) for p in procs]
    finally:
        await _kill_all(procs)
    names = [*(f"server{i}" for i in range(M)), "a", "observe", "b"]
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in names}
    assert codes == [0] * len(names), logs
    assert all(_gone(p.pid) for p in procs)
    for i in range(M):
        assert f"compute server {i} released {R} round(s)" in logs[f"server{i}"]

    bits = load_dataset(str(votes)).bits
    decisions = json.loads((out / "decisions.json").read_text())
    assert decisions["protocol"] == "mpc" and len(decisions["rounds"]) == R
    with MpcStore(out / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        releases = store.release_payloads(session)
        costs = store.server_costs(session)
        ballots = list(store.ballots(session))
    assert len(releases) == R and sorted(costs) == list(range(R))
    server_keys = [read_server_keys(server_key_path(keys, i), facts) for i in range(M)]
    for r in range(R):
        voting = np.flatnonzero(bits[:, r] >= 0)
        ones = int(bits[voting, r].sum())
        truth = int(2 * ones > voting.size)  # epsilon = inf: 001's mechanism releases the strict majority
        row = decisions["rounds"][r]
        assert row["participants"] == voting.tolist() and row["decisions"] == [truth]
        signed = [CuratorRelease.model_validate_json(text) for text in json.loads(releases[r])]
        assert len(signed) == M
        for i, release in enumerate(signed):
            assert verify_message(release, facts.servers.signing_keys[i])
            assert (release.session, release.round, release.voters) == (session, r, voting.size)
            assert release.output_array().tolist() == [truth]
        assert len(costs[r]) == M and all(c.sent > 0 and c.received > 0 for c in costs[r])
        # the recorded ballots are sealed to the roster's servers: any T + 1 = 2 of them recover each bit
        for entry in (b for b in ballots if b["round"] == r and b["kind"] == "sealed"):
            ballot = SharedBallot.model_validate_json(str(entry["payload"]))
            pairs = ballot.sealed_pairs()
            shares = {i: [open_share(server_keys[i].sealing, pairs[i], session=session, round_index=r,
                                     party=ballot.party, server=i)] for i in (0, 2)}
            assert recombine(shares) == [int(bits[ballot.party, r])]
