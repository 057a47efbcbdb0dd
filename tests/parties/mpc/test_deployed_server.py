"""A deployed compute server's broker side (the in-memory transport; the MPyC computation replaced by a
counting stand-in): signed ready reports, one release per round, the same signed report for a job sent
again and never a second computation, jobs not signed by the roster's coordinator ignored, exit at the
coordinator's signed end."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import numpy as np

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.mpc_messages import MpcAnnouncement, ServerJob, ServerReport
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, Transport
from mpdp.parties.mpc.deployed_server import DeployedServerConfig, JobHandler, mpyc_arguments
from mpdp.parties.mpc.server import RoundJob
from mpdp.parties.session.files import (
    coordinator_key_path,
    read_private_key,
    read_server_keys,
    server_key_path,
    write_session,
)
from mpdp.protocols import RandomizedResponse

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
        await transport.subscribe(topics.mpc_servers)
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
        # the same job again: the same signed report, nothing computed again
        await transport.publish(topics.mpc_job(1), job_message(first))
        again = await _next_report(transport)
        assert again is not None and again.model_dump_json() == report.model_dump_json()
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
