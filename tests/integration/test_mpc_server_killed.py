"""A compute server SIGKILLed mid-session (real processes: a real mosquitto, three `mpdp mpc-server` with MPyC
over TCP, two `mpdp party` hosts, `mpdp observe`): the other two servers stop within 10 s (each publishes a
signed ``failed`` report naming the dead server and exits with one line, no traceback), the observer exits
non-zero naming the dead server, the party hosts leave once the observer is silent for their grace, and no
process is left."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.rounds.session_files import server_key_path
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _finish, _kill_all, _start
from tests.integration.test_mpc_deploy import M, _gone, _keys

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]

ROUNDS, DEAD = 12, 1


def _votes(path: Path) -> None:
    bits = np.random.default_rng(5).integers(0, 2, size=(9, ROUNDS))
    lines = ["party," + ",".join(f"bill {r}" for r in range(ROUNDS))]
    path.write_text("\n".join(lines + [f"p{i}," + ",".join(map(str, row)) for i, row in enumerate(bits)]) + "\n")


async def test_a_killed_server_stops_its_peers_and_the_observer_names_it(mosquitto: BrokerEndpoint,
                                                                          tmp_path: Path) -> None:
    session = f"mpckill-{tmp_path.name[-10:].replace('_', '')}"
    keys = await _keys(tmp_path, session)
    votes, out = tmp_path / "votes.csv", tmp_path / "out"
    _votes(votes)
    broker = ("--broker", f"mqtt://127.0.0.1:{mosquitto.port}")
    roster = ("--roster", str(keys / "roster.json"))
    procs: list[asyncio.subprocess.Process] = []
    try:
        servers = [await _start("mpc-server", *roster, "--keys", str(server_key_path(keys, i)), *broker,
                                "--idle-timeout", "3600", log=tmp_path / f"server{i}.log") for i in range(M)]
        procs += servers
        for first, parties in ((0, "0-4"), (5, "5-8")):
            procs.append(await _start("party", *roster, "--dataset", str(votes), *broker, "--keys",
                                      str(keys / f"parties-{parties}"), "--parties", parties,
                                      "--observer-grace", scaled_arg(10), log=tmp_path / f"host{first}.log"))
        observer = await _start("observe", *roster, "--keys", str(keys / "coordinator"), "--dataset-rounds",
                                str(votes), "--function", "passed", *broker, "--out", str(out), "--wait-parties",
                                scaled_arg(30), "--round-timeout", scaled_arg(20), log=tmp_path / "observe.log")
        procs.append(observer)
        async with asyncio.timeout(scaled(90)):  # until two rounds are recorded
            while not (out / "transcripts.sqlite").exists() or len(_recorded(out, session)) < 2:
                await asyncio.sleep(0.2)
        servers[DEAD].kill()
        killed = time.monotonic()
        peers = [servers[i] for i in range(M) if i != DEAD]
        peer_codes = [await _finish(p, 10) for p in peers]  # within 10 s of the kill (scaled on a busy machine)
        stopped = time.monotonic() - killed
        observer_code = await _finish(observer, 60)
        host_codes = [await _finish(p, 60) for p in procs[M:M + 2]]
    finally:
        await _kill_all(procs)
    logs = {p.name: p.read_text() for p in tmp_path.glob("*.log")}
    assert stopped < scaled(10), (stopped, logs)
    assert all(code not in (0, None) for code in peer_codes), logs
    for i in (i for i in range(M) if i != DEAD):
        log = logs[f"server{i}.log"]
        assert "Traceback" not in log and "ConnectionResetError" not in log, log
        assert f"mpdp: error: mpc server {i}: mpc server {DEAD} went away" in log, log
    assert observer_code not in (0, None), logs
    observe = logs["observe.log"]
    assert "Traceback" not in observe
    assert f"mpc server {DEAD} went away" in observe, observe
    assert all(code is not None for code in host_codes)
    for first in (0, 5):  # the observer's failed end, not their --observer-grace, ended them (issue 22)
        assert "the observer failed and ended the session (" in logs[f"host{first}.log"], logs[f"host{first}.log"]
    assert all(_gone(p.pid) for p in procs)
    assert len(_recorded(out, session)) < ROUNDS


def _recorded(out: Path, session: str) -> list[int]:
    try:
        with MpcStore(out / "transcripts.sqlite") as store:
            return store.recorded_rounds(session)
    except Exception:  # the observer is creating the file
        return []
