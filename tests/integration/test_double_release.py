"""Two hosts of the same parties (real processes, a real mosquitto).

* A second `mpdp party` host for parties another live host serves (the keys copied to a second folder, so
  the answer-record note does not stop it) is refused before it answers: exit 2, one line naming the
  parties and the other host (its presence claim, :mod:`mpdp.parties.session.presence`); the first host
  and the observer finish the session, every party answering each round once.
* A host that died does not block its restart: the copy started right after the first host's SIGKILL runs.
* A double release that gets past the hosts (a holder of a party's key signing a second answer to a round)
  is caught by the observer: both signed answers kept, the party named, its privacy charged for both, exit 1.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster
from mpdp.parties.rounds.store import TranscriptStore
from tests.calibration import scaled
from tests.integration.test_deploy import _finish, _start
from tests.integration.test_party_restart import HOSTS, K, published_once, watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

ROUNDS = 3


async def _copy_host(deployment, tmp_path: Path, name: str) -> asyncio.subprocess.Process:  # type: ignore[no-untyped-def]
    """A host of HOSTS["a"]'s parties from a copy of their key files (its own answer record and note)."""
    copy = deployment.keys / f"parties-0-4-{name}"
    if not copy.exists():
        shutil.copytree(deployment.keys / "parties-0-4", copy, ignore=shutil.ignore_patterns("answer*"))
    proc = await _start("party", "--roster", str(deployment.keys / "roster.json"), "--dataset",
                        str(deployment.votes), "--broker", deployment.broker, "--keys", str(copy),
                        "--parties", HOSTS["a"][1], log=tmp_path / f"{name}.log")
    deployment.procs.append(proc)
    return proc


async def test_a_second_live_host_of_the_same_parties_is_refused(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"two-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, ROUNDS) as (deployment, seen):
        first = await deployment.host("a", 1)
        other = await deployment.host("b", 1)
        await asyncio.sleep(scaled(4))  # the first host is claiming its parties
        second = await _copy_host(deployment, tmp_path, "a-copy")
        refused = await _finish(second, 30)
        observer = await deployment.observer(1)
        codes = [await _finish(p, 60) for p in (observer, first, other)]
        await asyncio.sleep(scaled(0.3))
    log = (tmp_path / "a-copy.log").read_text()
    assert refused == 2, deployment.logs()
    lines = log.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mpdp: error: --parties='0-4' is not allowed"), log
    assert re.search(rf"host [0-9a-f]{{16}} \(pid {first.pid} on \S+, serving since \d\d:\d\d:\d\d UTC\) serves "
                     r"parties 0-4", lines[0]), log
    assert codes == [0, 0, 0], deployment.logs()
    published_once(seen, ROUNDS)  # every party answered every round exactly once


async def test_a_dead_host_does_not_block_its_replacement(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"rep-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, ROUNDS) as (deployment, seen):
        first = await deployment.host("a", 1)
        await asyncio.sleep(scaled(4))
        first.kill()
        await first.wait()
        replacement = await _copy_host(deployment, tmp_path, "a-replacement")
        other = await deployment.host("b", 1)
        observer = await deployment.observer(1)
        codes = [await _finish(p, 60) for p in (observer, replacement, other)]
        await asyncio.sleep(scaled(0.3))
    assert codes == [0, 0, 0], deployment.logs()
    published_once(seen, ROUNDS)


async def test_a_second_signed_answer_is_a_double_release(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"dbl-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, ROUNDS) as (deployment, seen):
        facts = read_roster(deployment.keys / "roster.json")
        keys = {p: read_private_key(party_key_path(deployment.keys / "parties-0-4", p), facts, p) for p in (0, 1)}
        hosts = [await deployment.host("a", 1), await deployment.host("b", 1)]
        observer = await deployment.observer(1)
        async with asyncio.timeout(scaled(30)):
            while not {(0, 0), (0, 1)} <= {(m.round, m.party) for m in seen}:
                await asyncio.sleep(0.01)
        topics = Topics(session)
        async with mosquitto.connect(f"mpdp-test-{session}-rogue-{os.getpid()}") as transport:
            for party, key in keys.items():  # a fresh draw: another nonce, maybe another symbol
                rogue = PartyMessage.signed(key, session=session, round=0, party=party, repetitions=1,
                                            symbols=np.array([1], dtype=np.uint8))
                await transport.publish(topics.party(party), rogue.to_wire())
        code = await _finish(observer, 60)
        for host in hosts:
            await _finish(host, 30)
    log = (tmp_path / "observe1.log").read_text()
    assert code == 1, deployment.logs()
    assert "DOUBLE RELEASE: 2 parties sent two different validly signed answers" in log, log
    assert "DOUBLE RELEASE: party 0 sent two different validly signed answers to round 0" in log
    document = json.loads((tmp_path / "out1" / "decisions.json").read_text())
    assert [r["double_released"] for r in document["rounds"]] == [[0, 1], [], []]
    privacy = document["privacy"]
    assert privacy["summary"]["parties_double_released"] == [0, 1]
    assert [p["releases"] for p in privacy["parties"]] == [ROUNDS + 1] * 2 + [ROUNDS] * (K - 2)
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        kept = store.query("SELECT round, party, payload FROM double_releases WHERE session = ? ORDER BY round, party",
                           (session,))
        assert [(r, p) for r, p, _ in kept] == [(0, 0), (0, 1)]
        assert all(bytes(payload) != store.recorded_payload(session, r, p) for r, p, payload in kept)
