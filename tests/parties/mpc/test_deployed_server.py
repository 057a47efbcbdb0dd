"""A deployed compute server's broker side (the in-memory transport; the MPyC computation replaced by a
counting stand-in): signed ready reports, one release per round, the same release (freshly signed) for a
job sent again and never a second computation, jobs not signed by the roster's coordinator ignored, a
replayed or expired job or end refused and counted by reason, exit at the coordinator's signed end."""

from __future__ import annotations

import asyncio
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.mpc_messages import MpcAnnouncement, ServerJob, ServerReport
from mpdp.broker.signing import generate_key_pair, sign_message, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, InMemoryBroker, Transport, next_delivery
from mpdp.parties.mpc.deployed_server import DeployedServerConfig, JobHandler, mpyc_arguments
from mpdp.parties.mpc.sealed_shares import ShareSealer
from mpdp.parties.mpc.server import RoundJob
from mpdp.parties.rounds.session_files import (
    coordinator_key_path,
    party_key_path,
    read_private_key,
    read_server_keys,
    server_key_path,
    write_session,
)
from mpdp.protocols import RandomizedResponse
from tests.mqtt_fixtures import take

SESSION = "mpc-deployed"


def _job(round_index: int, parties: list[int]) -> str:
    return RoundJob(round_index, parties, [["00", "11"]] * len(parties), [0] * len(parties) + [1 << 40], 40,
                    1).to_line()


async def _next_report(transport: Transport) -> ServerReport | None:
    try:
        async with asyncio.timeout(0.3):
            async for delivery in transport.deliveries():
                report = ServerReport.model_validate_json(delivery.payload)
                if report.kind == "release":
                    return report
    except TimeoutError:
        return None
    return None


async def test_one_release_per_round_and_only_the_coordinators_jobs(tmp_path: Path) -> None:
    addresses = ["127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"]
    facts = write_session(tmp_path, SESSION, [RandomizedResponse(1.0)] * 3, servers=addresses, threshold=1)
    assert facts.servers is not None
    coordinator = read_private_key(coordinator_key_path(tmp_path / "coordinator"), facts, None)
    keys = read_server_keys(server_key_path(tmp_path, 1), facts)
    broker = InMemoryBroker()
    config = DeployedServerConfig(facts=facts, keys=keys, endpoint=broker, idle_timeout=5.0, ready_interval=0.05)
    assert mpyc_arguments(config) == ["-P", addresses[0], "-P", addresses[1], "-P", addresses[2], "-I", "1",
                                      "-T", "1", "--no-log"]
    computed: list[RoundJob] = []

    async def serve_job(job: RoundJob) -> dict[str, Any]:
        computed.append(job)
        release = CuratorRelease.signed(keys.signing, session=SESSION, round=job.round, voters=len(job.parties),
                                        outputs=np.array([1], dtype=np.int64))
        return {"release": release.model_dump_json(), "sent": 123, "cpu": 0.5}

    topics = Topics(SESSION)

    def job_message(text: str, signer: bytes = coordinator, server: int = 1) -> str:
        return ServerJob.signed(signer, session=SESSION, round=RoundJob.from_line(text).round, repetitions=1,
                                server=server, job=text).model_dump_json()

    async with broker.connect("coordinator") as transport:
        await transport.subscribe(topics.mpc_server(1))
        handler = asyncio.create_task(JobHandler(config, serve_job).run())
        async with asyncio.timeout(2):
            async for delivery in transport.deliveries():
                ready = ServerReport.model_validate_json(delivery.payload)
                assert (ready.kind, ready.server) == ("ready", 1)
                assert verify_message(ready, facts.servers.signing_keys[1])
                break
        first = _job(0, [0, 2])
        await transport.publish(topics.mpc_job(1), job_message(first))
        report = await _next_report(transport)
        assert report is not None and (report.round, report.server, report.sent, report.cpu) == (0, 1, 123, 0.5)
        assert verify_message(report, facts.servers.signing_keys[1])
        # the same job again, freshly signed (a restarted coordinator): the same release, re-signed with a
        # fresh stamp; nothing computed again
        await transport.publish(topics.mpc_job(1), job_message(first))
        again = await _next_report(transport)
        assert again is not None and again.sequence > report.sequence
        before, after = (CuratorRelease.model_validate_json(r.release) for r in (report, again))
        assert after.output_array().tolist() == before.output_array().tolist() and after.voters == before.voters
        assert after.sequence > before.sequence and verify_message(after, facts.servers.signing_keys[1])
        # a different job for the released round, a job signed by someone else, another server's job: ignored
        await transport.publish(topics.mpc_job(1), job_message(_job(0, [0, 1, 2])))
        await transport.publish(topics.mpc_job(1), job_message(_job(1, [0]), signer=generate_key_pair()[0]))
        await transport.publish(topics.mpc_job(1), job_message(_job(1, [0]), server=2))
        assert await _next_report(transport) is None
        assert [job.round for job in computed] == [0]
        # an end signed by someone else does not stop the server (it serves round 1); the coordinator's does
        forged = MpcAnnouncement.signed(generate_key_pair()[0], session=SESSION, kind="end", round=1, repetitions=1)
        await transport.publish(topics.rounds, forged.model_dump_json())
        await transport.publish(topics.mpc_job(1), job_message(_job(1, [1])))
        second = await _next_report(transport)
        assert second is not None and second.round == 1 and [job.round for job in computed] == [0, 1]
        end = MpcAnnouncement.signed(coordinator, session=SESSION, kind="end", round=2, repetitions=1)
        await transport.publish(topics.rounds, end.model_dump_json())
        async with asyncio.timeout(2):
            assert await handler == 2


