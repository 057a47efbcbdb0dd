"""A worker's parties on one connection in one task (parties/session/multiplex.py): one connection and
subscription, each party answers with its own seeded draw, key and topic, heartbeats (on their own topic)
reach only the lead party, whose clock the others share, a party's error is reported with its id, and the
lead's silence ends the worker."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any, Literal

import numpy as np
import pytest

from mpdp.broker.bundle import decode_bundle
from mpdp.broker.messages import Announcement, PartyMessage
from mpdp.broker.signing import generate_key_pair, load_private_key, public_key_of, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, MemoryTransport, next_delivery
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.seeds import SeedTree, round_generator
from mpdp.parties.rr.party import Party
from mpdp.parties.session.multiplex import serve_multiplexed
from mpdp.protocols.errors import TransportError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

pytestmark = pytest.mark.timeout(20)

SESSION = "mux"
TOPICS = Topics(SESSION)
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()
K, REPETITIONS = 12, 5


class Recording:
    """The in-memory broker, recording the client id of every connection made through it."""

    def __init__(self, broker: InMemoryBroker) -> None:
        self.broker = broker
        self.client_ids: list[str] = []

    @contextlib.asynccontextmanager
    async def connect(self, client_id: str, *, persistent: bool = False) -> AsyncIterator[MemoryTransport]:
        self.client_ids.append(client_id)
        async with self.broker.connect(client_id, persistent=persistent) as transport:
            yield transport


def _parties(connector: Any, idle_timeout: float = 5.0) -> tuple[list[Party], list[bytes]]:
    tree = SeedTree(77)
    bits = np.random.default_rng(5).integers(0, 2, size=(K, 2)).astype(np.int8)
    keys = [generate_key_pair()[0] for _ in range(K)]
    parties = [Party(PartySpec(i, bits[i], RandomizedResponse(0.7), keys[i], tree.party(i)), connector, TOPICS,
                     COORD_PUBLIC, idle_timeout=idle_timeout, observer_grace=5.0) for i in range(K)]
    return parties, keys


def _announce(kind: Literal["round", "end", "heartbeat"], index: int) -> str:
    return Announcement.signed(COORD_PRIVATE, session=SESSION, kind=kind, round=index,
                               repetitions=REPETITIONS).model_dump_json()


async def _no_error(party: int, exc: Exception) -> None:
    raise AssertionError(f"party {party} failed: {exc}")


async def _serving(parties: list[Party], connector: Any, worker: str, on_error: Any = _no_error,
                   **options: Any) -> asyncio.Task[None]:
    """:func:`serve_multiplexed` of ``parties`` as ``worker`` in a task, returned once all K are ready."""
    ready: list[int] = []
    task = asyncio.create_task(serve_multiplexed([p.loop for p in parties], connector, worker,
                                                 on_ready=lambda: ready.append(1), on_error=on_error, **options))
    while len(ready) < K:
        await asyncio.sleep(0.01)
    return task


async def test_one_connection_each_party_answers_with_its_own_draw_key_and_topic() -> None:
    broker = InMemoryBroker()
    connector = Recording(broker)
    parties, keys = _parties(connector)
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.all_parties)
        worker = await _serving(parties, connector, "worker-0")
        heartbeat = _announce("heartbeat", 0)
        for payload in (heartbeat, heartbeat):  # the second heartbeat is a replay
            await observer.publish(TOPICS.heartbeat, payload)
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        answers = [await next_delivery(observer, 2.0) for _ in range(K)]
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        await asyncio.wait_for(worker, 5.0)
    assert connector.client_ids == ["worker-0"]  # one connection for the K parties
    by_party = {}
    for delivery in answers:
        assert delivery is not None
        message = PartyMessage.from_wire(delivery.payload)
        assert delivery.topic == TOPICS.party(message.party)
        assert verify_message(message, public_key_of(keys[message.party]))
        by_party[message.party] = message
    assert sorted(by_party) == list(range(K))
    for party in parties:  # each answer is the party's own seeded draw (seeds.py), computed here independently
        spec = party.spec
        draws = round_generator(SeedTree(77).party(spec.party), 0)
        expected = spec.mechanism.sample(int(spec.bits[0]), REPETITIONS, draws)
        assert np.array_equal(by_party[spec.party].symbol_array(), expected)
    # heartbeats reach the lead party only: it ignored the copy (counted, no rejection), the others saw none
    assert not any(p.rejections.counts for p in parties) and parties[0].loop.clock.redelivered == 1
    assert all(p.loop.clock is parties[0].loop.clock for p in parties) and parties[0].loop.clock.round == 0


async def test_a_refused_message_is_logged_once_per_worker_with_its_count_of_parties(
        caplog: pytest.LogCaptureFixture) -> None:
    broker = InMemoryBroker()
    parties, _ = _parties(broker)
    stranger = generate_key_pair()[0]
    forged = Announcement.signed(stranger, session=SESSION, kind="round", round=0, repetitions=REPETITIONS)
    other = Announcement.signed(COORD_PRIVATE, session="other", kind="round", round=0, repetitions=REPETITIONS)
    heartbeat = _announce("heartbeat", 0)
    with caplog.at_level(logging.WARNING, logger="mpdp.party"):
        async with broker.connect("observer") as observer:
            worker = await _serving(parties, broker, "worker-4")
            for payload in (forged.model_dump_json(), "junk", other.model_dump_json()):
                await observer.publish(TOPICS.rounds, payload)
            for payload in (heartbeat, heartbeat):
                await observer.publish(TOPICS.heartbeat, payload)  # the copy is ignored, counted, not logged here
            await observer.publish(TOPICS.rounds, _announce("end", 1))
            await asyncio.wait_for(worker, 5.0)
    assert sorted(r.getMessage() for r in caplog.records) == sorted([
        f"parties 0-{K - 1}: rejected a message (signature): {TOPICS.rounds}: round 0: not signed by the "
        f"coordinator (refused by {K} of {K} parties)",
        f"parties 0-{K - 1}: rejected a message (schema): {TOPICS.rounds}: Invalid JSON: expected value at line 1 "
        f"column 1 (refused by {K} of {K} parties)",
        f"parties 0-{K - 1}: rejected a message (session): {TOPICS.rounds}: round 0: session 'other' "
        f"(refused by {K} of {K} parties)",
    ])
    assert all(p.rejections.counts == {"signature": 1, "schema": 1, "session": 1} for p in parties)
    assert parties[0].loop.clock.redelivered == 1


async def test_a_copy_of_a_round_announcement_is_skipped_and_a_reannouncement_gets_the_recorded_answers() -> None:
    """The broker redelivered a round announcement ~10 times at 10^6 parties: each copy was refused as a replay
    by 500,000 parties per worker (a signature check each). A byte-identical copy is skipped now: no party
    counts a refusal or answers again; a re-announcement (signed afresh) gets each party's recorded answer,
    the same bytes (no fresh draw)."""
    broker = InMemoryBroker()
    parties, _ = _parties(broker)
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.all_parties)
        worker = await _serving(parties, broker, "worker-1")
        announcement = _announce("round", 0)
        for _ in range(3):  # the announcement and two copies
            await observer.publish(TOPICS.rounds, announcement)
        first = [await next_delivery(observer, 2.0) for _ in range(K)]
        assert await next_delivery(observer, 0.3) is None  # no second answer to a copy
        await observer.publish(TOPICS.rounds, _announce("round", 0))  # re-announced: a new signature, sequence
        again = [await next_delivery(observer, 2.0) for _ in range(K)]
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        await asyncio.wait_for(worker, 5.0)
    assert not any(p.rejections.counts for p in parties)
    assert all(d is not None for d in first + again)
    assert sorted(d.payload for d in first if d) == sorted(d.payload for d in again if d)


async def test_a_party_error_is_reported_with_its_id_and_raised() -> None:
    broker = InMemoryBroker()
    parties, _ = _parties(broker)

    def failing(announcement: Announcement) -> PartyMessage:
        raise RuntimeError("planted")

    parties[5].respond = failing  # type: ignore[method-assign]
    reported: list[tuple[int, str]] = []

    async def on_error(party: int, exc: Exception) -> None:
        reported.append((party, str(exc)))

    async with broker.connect("observer") as observer:
        worker = await _serving(parties, broker, "worker-1", on_error)
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        with pytest.raises(ExceptionGroup) as group:
            await asyncio.wait_for(worker, 5.0)
    assert group.group_contains(RuntimeError, match="planted")
    assert reported == [(5, "planted")]


async def test_the_lead_partys_silence_ends_the_worker() -> None:
    broker = InMemoryBroker()
    parties, _ = _parties(broker, idle_timeout=0.2)
    with pytest.raises(ExceptionGroup) as group:
        await asyncio.wait_for(serve_multiplexed([p.loop for p in parties], broker, "worker-2",
                                                 on_ready=lambda: None, on_error=_no_error), 5.0)
    assert group.group_contains(TransportError, match="party 0: no announcement for 0.2 s")


class SlowLink:
    """The in-memory broker behind a slow link: every publish takes ``delay`` seconds more."""

    def __init__(self, broker: InMemoryBroker, delay: float) -> None:
        self.broker, self.delay = broker, delay

    @contextlib.asynccontextmanager
    async def connect(self, client_id: str, *, persistent: bool = False) -> AsyncIterator[Any]:
        async with self.broker.connect(client_id, persistent=persistent) as transport:
            publish = transport.publish

            async def slow(topic: str, payload: bytes | str) -> None:
                await asyncio.sleep(self.delay)
                await publish(topic, payload)

            transport.publish = slow  # type: ignore[method-assign]
            yield transport


@contextlib.asynccontextmanager
async def _slow_worker(name: str, k: int, grace: float) -> AsyncIterator[tuple[MemoryTransport, asyncio.Task[None]]]:
    """k parties of one worker, ready, answering one at a time over a link that takes 5 ms a publish, with
    the observer grace ``grace``; yields the observer's connection (subscribed to the answers) and the
    worker's task."""
    broker = InMemoryBroker()
    key = generate_key_pair()[0]  # one key for all: key generation would only slow the test
    parties = [Party(PartySpec(i, np.ones(1, np.int8), RandomizedResponse(1.0), key, np.random.SeedSequence(i)),
                     broker, TOPICS, COORD_PUBLIC, idle_timeout=5.0, observer_grace=grace) for i in range(k)]
    ready: list[int] = []
    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.all_parties)
        worker = asyncio.create_task(serve_multiplexed(
            [p.loop for p in parties], SlowLink(broker, 0.005), name, on_ready=lambda: ready.append(1),
            on_error=_no_error, concurrency=1))
        while len(ready) < k:
            await asyncio.sleep(0.01)
        yield observer, worker


