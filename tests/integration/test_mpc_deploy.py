"""The mpc deployment with real processes on loopback: `mpdp keys --protocol mpc`, a real mosquitto, three
`mpdp mpc-server` (MPyC over TCP between them), two `mpdp party` hosts and `mpdp observe`, each its own
OS process; every round's release is recorded and signed by every server, and no process is left. Once
over an open mosquitto, once over the locked-down one of `mpdp broker config` (TLS, a login per party
host, per server and for the observer, the ACL), each role with only its own broker.env."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mpc_messages import SharedBallot
from mpdp.broker.signing import verify_message
from mpdp.parties.mpc.sealed_shares import ShareOpener
from mpdp.parties.mpc.sharing import recombine
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.rounds.session_files import read_roster, read_server_keys, server_key_path
from mpdp.parties.session.datasets import load_dataset
from tests.calibration import scaled_arg
from tests.integration.test_deploy import VOTES, _finish, _kill_all, _start, broker_config
from tests.mqtt_fixtures import serve_locked

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

K, R, M = 9, 3, 3


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


#: A role's broker options and environment, by identity (observer, parties-RANGES, mpc-server-I).
Login = Callable[[str], tuple[list[str], dict[str, str]]]


async def _keys(tmp_path: Path, session: str) -> Path:
    keys = tmp_path / "keys"
    proc = await _start("keys", "--parties", str(K), "--epsilon", "inf", "--split", "0-4", "--split", "5-8",
                        "--protocol", "mpc", "--servers", str(M), "--threshold", "1", "--session", session,
                        "--out", str(keys), log=tmp_path / "keys.log")
    try:
        assert await _finish(proc, 15) == 0, (tmp_path / "keys.log").read_text()
    finally:
        await _kill_all([proc])
    return keys


async def test_keys_three_servers_two_hosts_and_the_coordinator_as_processes(mosquitto: BrokerEndpoint,
                                                                            tmp_path: Path) -> None:
    session = f"mpcdep-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    url = f"mqtt://127.0.0.1:{mosquitto.port}"
    await _deployment(tmp_path, session, keys, lambda identity: (["--broker", url], {}))


async def test_the_mpc_deployment_over_the_locked_down_broker(tmp_path: Path) -> None:
    """`mpdp broker config` from the mpc roster; each server, host and the observer with its own login only."""
    session = f"mpclock-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    await broker_config(tmp_path, keys)
    async with serve_locked(tmp_path / "broker", "parties-0-4") as broker:
        await _deployment(tmp_path, session, keys, lambda identity: ([], broker.env(identity)))


async def _deployment(tmp_path: Path, session: str, keys: Path, login: Login) -> None:
    """Three servers, two party hosts and the coordinator as processes; checks what they recorded."""
    out, votes = tmp_path / "out", tmp_path / "votes.csv"
    votes.write_text(VOTES)
    facts = read_roster(keys / "roster.json")
    assert facts.servers is not None and facts.servers.servers == M and facts.servers.threshold == 1
    assert len(set(facts.servers.addresses)) == M
    for i in range(M):
        assert stat.S_IMODE(server_key_path(keys, i).stat().st_mode) == 0o600
        assert read_server_keys(server_key_path(keys, i), facts).server == i
    procs: list[asyncio.subprocess.Process] = []
    try:
        roster = ("--roster", str(keys / "roster.json"))
        for i in range(M):
            options, env = login(f"mpc-server-{i}")
            procs.append(await _start("mpc-server", *roster, "--keys", str(server_key_path(keys, i)), *options,
                                      "--idle-timeout", scaled_arg(40), log=tmp_path / f"server{i}.log", env=env))
        host = ("party", *roster, "--dataset", str(votes))
        options, env = login("parties-0-4")
        procs.append(await _start(*host, *options, "--keys", str(keys / "parties-0-4"), "--parties", "0-4",
                                  "--protocol", "mpc", "--record", str(tmp_path / "a.sqlite"), log=tmp_path / "a.log",
                                  env=env))
        options, env = login("observer")
        procs.append(await _start("observe", *roster, "--keys", str(keys / "coordinator"), "--dataset-rounds",
                                  str(votes), "--function", "passed", *options, "--out", str(out), "--wait-parties",
                                  scaled_arg(30), "--round-timeout", scaled_arg(20), log=tmp_path / "observe.log", env=env))
        # host B takes the protocol from the roster
        options, env = login("parties-5-8")
        procs.append(await _start(*host, *options, "--keys", str(keys / "parties-5-8"), "--parties", "5-8",
                                  log=tmp_path / "b.log", env=env))
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
            shares = {i: [ShareOpener(server_keys[i].sealing, session=session, server=i).open(
                pairs[i], round_index=r, party=ballot.party)] for i in (0, 2)}
            assert recombine(shares) == [int(bits[ballot.party, r])]