def _expired(message: ServerJob | MpcAnnouncement, signer: bytes) -> bytes:
    """``message`` with an expiry 1 s in the past, signed again by ``signer`` (an authentic, stale message)."""
    stale = message.model_copy(update={"expires_ms": int((time.time() - 1) * 1000)})
    return sign_message(stale, signer).model_dump_json().encode()


def _server_zero(tmp_path: Path, session: str, endpoint: Connector) -> tuple[bytes, JobHandler, list[int]]:
    """Server 0 of a fresh 3-server session, its computation a stand-in releasing 1: (the coordinator's
    private key, the handler, the rounds computed so far)."""
    facts = write_session(tmp_path, session, [RandomizedResponse(1.0)] * 3,
                          servers=["127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"], threshold=1)
    coordinator = read_private_key(coordinator_key_path(tmp_path / "coordinator"), facts, None)
    keys = read_server_keys(server_key_path(tmp_path, 0), facts)
    config = DeployedServerConfig(facts=facts, keys=keys, endpoint=endpoint, idle_timeout=20.0, ready_interval=0.05)
    computed: list[int] = []

    async def serve_job(job: RoundJob) -> dict[str, Any]:
        computed.append(job.round)
        release = CuratorRelease.signed(keys.signing, session=session, round=job.round, voters=len(job.parties),
                                        outputs=np.array([1], dtype=np.int64))
        return {"release": release.model_dump_json(), "sent": 1, "cpu": 0.0}

    return coordinator, JobHandler(config, serve_job), computed


async def test_replayed_or_expired_jobs_and_ends_are_refused_and_counted(tmp_path: Path) -> None:
    coordinator, handler, computed = _server_zero(tmp_path, SESSION, InMemoryBroker())

    def job(round_index: int) -> ServerJob:
        return ServerJob.signed(coordinator, session=SESSION, round=round_index, repetitions=1, server=0,
                                job=_job(round_index, [0, 1]))

    def end() -> MpcAnnouncement:
        return MpcAnnouncement.signed(coordinator, session=SESSION, kind="end", round=2, repetitions=1)

    captured_end = end()  # signed before the jobs: its sequence is below theirs
    first = job(0).model_dump_json().encode()
    assert await handler.job(first) is not None and computed == [0]
    assert await handler.job(first) is None  # the captured job sent again, byte for byte
    assert await handler.job(_expired(job(1), coordinator)) is None
    assert computed == [0] and dict(handler.rejections.counts) == {"replay": 1, "expired": 1}
    assert not handler.is_end(captured_end.model_dump_json().encode())
    assert not handler.is_end(_expired(end(), coordinator))
    heartbeat = MpcAnnouncement.signed(coordinator, session=SESSION, kind="heartbeat", round=1, repetitions=1)
    assert not handler.is_end(heartbeat.model_dump_json().encode())  # not for the server: not counted
    assert dict(handler.rejections.counts) == {"replay": 2, "expired": 2}
    fresh = end().model_dump_json().encode()
    assert handler.is_end(fresh) and not handler.is_end(fresh)  # the same end again is a replay
    assert await handler.job(job(1).model_dump_json().encode()) is not None and computed == [0, 1]
    assert dict(handler.rejections.counts) == {"replay": 3, "expired": 2}