async def _answer_topics(observer: MemoryTransport, worker: asyncio.Task[None], k: int) -> set[str]:
    """The answer topics heard until all k parties answered or the worker ended."""
    topics: set[str] = set()
    while len(topics) < k and not worker.done():
        delivery = await next_delivery(observer, 1.0)
        if delivery is not None:
            topics.add(delivery.topic)
    return topics


@pytest.mark.timeout(60)
async def test_heartbeats_keep_the_worker_alive_through_a_round_longer_than_the_grace() -> None:
    """400 parties answer one at a time over a link that takes 5 ms a publish: the round lasts 2 s, four
    times the 0.5 s observer grace; the coordinator's heartbeats (every 0.05 s) are read meanwhile, so the
    worker lives on to the end announcement."""
    grace, k = 0.5, 400
    async with _slow_worker("worker-3", k, grace) as (observer, worker):

        async def beat() -> None:
            for index in range(10**6):
                await observer.publish(TOPICS.heartbeat, _announce("heartbeat", index))
                await asyncio.sleep(0.05)

        beating = asyncio.create_task(beat())
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        start = asyncio.get_running_loop().time()
        topics = await _answer_topics(observer, worker, k)
        took = asyncio.get_running_loop().time() - start
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        await asyncio.wait_for(worker, 10.0)  # raises the worker's error, if any
        beating.cancel()
    assert len(topics) == k and took > 2 * grace, (len(topics), took)


