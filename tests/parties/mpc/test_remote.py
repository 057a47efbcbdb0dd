"""The coordinator's side of deployed compute servers over a real mosquitto, with stand-in servers that
publish signed reports: ready from every server, a round released only when all m releases verify with
the roster's keys and agree; a missing, silent or disagreeing server fails the round loudly; a replayed,
expired or misplaced report, and a replayed or expired release, are refused with their reason."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mpc_messages import ServerJob, ServerReport
from mpdp.broker.signing import generate_key_pair, sign_message, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Transport
from mpdp.parties.mpc.cluster import agreed_release
from mpdp.parties.mpc.remote import BrokerServers
from mpdp.parties.mpc.server import RoundJob
from mpdp.parties.rounds.session_files import (
    SessionRoster,
    coordinator_key_path,
    read_private_key,
    read_server_keys,
    server_key_path,
    write_session,
)
from mpdp.protocols import RandomizedResponse, WorkerError
from mpdp.protocols.errors import ProtocolViolation
from tests.mqtt_fixtures import take

M = 3

#: How a stand-in server answers a job: its signing key, the job -> the released output (None: silent).
Answer = Callable[[int, bytes, ServerJob], int | None]


def _facts(tmp_path: Path) -> tuple[SessionRoster, bytes, list[bytes]]:
    session = f"remote-{tmp_path.name[-8:].replace('_', '')}"
    facts = write_session(tmp_path, session, [RandomizedResponse(1.0)] * 3,
                          servers=[f"127.0.0.1:{20001 + i}" for i in range(M)], threshold=1)
    coordinator = read_private_key(coordinator_key_path(tmp_path / "coordinator"), facts, None)
    return facts, coordinator, [read_server_keys(server_key_path(tmp_path, i), facts).signing for i in range(M)]


@contextlib.asynccontextmanager
async def _servers(endpoint: BrokerEndpoint, facts: SessionRoster, coordinator_public: bytes,
                   signing: list[bytes], answer: Answer, running: range = range(M)) -> AsyncIterator[None]:
    """Stand-in servers ``running``: ready every 0.1 s; each verified job answered as ``answer`` says."""
    topics = Topics(facts.session)

    async def serve(i: int) -> None:
        async with endpoint.connect(f"mpdp-test-server-{i}") as transport:
            await transport.subscribe(topics.mpc_job(i))

            async def beacon() -> None:
                while True:
                    ready = ServerReport.signed(signing[i], session=facts.session, server=i, kind="ready")
                    await transport.publish(topics.mpc_server(i), ready.model_dump_json())
                    await asyncio.sleep(0.1)

            beat = asyncio.create_task(beacon())
            try:
                async for delivery in transport.deliveries():
                    job = ServerJob.model_validate_json(delivery.payload)
                    assert verify_message(job, coordinator_public) and job.server == i
                    output = answer(i, signing[i], job)
                    if output is None:
                        continue
                    release = CuratorRelease.signed(signing[i], session=facts.session, round=job.round,
                                                    voters=1, outputs=np.array([output], dtype=np.int64))
                    report = ServerReport.signed(signing[i], session=facts.session, server=i, kind="release",
                                                 round=job.round, release=release.model_dump_json(), sent=7)
                    await transport.publish(topics.mpc_server(i), report.model_dump_json())
            finally:
                beat.cancel()

    tasks = [asyncio.create_task(serve(i)) for i in running]
    try:
        await asyncio.sleep(0.3)
        yield
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _jobs(round_index: int) -> list[RoundJob]:
    return [RoundJob(round_index, [0], [["00", "11"]], [0, 1 << 40], 40, 1) for _ in range(M)]


@contextlib.asynccontextmanager
async def _coordinator(endpoint: BrokerEndpoint, facts: SessionRoster, coordinator: bytes, *, deadline: float,
                       wait: float) -> AsyncIterator[tuple[BrokerServers, collections.Counter[str]]]:
    """The servers' side on one connection, routed as the round engine routes it: every delivery on
    its filters to :meth:`BrokerServers.receive`, each refusal counted by reason."""
    assert facts.servers is not None
    cluster = BrokerServers(facts.session, facts.servers, coordinator, deadline=deadline, wait_servers=wait)
    refused: collections.Counter[str] = collections.Counter()

    async def route(transport: Transport) -> None:
        async for delivery in transport.deliveries():
            try:
                cluster.receive(delivery.topic, delivery.payload.decode())
            except ProtocolViolation as exc:
                refused[exc.reason] += 1

    async with endpoint.connect(f"mpdp-{facts.session}-mpc") as transport:
        await transport.subscribe(*cluster.filters)
        cluster.attach(transport.publish)
        reader = asyncio.create_task(route(transport))
        try:
            yield cluster, refused
        finally:
            reader.cancel()
            cluster.close()


async def test_a_round_released_by_every_server(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    facts, coordinator, signing = _facts(tmp_path)
    assert facts.servers is not None
    async with _servers(mosquitto, facts, facts.coordinator_public_key, signing, lambda i, key, job: 1), \
            _coordinator(mosquitto, facts, coordinator, deadline=5, wait=5) as (cluster, refused):
        with pytest.raises(WorkerError, match="not ready"):
            cluster.start()
        await cluster.wait_ready()
        outputs, texts = await cluster.run_round(_jobs(4))
    assert outputs.tolist() == [1] and len(texts) == M and not refused
    assert [c.sent for c in cluster.last_costs] == [7] * M
    for i, text in enumerate(texts):
        release = CuratorRelease.model_validate_json(text)
        assert release.round == 4 and verify_message(release, facts.servers.signing_keys[i])


@pytest.mark.parametrize(("running", "answer", "error"), [
    (range(2), lambda i, key, job: 1, r"mpc servers \[2\] did not report ready"),
    (range(M), lambda i, key, job: None if i == 1 else 1, r"mpc servers \[1\] did not release round 4"),
    (range(M), lambda i, key, job: i % 2, "opened different releases"),
])
async def test_missing_silent_or_disagreeing_servers_fail_the_round(
        mosquitto: BrokerEndpoint, tmp_path: Path, running: range, answer: Answer, error: str) -> None:
    facts, coordinator, signing = _facts(tmp_path)
    assert facts.servers is not None
    async with _servers(mosquitto, facts, facts.coordinator_public_key, signing, answer, running), \
            _coordinator(mosquitto, facts, coordinator, deadline=1, wait=1) as (cluster, _):
        with pytest.raises(WorkerError, match=error):
            await cluster.wait_ready()
            await cluster.run_round(_jobs(4))


async def test_the_wait_for_servers_says_what_it_waits_for_and_its_progress(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """One line at once, then one every ``every`` seconds naming the missing server, until the wait fails
    naming it: 2 of 3 servers running, a 1.2 s wait, lines every 0.25 s (>= 2 progress lines under any load:
    the loop wakes at each line's time or later; the last line comes before the deadline)."""
    facts, coordinator, signing = _facts(tmp_path)
    lines: list[str] = []
    async with _servers(mosquitto, facts, facts.coordinator_public_key, signing, lambda i, key, job: 1, range(2)), \
            _coordinator(mosquitto, facts, coordinator, deadline=1, wait=1.2) as (cluster, _):
        with pytest.raises(WorkerError, match=r"mpc servers \[2\] did not report ready within 1.2 s"):
            await cluster.wait_ready(lines.append, every=0.25)
    assert lines[0] == "waiting up to 1.2 s for the ready reports of 3 mpc servers (`mpdp mpc-server`, one for each)"
    progress = lines[1:]
    assert 1 <= len(progress) <= 4, lines
    assert all(line.startswith("2 of 3 mpc servers ready after ") and line.endswith(
        " s (missing [2]; waiting up to 1.2 s)") for line in progress), lines


async def test_no_line_when_every_server_is_ready(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    facts, coordinator, signing = _facts(tmp_path)
    lines: list[str] = []
    async with _servers(mosquitto, facts, facts.coordinator_public_key, signing, lambda i, key, job: 1), \
            _coordinator(mosquitto, facts, coordinator, deadline=5, wait=30) as (cluster, _):
        await cluster.wait_ready(lines.append, every=0.25)
        lines.clear()
        await cluster.wait_ready(lines.append, every=0.25)  # every server ready already: nothing to say
    assert lines == []


def _stale(message: ServerReport | CuratorRelease, key: bytes) -> ServerReport | CuratorRelease:
    """``message`` expired 1 s ago, signed again with ``key`` (authentic but stale)."""
    return sign_message(message.model_copy(update={"expires_ms": int((time.time() - 1) * 1000)}), key)


async def test_replayed_expired_or_misplaced_reports_are_refused_with_their_reason(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    facts, coordinator, signing = _facts(tmp_path)
    assert facts.servers is not None
    topics = Topics(facts.session)
    async with _servers(mosquitto, facts, facts.coordinator_public_key, signing, lambda i, key, job: 1), \
            _coordinator(mosquitto, facts, coordinator, deadline=5, wait=5) as (cluster, refused):
        await cluster.wait_ready()
        async with mosquitto.connect("mpdp-test-capture") as capture:
            await capture.subscribe(topics.all_mpc_servers)
            await cluster.run_round(_jobs(4))
            captured = next(ServerReport.model_validate_json(d.payload) for d in await take(capture, 40)
                            if ServerReport.model_validate_json(d.payload).kind == "release")
            release = ServerReport.signed(signing[0], session=facts.session, server=0, kind="release", round=5,
                                          release=captured.release)
            assert not refused
            for topic, message in ((topics.mpc_server(captured.server), captured),  # replayed
                                   (topics.mpc_server(1), release),  # server 0's report on server 1's topic
                                   (topics.mpc_server(2), _stale(ServerReport.signed(
                                       signing[2], session=facts.session, server=2, kind="ready"), signing[2]))):
                await capture.publish(topic, message.model_dump_json())
        async with asyncio.timeout(5):
            while refused.total() < 3:
                await asyncio.sleep(0.05)
    assert refused == {"replay": 1, "topic": 1, "expired": 1}


def test_a_replayed_or_expired_release_is_refused() -> None:
    """agreed_release, the check both the simulation's cluster and the deployed coordinator use."""
    key, public = generate_key_pair()
    release = CuratorRelease.signed(key, session="s", round=3, voters=2, outputs=np.array([1], dtype=np.int64))
    fresh = FreshnessGuard()
    text = release.model_dump_json()
    assert agreed_release({0: text}, [public], CuratorRelease, session="s", round=3, fresh=fresh).tolist() == [1]
    with pytest.raises(WorkerError, match=r"refused \(replay\)"):
        agreed_release({0: text}, [public], CuratorRelease, session="s", round=3, fresh=fresh)
    stale = _stale(CuratorRelease.signed(key, session="s", round=3, voters=2, outputs=np.array([1])), key)
    with pytest.raises(WorkerError, match=r"refused \(expired\)"):
        agreed_release({0: stale.model_dump_json()}, [public], CuratorRelease, session="s", round=3,
                       fresh=FreshnessGuard())
    with pytest.raises(WorkerError, match="round 2 for round 3"):
        agreed_release({0: CuratorRelease.signed(key, session="s", round=2, voters=2, outputs=np.array([1]))
                        .model_dump_json()}, [public], CuratorRelease, session="s", round=3, fresh=FreshnessGuard())
