"""A worker's parties in this event loop on the in-memory transport: "ready" once all subscribed,
every party answers, and a party's failure is reported as "failed" before it propagates."""

from __future__ import annotations

import asyncio
from typing import Literal

import numpy as np
import pytest

from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rr.party import PartySpec
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import TransportError
from mpdp.protocols.mechanisms import RandomizedResponse

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("w")
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()


def _spec(broker: InMemoryBroker, idle_timeout: float = 2.0) -> WorkerSpec:
    parties = tuple(PartySpec(p, np.array([1], np.int8), RandomizedResponse(1.0), generate_key_pair()[0],
                              np.random.SeedSequence(p)) for p in (4, 7))
    return WorkerSpec(index=3, endpoint=broker, session="w", coordinator_key=COORD_PUBLIC, parties=parties,
                      idle_timeout=idle_timeout, connect_concurrency=1)


def _announce(kind: Literal["round", "end"], index: int) -> str:
    return Announcement.signed(COORD_PRIVATE, session="w", kind=kind, round=index, repetitions=2).model_dump_json()


async def test_reports_ready_then_every_party_answers() -> None:
    broker = InMemoryBroker()
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.status, TOPICS.all_parties)
        worker = asyncio.create_task(serve_parties(_spec(broker)))
        ready = await next_delivery(observer, 2.0)
        assert ready is not None and ready.topic == TOPICS.status
        status = WorkerStatus.model_validate_json(ready.payload)
        assert (status.worker, status.state, status.parties) == (3, "ready", (4, 7))
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        answers = [await next_delivery(observer, 2.0) for _ in range(2)]
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        await worker
    messages = sorted((PartyMessage.from_wire(a.payload) for a in answers if a), key=lambda m: m.party)
    assert [(m.party, m.round, m.kind) for m in messages] == [(4, 0, "symbols"), (7, 0, "symbols")]


async def test_a_failing_party_is_reported_failed_and_raised() -> None:
    broker = InMemoryBroker()
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.status)
        with pytest.raises(ExceptionGroup) as group:
            await serve_parties(_spec(broker, idle_timeout=0.1))
        reports = [WorkerStatus.model_validate_json(d.payload)
                   for d in [await next_delivery(observer, 1.0), await next_delivery(observer, 1.0)] if d]
    assert group.group_contains(TransportError, match="no announcement for 0.1 s")
    assert [r.state for r in reports] == ["ready", "failed"]
    assert reports[1].detail.startswith("TransportError: party ") and "no announcement for 0.1 s" in reports[1].detail