@pytest.mark.timeout(60)
async def test_the_end_arriving_while_the_parties_are_busy_ends_the_worker_cleanly() -> None:
    """The round's answers take 2 s (400 parties one at a time, 5 ms a publish) and the end comes right
    behind the round, after which the coordinator falls silent: four times the 0.5 s observer grace
    passes before the parties reach the end in the worker's queue; the worker ends with every answer
    sent (the lead's silence clock stopped at the end), not with "the observer ... is gone"."""
    grace, k = 0.5, 400
    async with _slow_worker("worker-4", k, grace) as (observer, worker):
        await observer.publish(TOPICS.heartbeat, _announce("heartbeat", 0))  # the lead hears: its grace applies
        await asyncio.sleep(0.1)
        start = asyncio.get_running_loop().time()
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        topics = await _answer_topics(observer, worker, k)
        await asyncio.wait_for(worker, 10.0)  # raises the worker's error, if any
        took = asyncio.get_running_loop().time() - start
    assert len(topics) == k and took > 2 * grace, (len(topics), took)


async def test_bundled_answers_are_each_partys_own_signed_message_and_a_reannounced_round_gets_them_again() -> None:
    """bundle=(topics, worker, key): the K answers come in fewer messages on the worker's bundle topic, each
    signed with the worker's key, each entry the party's own signed draw (computed here independently), and a
    round announced again gets the same bytes."""
    broker = InMemoryBroker()
    bundle_key = load_private_key(generate_key_pair()[0])
    parties, keys = _parties(broker)

    async def entries(observer: MemoryTransport) -> tuple[int, dict[int, bytes]]:
        got: dict[int, bytes] = {}
        bundles = 0
        while len(got) < K:
            delivery = await next_delivery(observer, 2.0)
            assert delivery is not None and delivery.topic == TOPICS.bundle(3)
            bundles += 1
            for party, message in decode_bundle(delivery.payload, bundle_key.verify_key, session=SESSION, worker=3):
                assert party not in got
                got[party] = message
        return bundles, got

    async with broker.connect("observer") as observer:
        await observer.subscribe(TOPICS.all_parties, TOPICS.all_bundles)
        worker = await _serving(parties, broker, "worker-3", bundle=(TOPICS, 3, bundle_key))
        await observer.publish(TOPICS.rounds, _announce("round", 0))
        bundles, first = await entries(observer)
        await observer.publish(TOPICS.rounds, _announce("round", 0))  # re-announced (a fresh sequence)
        _, again = await entries(observer)
        await observer.publish(TOPICS.rounds, _announce("end", 1))
        await asyncio.wait_for(worker, 5.0)
    assert bundles < K and again == first
    for party in parties:
        spec = party.spec
        message = PartyMessage.from_wire(first[spec.party])
        assert message.party == spec.party and verify_message(message, public_key_of(keys[spec.party]))
        draws = round_generator(SeedTree(77).party(spec.party), 0)
        assert np.array_equal(message.symbol_array(), spec.mechanism.sample(int(spec.bits[0]), REPETITIONS, draws))
