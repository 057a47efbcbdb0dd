"""Party-enforced privacy with real processes (`mpdp keys`, two `mpdp party` hosts, `mpdp observe`, a real
mosquitto): every host and the observer are SIGKILLed mid-session and restarted; the new observer re-announces
every round, and the hosts answer from their SQLite records. No party ever publishes two different answers
for one round, and each party's recorded ledger is exactly its distinct answers with symbols. Default
parties (--max-repetitions 1) answer `mpdp observe --repetitions 500` with `policy` abstentions only: no round
is decided from nothing (``no-answers``) and the observer exits 1."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import defaultdict
from collections.abc import AsyncIterator
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.store import TranscriptStore
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _finish, _kill_all, _start

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

K, R = 9, 40
HOSTS = {"a": (0, "0-4"), "b": (5, "5-8")}


def _votes(path: Path, rounds: int) -> None:
    bits = np.random.default_rng(9).integers(0, 2, size=(K, rounds))
    lines = ["party," + ",".join(f"bill {r}" for r in range(rounds))]
    lines += [f"p{i}," + ",".join(str(b) for b in row) for i, row in enumerate(bits)]
    path.write_text("\n".join(lines) + "\n")


async def _watch(endpoint: BrokerEndpoint, session: str, seen: list[PartyMessage], subscribed: asyncio.Event) -> None:
    """Every message published on the session's party topics, in order (``subscribed`` set once subscribed)."""
    topics = Topics(session)
    async with endpoint.connect(f"test-{session}-wire") as transport:
        await transport.subscribe(topics.all_parties)
        subscribed.set()
        async for delivery in transport.deliveries():
            seen.append(PartyMessage.from_wire(delivery.payload))


def published_once(seen: list[PartyMessage], rounds: int) -> dict[tuple[int, int], str]:
    """(round, party) -> the one message published for it; asserts every slot of ``rounds`` x K was
    answered and no party ever published two different answers for one round."""
    published: dict[tuple[int, int], set[str]] = defaultdict(set)
    for message in seen:
        published[message.round, message.party].add(message.model_dump_json())
    assert sorted(published) == [(r, p) for r in range(rounds) for p in range(K)]
    assert all(len(texts) == 1 for texts in published.values()), "a party published two different answers"
    return {key: next(iter(texts)) for key, texts in published.items()}


class _Deployment:
    def __init__(self, broker: str, tmp_path: Path, session: str, rounds: int) -> None:
        self.broker, self.tmp, self.session = broker, tmp_path, session
        self.keys, self.votes = tmp_path / "keys", tmp_path / "votes.csv"
        _votes(self.votes, rounds)
        self.procs: list[asyncio.subprocess.Process] = []

    async def keys_made(self) -> None:
        self.procs.append(await _start("keys", "--parties", str(K), "--epsilon", "1.0", "--split", "0-4",
                                       "--split", "5-8", "--session", self.session, "--out", str(self.keys),
                                       log=self.tmp / "keys.log"))
        assert await _finish(self.procs[-1], 15) == 0, (self.tmp / "keys.log").read_text()

    async def host(self, name: str, run: int, *extra: str) -> asyncio.subprocess.Process:
        _, parties = HOSTS[name]
        proc = await _start("party", "--roster", str(self.keys / "roster.json"), "--dataset", str(self.votes),
                            "--broker", self.broker, "--keys", str(self.keys / f"parties-{parties}"),
                            "--parties", parties, *extra, log=self.tmp / f"{name}{run}.log")
        self.procs.append(proc)
        return proc

    async def observer(self, run: int, *extra: str) -> asyncio.subprocess.Process:
        proc = await _start("observe", "--roster", str(self.keys / "roster.json"), "--keys",
                            str(self.keys / "coordinator"), "--dataset-rounds", str(self.votes), "--function",
                            "passed", "--broker", self.broker, "--out", str(self.tmp / f"out{run}"),
                            "--wait-parties", scaled_arg(20),
                            *(() if "--round-timeout" in extra else ("--round-timeout", scaled_arg(10))), *extra,
                            log=self.tmp / f"observe{run}.log")
        self.procs.append(proc)
        return proc

    def record(self, name: str) -> AnswerRecord:
        first, parties = HOSTS[name]
        return AnswerRecord(self.keys / f"parties-{parties}" / f"answers-{first}.sqlite")

    def logs(self) -> dict[str, str]:
        return {p.name: p.read_text() for p in self.tmp.glob("*.log")}