async def _counted(handler: JobHandler, expected: dict[str, int]) -> None:
    """Wait (5 s at most) until the server has refused exactly ``expected`` (reason -> count)."""
    async with asyncio.timeout(5):
        while dict(handler.rejections.counts) != expected:
            await asyncio.sleep(0.02)


async def test_over_mosquitto_a_replayed_job_or_end_changes_nothing(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """The server on a real broker: a captured job or end published again, or an expired one, gets no
    release and does not stop it (refused, counted by reason); the fresh end does."""
    session = f"mpcfresh-{tmp_path.name[-8:].replace('_', '')}"
    coordinator, handler, computed = _server_zero(tmp_path, session, mosquitto)
    topics = Topics(session)
    end = partial(MpcAnnouncement.signed, coordinator, session=session, kind="end", round=1, repetitions=1)
    captured_end = end()  # signed before the job: its sequence is below the job's
    job = ServerJob.signed(coordinator, session=session, round=0, repetitions=1, server=0, job=_job(0, [0, 1]))
    async with mosquitto.connect("mpdp-test-coordinator") as transport:
        await transport.subscribe(topics.mpc_server(0))
        serving = asyncio.create_task(handler.run())
        try:
            assert ServerReport.model_validate_json((await take(transport, 1))[0].payload).kind == "ready"
            await transport.publish(topics.mpc_job(0), job.model_dump_json())
            assert (report := await _next_report(transport)) is not None and report.round == 0
            await transport.publish(topics.mpc_job(0), job.model_dump_json())  # the captured job again
            later = ServerJob.signed(coordinator, session=session, round=1, repetitions=1, server=0, job=_job(1, [0]))
            await transport.publish(topics.mpc_job(0), _expired(later, coordinator))
            await transport.publish(topics.rounds, captured_end.model_dump_json())  # older than the job
            await transport.publish(topics.rounds, _expired(end(), coordinator))
            await _counted(handler, {"replay": 2, "expired": 2})
            assert await _next_report(transport) is None and not serving.done() and computed == [0]
            await transport.publish(topics.rounds, end().model_dump_json())
            async with asyncio.timeout(5):
                assert await serving == 1
        finally:
            serving.cancel()


async def test_a_hosts_signed_ready_has_the_server_derive_its_keys_ahead_and_nothing_forged_counts(
        tmp_path: Path) -> None:
    """A host's "ready" listing its parties' sealing keys: derived once when every listed party signed it with
    its roster key (its beacon's repeats derive nothing again), a restarted host's newer keys derived too; a key
    swapped after signing, a stranger's signature, another session's, a party beyond the roster, not a report,
    or the first report replayed after the newer one derive nothing and are counted by reason; reports without
    keys are not for the server (not counted)."""
    facts = write_session(tmp_path, SESSION, [RandomizedResponse(1.0)] * 3,
                          servers=["127.0.0.1:20001", "127.0.0.1:20002", "127.0.0.1:20003"], threshold=1)
    party_keys = [read_private_key(party_key_path(tmp_path / "parties", p), facts, p) for p in range(3)]
    keys = read_server_keys(server_key_path(tmp_path, 0), facts)
    derived: list[tuple[int, bytes]] = []
    config = DeployedServerConfig(facts=facts, keys=keys, endpoint=InMemoryBroker(), idle_timeout=20.0)
    handler = JobHandler(config, _never, expect=lambda party, key: derived.append((party, key)) is None)
    sealing = [ShareSealer().public_key for _ in range(3)]

    def ready(signers: list[bytes], session: str = SESSION, parties: tuple[int, ...] = (0, 1),
              sealing_keys: list[bytes] | None = None) -> WorkerStatus:
        return WorkerStatus.signed(signers, session=session, worker=0, state="ready", parties=parties,
                                   sealing_keys=sealing[:2] if sealing_keys is None else sealing_keys)

    genuine = ready(party_keys[:2])
    swapped = genuine.model_copy(update={"sealing_keys": genuine.sealing_keys[::-1]})
    stranger = ready([party_keys[0], generate_key_pair()[0]], sealing_keys=sealing[1:])
    beyond = ready(party_keys[:2] + [party_keys[0]], parties=(0, 1, 3), sealing_keys=sealing)
    for report in (swapped, stranger, ready(party_keys[:2], session="other"), beyond):
        assert handler.ready(report.model_dump_json().encode()) == 0
    assert handler.ready(b"{}") == 0 and derived == []
    assert handler.ready(genuine.model_dump_json().encode()) == 2
    assert derived == [(0, sealing[0]), (1, sealing[1])]
    repeat = ready(party_keys[:2])  # the beacon's: freshly signed, the same keys
    assert handler.ready(repeat.model_dump_json().encode()) == 0
    without = WorkerStatus.signed(party_keys[:2], session=SESSION, worker=0, state="ready", parties=(0, 1))
    assert handler.ready(without.model_dump_json().encode()) == 0
    # the keys taken already, whoever signed: nothing to derive, nothing checked or counted
    assert handler.ready(stranger.model_copy(update={"sealing_keys": genuine.sealing_keys}).model_dump_json()
                         .encode()) == 0
    newer = ready(party_keys[:2], sealing_keys=[sealing[2], sealing[0]])  # a restarted host's new keys
    assert handler.ready(newer.model_dump_json().encode()) == 2 and derived[2:] == [(0, sealing[2]), (1, sealing[0])]
    assert handler.ready(genuine.model_dump_json().encode()) == 0 and len(derived) == 4  # replayed: older
    assert dict(handler.rejections.counts) == {"signature": 2, "session": 1, "unknown-party": 1, "schema": 1,
                                               "replay": 1}


async def _never(job: RoundJob) -> dict[str, Any]:
    raise AssertionError("no job in this test")


async def test_the_ready_repeats_by_the_clock_whatever_else_arrives(tmp_path: Path) -> None:
    """Hosts' status reports and heartbeats arriving faster than the ready interval (here every 10 ms, the
    interval 50 ms) do not starve the server's repeated "ready": a killed-server test waited minutes for it,
    the hosts' ready beacons arriving more often than the server's interval. Over 0.6 s at least 6 readies
    arrive (12 by the clock; half that leaves room for a busy machine) and none is missing for 5 intervals."""
    coordinator, _, _ = _server_zero(tmp_path, SESSION, InMemoryBroker())
    broker = InMemoryBroker()
    _, handler, _ = _server_zero(tmp_path / "again", SESSION, broker)
    topics = Topics(SESSION)
    heartbeat = MpcAnnouncement.signed(coordinator, session=SESSION, kind="heartbeat", round=0, repetitions=1)
    arrivals: list[float] = []
    async with broker.connect("coordinator") as transport:
        await transport.subscribe(topics.mpc_server(0))
        serving = asyncio.create_task(handler.run())
        loop = asyncio.get_running_loop()
        begin = loop.time()
        while loop.time() - begin < 0.6:
            await transport.publish(topics.status, b"{}")
            await transport.publish(topics.heartbeat, heartbeat.model_dump_json())
            await asyncio.sleep(0.01)
            while (delivery := await next_delivery(transport, 0.0)) is not None:
                assert ServerReport.model_validate_json(delivery.payload).kind == "ready"
                arrivals.append(loop.time())
        serving.cancel()
    assert len(arrivals) >= 6 and max(b - a for a, b in zip(arrivals, arrivals[1:])) < 0.25
