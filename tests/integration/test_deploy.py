"""The deployment topology with real processes: `mpdp keys`, a real mosquitto, two `mpdp party` hosts
and one `mpdp observe`, each its own OS process (as the docker-compose services are)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import mpdp
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage, WorkerStatus
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.api.schemas import validate_document
from mpdp.parties.rounds.session_files import SessionRoster, read_roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.observe import HOSTS_MODE
from mpdp.protocols.errors import ParameterError
from tests.calibration import scaled, scaled_arg
from tests.mqtt_fixtures import broker_user, locked_ports, serve_locked

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

ROOT = Path(__file__).resolve().parents[2]
VOTES = """party,bill a,bill b,bill c
p0,1,0,1
p1,1,0,?
p2,0,1,1
p3,1,1,0
p4,0,0,1
p5,1,?,1
p6,0,1,0
p7,1,0,1
p8,?,1,0
"""
K, R = 9, 3


async def _start(*args: str, log: Path, env: dict[str, str] | None = None) -> asyncio.subprocess.Process:
    env = {**os.environ, "MPDP_BROKER_URL": "", **(env or {})}
    with log.open("wb") as fh:
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mpdp", *args, cwd=ROOT, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=fh, stderr=asyncio.subprocess.STDOUT,
        )


async def _finish(proc: asyncio.subprocess.Process, seconds: float) -> int:
    """``proc``'s exit code once it ends; TimeoutError after ``seconds`` (an idle machine's bound, scaled)."""
    async with asyncio.timeout(scaled(seconds)):
        return await proc.wait()


async def _kill_all(procs: list[asyncio.subprocess.Process]) -> None:
    for proc in procs:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()


async def _ready_seen(endpoint: BrokerEndpoint, session: str, worker: int, seconds: float) -> None:
    """Wait until host ``worker`` has reported ready on the status topic (TimeoutError after ``seconds``, an
    idle machine's bound, scaled)."""
    topics = Topics(session)
    async with asyncio.timeout(scaled(seconds)), endpoint.connect(f"mpdp-test-{session}-watch") as transport:
        await transport.subscribe(topics.status)
        async for delivery in transport.deliveries():
            status = WorkerStatus.model_validate_json(delivery.payload)
            if (status.worker, status.state) == (worker, "ready"):
                return


async def _keys(tmp_path: Path, session: str) -> Path:
    keys = tmp_path / "keys"
    proc = await _start("keys", "--parties", str(K), "--epsilon", "inf", "--split", "0-4", "--split", "5-8",
                        "--session", session, "--out", str(keys), log=tmp_path / "keys.log")
    try:
        assert await _finish(proc, 15) == 0, (tmp_path / "keys.log").read_text()
    finally:
        await _kill_all([proc])
    for key_file in [keys / "coordinator" / "coordinator.key",
                     *(keys / "parties-0-4" / f"party-{i}.key" for i in range(5)),
                     *(keys / "parties-5-8" / f"party-{i}.key" for i in range(5, 9))]:
        assert stat.S_IMODE(key_file.stat().st_mode) == 0o600, key_file
    facts = read_roster(keys / "roster.json")
    assert (facts.session, facts.roster.k) == (session, K)
    return keys


async def _house(tmp_path: Path, session: str, keys: Path, watcher: BrokerEndpoint,
                 broker: Callable[[str], tuple[list[str], dict[str, str]]]) -> None:
    """Two party hosts and the observer decide the House-like votes; ``broker(identity)`` gives a role's
    broker options and environment (identity: ``observer``, ``parties-0-4`` or ``parties-5-8``)."""
    out, votes = tmp_path / "out", tmp_path / "votes.csv"
    votes.write_text(VOTES)
    procs: list[asyncio.subprocess.Process] = []
    try:
        host = ("party", "--roster", str(keys / "roster.json"), "--dataset", str(votes))
        # host A (deployment mode) reports ready before the observer exists: its beacon repeats it
        options, env = broker("parties-0-4")
        procs.append(await _start(*host, *options, "--keys", str(keys / "parties-0-4"), "--parties", "0-4",
                                  log=tmp_path / "a.log", env=env))
        await _ready_seen(watcher, session, 0, 15)
        options, env = broker("observer")
        procs.append(await _start("observe", "--roster", str(keys / "roster.json"), "--keys",
                                  str(keys / "coordinator"), "--dataset-rounds", str(votes), "--function",
                                  "passed", *options, "--out", str(out), "--wait-parties", scaled_arg(15),
                                  "--round-timeout", scaled_arg(10), log=tmp_path / "observe.log", env=env))
        # host B (simulation mode) starts after the observer
        options, env = broker("parties-5-8")
        procs.append(await _start(*host, *options, "--keys", str(keys / "parties-5-8"), "--parties", "5-8",
                                  "--seed", "7", log=tmp_path / "b.log", env=env))
        codes = [await _finish(p, 20) for p in procs]
    finally:
        await _kill_all(procs)
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("a", "observe", "b")}
    assert codes == [0, 0, 0], logs
    assert "deployment mode" in logs["a"] and "simulation mode" in logs["b"]
    _check_decisions(session, read_roster(keys / "roster.json"), votes, out)
    report = mpdp.report(out)  # the deployment's report: one row per round, decisions and privacy figures
    assert (report.kind, report.rows, len(report.figures)) == ("deployment", R, 2)
    assert "No message was rejected." in report.markdown.read_text()


