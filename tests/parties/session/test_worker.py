"""A worker's parties in this event loop on the in-memory transport, one connection per party or one for the
worker (``shared``): "ready" once all subscribed, every party answers, and a party's failure is reported as
"failed" before it propagates. A spawned worker imports neither scipy nor matplotlib."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import pickle
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Literal

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.broker.transport.memory import MemoryTransport
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import TransportError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("w")
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()


def _spec(broker: InMemoryBroker, idle_timeout: float = 2.0, shared: bool = False) -> WorkerSpec:
    parties = tuple(PartySpec(p, np.array([1], np.int8), RandomizedResponse(1.0), generate_key_pair()[0],
                              np.random.SeedSequence(p)) for p in (4, 7))
    return WorkerSpec(index=3, endpoint=broker, session="w", coordinator_key=COORD_PUBLIC, parties=parties,
                      idle_timeout=idle_timeout, connect_concurrency=1, shared=shared)


def _announce(kind: Literal["round", "end"], index: int) -> str:
    return Announcement.signed(COORD_PRIVATE, session="w", kind=kind, round=index, repetitions=2).model_dump_json()


@pytest.mark.parametrize("shared", [False, True])
async def test_reports_ready_then_every_party_answers(shared: bool) -> None:
    broker = InMemoryBroker()
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.status, TOPICS.all_parties)
        worker = asyncio.create_task(serve_parties(_spec(broker, shared=shared)))
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


async def test_a_worker_process_freezes_its_built_parties_and_collects_again() -> None:
    """``freeze`` (a worker process's own): the objects built are frozen (gc.freeze: never scanned again), the
    collector is on again after the build, and the parties answer as without it."""
    broker = InMemoryBroker()
    frozen = gc.get_freeze_count()
    try:
        async with broker.connect("observer") as observer:
            await observer.subscribe(TOPICS.status, TOPICS.all_parties)
            worker = asyncio.create_task(serve_parties(_spec(broker, shared=True), freeze=True))
            ready = await next_delivery(observer, 2.0)  # after the build
            assert ready is not None and gc.isenabled() and gc.get_freeze_count() > frozen
            await observer.publish(TOPICS.rounds, _announce("round", 0))
            answers = [await next_delivery(observer, 2.0) for _ in range(2)]
            await observer.publish(TOPICS.rounds, _announce("end", 1))
            await worker
    finally:
        gc.unfreeze()
    assert sorted(PartyMessage.from_wire(a.payload).party for a in answers if a) == [4, 7]


@pytest.mark.parametrize("shared", [False, True])
async def test_a_failing_party_is_reported_failed_and_raised(shared: bool) -> None:
    broker = InMemoryBroker()
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.status)
        with pytest.raises(ExceptionGroup) as group:
            await serve_parties(_spec(broker, idle_timeout=0.1, shared=shared))
        reports = [WorkerStatus.model_validate_json(d.payload)
                   for d in [await next_delivery(observer, 1.0), await next_delivery(observer, 1.0)] if d]
    assert group.group_contains(TransportError, match="no announcement for 0.1 s")
    assert [r.state for r in reports] == ["ready", "failed"]
    assert reports[1].detail.startswith("TransportError: party ") and "no announcement for 0.1 s" in reports[1].detail


class _SlowConnect(InMemoryBroker):
    """Connecting takes a few event-loop turns, as over a network (the in-memory broker connects at once)."""

    @contextlib.asynccontextmanager
    async def connect(self, client_id: str, *, persistent: bool = False) -> AsyncIterator[MemoryTransport]:
        await asyncio.sleep(0.05)
        async with super().connect(client_id, persistent=persistent) as transport:
            yield transport


@pytest.mark.parametrize("shared", [False, True])
async def test_parties_failing_at_once_send_one_failed_report(shared: bool) -> None:
    """Both parties have one bit and round 1 is announced: they fail in the same turn. The first failure's report
    goes out although the task group cancels that party when the second fails (it was cancelled with it, while
    connecting to report, before: no "failed" at all, the observer waited round_timeout for each round)."""
    broker = _SlowConnect()
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.status)
        worker = asyncio.create_task(serve_parties(_spec(broker, shared=shared)))
        ready = await next_delivery(observer, 2.0)
        assert ready is not None and WorkerStatus.model_validate_json(ready.payload).state == "ready"
        await observer.publish(TOPICS.rounds, _announce("round", 1))
        with pytest.raises(ExceptionGroup):
            await worker
        reports = [WorkerStatus.model_validate_json(d.payload) for d in [await next_delivery(observer, 1.0)] if d]
        assert await next_delivery(observer, 0.2) is None  # one report
    assert [(r.state, r.parties) for r in reports] == [("failed", (4, 7))]
    assert reports[0].detail in [f"ParameterError: party {p} has no bit for round 1: its dataset has 1 round "
                                 "(columns), 0..0" for p in (4, 7)]


def test_a_spawned_worker_imports_neither_scipy_nor_matplotlib() -> None:
    """What a spawned worker imports: the ``mpdp`` command (its main module) and the pickled spec's modules
    (mosquitto endpoint, randomized-response parties, seeds). scipy cost each worker seconds of start-up."""
    spec = WorkerSpec(index=0, endpoint=BrokerEndpoint(kind="mosquitto", host="127.0.0.1", port=1883), session="w",
                      coordinator_key=COORD_PUBLIC, parties=_spec(InMemoryBroker()).parties, shared=True)
    code = ("import pickle, sys; import mpdp.parties.cli.main; spec = pickle.loads(sys.stdin.buffer.read()); "
            "import mpdp.parties.session.worker; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'matplotlib', 'numpy', 'aiomqtt'}))")
    run = subprocess.run([sys.executable, "-c", code], input=pickle.dumps(spec), capture_output=True, timeout=scaled(120),
                         check=True)
    assert run.stdout.decode().strip() == "['aiomqtt', 'numpy']", run.stderr.decode()


def test_each_status_part_is_stamped_when_it_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """A part is signed and stamped as the worker takes it to publish (not all before the first goes out): a
    part taken 50 ms after the one before expires at least 50 ms after it, with the same lifetime."""
    import time

    from mpdp.parties.session import worker as worker_module
    from mpdp.parties.session.worker import status_reports

    monkeypatch.setattr(worker_module, "STATUS_PARTIES", 1)
    parts = status_reports(_spec(InMemoryBroker()), "ready")
    first = next(parts)
    time.sleep(0.05)
    second = next(parts)
    assert (first.parties, second.parties) == ((4,), (7,))
    assert second.expires_ms - first.expires_ms >= 50
    assert next(parts, None) is None