@contextlib.asynccontextmanager
async def watched_deployment(mosquitto: BrokerEndpoint, tmp_path: Path, session: str, rounds: int
                             ) -> AsyncIterator[tuple[_Deployment, list[PartyMessage]]]:
    """A deployment with its keys made, and every party message published (filled as they come); on exit
    the watcher stops and every process is killed."""
    deployment = _Deployment(f"mqtt://127.0.0.1:{mosquitto.port}", tmp_path, session, rounds)
    seen: list[PartyMessage] = []
    subscribed = asyncio.Event()
    watcher = asyncio.create_task(_watch(mosquitto, session, seen, subscribed))
    try:
        await deployment.keys_made()
        async with asyncio.timeout(scaled(10)):
            await subscribed.wait()
        yield deployment, seen
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        await _kill_all(deployment.procs)


async def test_hosts_and_observer_restarted_mid_session_never_answer_twice(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"rst-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, R) as (deployment, seen):
        first_run = [await deployment.host("a", 1), await deployment.host("b", 1), await deployment.observer(1)]
        async with asyncio.timeout(scaled(30)):
            while len(seen) < 3 * K:  # at least three rounds answered
                await asyncio.sleep(0.01)
        for proc in first_run:  # SIGKILL mid-session: hosts and observer
            proc.kill()
            await proc.wait()
        killed_at = len({(m.round, m.party) for m in seen})
        assert first_run[2].returncode != 0 and killed_at < K * R, "the session ended before the kill"
        second_run = [await deployment.host("a", 2), await deployment.host("b", 2), await deployment.observer(2)]
        codes = [await _finish(proc, 60) for proc in second_run]
        await asyncio.sleep(scaled(0.3))  # the last re-sends reach the watcher
    assert codes == [0, 0, 0], deployment.logs()

    published = published_once(seen, R)
    assert len(seen) >= K * R + killed_at  # every round answered before the kill was answered again

    answers = {key: PartyMessage.from_wire(text) for key, text in published.items()}
    with TranscriptStore(tmp_path / "out2" / "transcripts.sqlite") as store:
        assert store.recorded_rounds(session) == list(range(R))
        stored = {(m["round"], m["party"]): m["payload"] for m in store.messages(session)}
        assert all(store.load_round(session, r).status == "complete" for r in range(R))
    assert {key: PartyMessage.from_wire(text) for key, text in stored.items()} == answers
    for name, (first, _parties) in HOSTS.items():
        hosted = range(first, first + (5 if name == "a" else 4))
        with deployment.record(name) as record:
            for party in hosted:
                released = sorted(r for (r, p), m in answers.items() if p == party and m.kind == "symbols")
                assert record.ledger(session, party, 1e-6).rounds == tuple(released) and len(released) == R
                assert {r: PartyMessage.from_wire(t) for r, t in record.answers(session, party).items()} \
                    == {r: m for (r, p), m in answers.items() if p == party}
    decisions = json.loads((tmp_path / "out2" / "decisions.json").read_text())
    assert len(decisions["rounds"]) == R
    # each party's spent privacy: R releases of (1.0, 0)-RR; basic = R, the exact optimum is below it
    for entry in decisions["privacy"]["parties"]:
        assert (entry["rounds_answered"], entry["epsilon_basic"], entry["delta_basic"]) == (R, R * 1.0, 0.0)
        assert 0 < entry["epsilon_optimal"] < R and entry["method"] == "exact"


async def test_default_parties_refuse_500_repetitions_with_policy_abstentions(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"pol-{tmp_path.name[-10:].replace('_', '')}"
    deployment = _Deployment(f"mqtt://127.0.0.1:{mosquitto.port}", tmp_path, session, 2)
    try:
        await deployment.keys_made()
        procs = [await deployment.host("a", 1), await deployment.host("b", 1),
                 await deployment.observer(1, "--repetitions", "500")]
        codes = [await _finish(proc, 40) for proc in procs]
    finally:
        await _kill_all(deployment.procs)
    assert codes == [0, 0, 1], deployment.logs()  # the observer: no round decided from nothing
    assert ("mpdp: warning: 2 of 2 round(s) had no answer to decide from: every party heard from abstained"
            in (tmp_path / "observe1.log").read_text()), deployment.logs()
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        messages = list(store.messages(session))
        assert len(messages) == 2 * K
        assert {(m["kind"], m["reason"]) for m in messages} == {("abstain", "policy")}
        for r in range(2):
            got = store.load_round(session, r)
            assert got.participants.size == 0 and got.abstained.tolist() == list(range(K))
            assert got.status == "no-answers" and got.decisions.tolist() == [-1] * 500
    document = json.loads((tmp_path / "out1" / "decisions.json").read_text())
    assert [(r["status"], r["reasons"]) for r in document["rounds"]] == [("no-answers", {"policy": list(range(K))})] * 2
    privacy = document["privacy"]
    assert {(e["rounds_answered"], e["epsilon_optimal"], e["epsilon_basic"]) for e in privacy["parties"]} == {(0, 0.0, 0.0)}
    for name in HOSTS:
        with deployment.record(name) as record:
            assert all(record.ledger(session, p, 1e-6).rounds == () for p in range(K))