def _check_decisions(session: str, facts: SessionRoster, votes: Path, out: Path) -> None:
    bits = load_dataset(str(votes)).bits
    decisions = json.loads((out / "decisions.json").read_text())
    assert decisions["session"] == session and len(decisions["rounds"]) == R
    assert (decisions["mode"], decisions["mpdp_version"]) == (HOSTS_MODE, mpdp.__version__)
    assert list(decisions)[:4] == ["schema_version", "mpdp_version", "kind", "inputs"]
    assert validate_document(decisions).kind == "observe" and decisions["inputs"]["function"] == "passed"
    with TranscriptStore(out / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        for r in range(R):
            got = store.load_round(session, r)
            votes_r = bits[:, r]
            voting = np.flatnonzero(votes_r >= 0)
            ones = int(votes_r[voting].sum())
            assert (got.status, got.name) == ("complete", ["bill a", "bill b", "bill c"][r])
            assert got.participants.tolist() == voting.tolist()
            assert got.abstained.tolist() == np.flatnonzero(votes_r < 0).tolist() and got.absent.size == 0
            # epsilon = inf: every party reports its bit, the decision is the true outcome
            assert got.symbols.tolist() == [votes_r[voting].tolist()]
            assert got.decisions.tolist() == [int(2 * ones > voting.size)]
            row = decisions["rounds"][r]
            assert row["decisions"] == got.decisions.tolist() and row["posterior_of_decision"] == [1.0]
            assert row["expected_ones"] == [float(ones)]
        assert store.rejects(session) == {}
        # an auditor re-verifies every stored message with the roster's public keys
        payloads = [m["payload"] for m in store.messages(session)]
        assert len(payloads) == K * R
        for text in payloads:
            message = PartyMessage.from_wire(text)  # type: ignore[arg-type]
            assert verify_message(message, facts.roster.public_keys[message.party])


async def test_keys_two_party_hosts_and_the_observer_as_processes(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"dep-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    url = f"mqtt://127.0.0.1:{mosquitto.port}"
    await _house(tmp_path, session, keys, mosquitto, lambda identity: (["--broker", url], {}))
    await _complete_session_again(tmp_path, session, keys, mosquitto)


async def _complete_session_again(tmp_path: Path, session: str, keys: Path, watcher: BrokerEndpoint) -> None:
    """The observer again on the finished session's --out, a party host waiting: one line says nothing ran,
    the host gets the end and exits, decisions.json is the same."""
    out, url = tmp_path / "out", f"mqtt://127.0.0.1:{watcher.port}"
    before = json.loads((out / "decisions.json").read_text())
    host = await _start("party", "--roster", str(keys / "roster.json"), "--dataset", str(tmp_path / "votes.csv"),
                        "--broker", url, "--keys", str(keys / "parties-0-4"), "--parties", "0-4",
                        log=tmp_path / "again-host.log")
    procs = [host]
    try:
        await _ready_seen(watcher, session, 0, 15)
        procs.append(await _start("observe", "--roster", str(keys / "roster.json"), "--keys", str(keys / "coordinator"),
                                  "--dataset-rounds", str(tmp_path / "votes.csv"), "--function", "passed", "--broker",
                                  url, "--out", str(out), "--quiet", log=tmp_path / "again-observe.log"))
        codes = [await _finish(p, 20) for p in reversed(procs)]
    finally:
        await _kill_all(procs)
    assert codes == [0, 0], [(tmp_path / f"again-{n}.log").read_text() for n in ("observe", "host")]
    assert (tmp_path / "again-observe.log").read_text().splitlines() == [
        f"mpdp: session {session} is complete ({R} rounds recorded in {out / 'transcripts.sqlite'}): nothing to run; "
        "the end is announced again, so party hosts still waiting exit"]
    after = json.loads((out / "decisions.json").read_text())
    assert after["rounds"] == before["rounds"] and after["privacy"] == before["privacy"]
    # a decisions.json of an older mpdp (no header) is still read; another schema version is refused by name
    older = {key: value for key, value in after.items() if key not in ("schema_version", "kind", "inputs")}
    (out / "decisions.json").write_text(json.dumps(older))
    assert mpdp.report(out).rows == R
    (out / "decisions.json").write_text(json.dumps(after | {"schema_version": 2}))
    with pytest.raises(ParameterError, match="it has schema_version 2"):
        mpdp.report(out)


async def broker_config(tmp_path: Path, keys: Path, validators: int = 0) -> int:
    """`mpdp broker config` as a process, from ``keys/roster.json`` for the hosts 0-4 and 5-8, into
    ``tmp_path/broker`` on two free loopback ports; the observer's port."""
    party_port, observer_port = locked_ports()
    user = broker_user()
    proc = await _start("broker", "config", "--roster", str(keys / "roster.json"), "--split", "0-4", "--split",
                        "5-8", "--port", str(party_port), "--observer-port", str(observer_port), "--bind",
                        "127.0.0.1", *(["--user", user] if user else []), "--validators", str(validators), "--out", str(tmp_path / "broker"),
                        log=tmp_path / "config.log")
    try:
        assert await _finish(proc, 15) == 0, (tmp_path / "config.log").read_text()
    finally:
        await _kill_all([proc])
    return observer_port


@pytest.mark.parametrize("validators", [0, 2])
async def test_the_house_over_tls_with_a_login_per_host(tmp_path: Path, validators: int) -> None:
    """`mpdp broker config` from the roster, mosquitto from its files, each role with its own broker.env
    (URL, user, password, CA, certificate: all through the environment, none on a command line); with
    `--validators 2` the observer's two validators use their own logins (issue 22)."""
    session = f"tls-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    observer_port = await broker_config(tmp_path, keys, validators)
    async with serve_locked(tmp_path / "broker", "parties-0-4") as broker:
        await _house(tmp_path, session, keys, broker.endpoint("observer"), lambda identity: (
            ["--validators", str(validators)] if identity == "observer" and validators else [], broker.env(identity)))
    logs = "".join((tmp_path / f"{name}.log").read_text() for name in ("a", "observe", "b", "config"))
    logs += (tmp_path / "out" / "decisions.json").read_text()
    for identity in ("observer", "parties-0-4", "parties-5-8"):
        assert broker.env(identity)["MPDP_BROKER_PASSWORD"] not in logs
    assert f"mqtts://observer@127.0.0.1:{observer_port}" in json.dumps(
        json.loads((tmp_path / "out" / "decisions.json").read_text()))


async def test_observer_names_the_parties_that_never_came(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    proc = await _start("keys", "--parties", "4", "--out", str(keys), log=tmp_path / "keys.log")
    try:
        assert await _finish(proc, 15) == 0
        proc = await _start("observe", "--roster", str(keys / "roster.json"), "--keys", str(keys / "coordinator"),
                            "--rounds", "2", "--broker", f"mqtt://127.0.0.1:{mosquitto.port}",
                            "--out", str(tmp_path / "out"), "--wait-parties", "1", log=tmp_path / "observe.log")
        assert await _finish(proc, 15) == 2
    finally:
        await _kill_all([proc])
    lines = (tmp_path / "observe.log").read_text().strip().splitlines()
    assert lines == [f"mpdp: waiting up to 1 s for the ready reports of 4 parties on mqtt://127.0.0.1:{mosquitto.port} "
                     "(mpdp party hosts)",
                     "mpdp: error: parties 0-3 did not report ready within 1 s (is an `mpdp party` running "
                     "for them, on the same broker and roster?)"]


async def test_a_host_whose_dataset_is_short_fails_at_once_and_the_rounds_go_on(mosquitto: BrokerEndpoint,
                                                                                  tmp_path: Path) -> None:
    """Host 0-4's dataset has 3 columns, the observer announces 6 rounds: at round 3 the host exits 2 with one line
    naming its dataset, its signed "failed" reaches the observer, which names it and decides rounds 3-5 with host
    5-8 alone as soon as that host answered each (round_timeout 300 s: one round waited for would blow the
    test's timeout)."""
    session = f"short-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    url, out, short, full = f"mqtt://127.0.0.1:{mosquitto.port}", tmp_path / "out", tmp_path / "votes.csv", tmp_path / "six.csv"
    short.write_text(VOTES)
    lines = VOTES.splitlines()  # six columns: the three votes twice
    full.write_text("party,bill a,bill b,bill c,bill d,bill e,bill f\n"
                    + "".join(f"{line},{line.split(',', 1)[1]}\n" for line in lines[1:]))
    rounds = 6
    host = ("party", "--roster", str(keys / "roster.json"), "--broker", url)
    procs = [await _start(*host, "--dataset", str(short), "--keys", str(keys / "parties-0-4"), "--parties", "0-4",
                          log=tmp_path / "a.log"),
             await _start(*host, "--dataset", str(full), "--keys", str(keys / "parties-5-8"), "--parties", "5-8",
                          log=tmp_path / "b.log")]
    try:
        procs.append(await _start("observe", "--roster", str(keys / "roster.json"), "--keys",
                                  str(keys / "coordinator"), "--rounds", str(rounds), "--function", "passed",
                                  "--broker", url, "--out", str(out), "--wait-parties", scaled_arg(15),
                                  "--round-timeout", "300", log=tmp_path / "observe.log"))
        codes = [await _finish(p, 30) for p in procs]
    finally:
        await _kill_all(procs)
    logs = {name: (tmp_path / f"{name}.log").read_text() for name in ("a", "observe", "b")}
    assert codes == [2, 0, 0], logs
    assert logs["a"].strip().splitlines()[-1] == (
        f"mpdp: error: {short} has 3 rounds (columns), the session announced round 3 (rounds count from 0): parties "
        "0-4 cannot answer it and leave (reported failed to the observer, which records them absent); give the "
        "hosted parties a dataset with a column for every round of the session"), logs["a"]
    # the first of the host's parties to fail names itself: any of 0-4 (they fail in the same turn)
    assert re.search(r"party host 0 \(parties 0-4\) failed: ParameterError: party [0-4] has no bit for round 3: its "
                     r"dataset has 3 rounds \(columns\), 0\.\.2; its parties are absent from now on",
                     logs["observe"]), logs["observe"]
    with TranscriptStore(out / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(rounds))
        got = [store.load_round(session, r) for r in range(rounds)]
    assert [g.status for g in got] == ["complete"] * 3 + ["timeout"] * 3, logs["observe"]
    assert [g.absent.tolist() for g in got] == [[]] * 3 + [[0, 1, 2, 3, 4]] * 3
    bits = load_dataset(str(full)).bits  # epsilon = inf: the symbols are the bits of the parties heard
    for r, g in enumerate(got):
        heard = np.arange(K) if r < 3 else np.arange(5, K)
        voting = heard[bits[heard, r] >= 0]
        assert g.participants.tolist() == voting.tolist() and g.symbols.tolist() == [bits[voting, r].tolist()]
