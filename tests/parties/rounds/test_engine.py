"""The round engine on the in-memory transport, with the randomized-response observer plugged in:
validation reasons, dedupe, close on all answered, timeout -> absent, one transaction per round (all or
nothing), status reports, a dropped connection that comes back, the curator's release."""

from __future__ import annotations

import asyncio
import math
import time
import types
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from mpdp.broker.curator_messages import (
    CuratorAnnouncement,
    CuratorRelease,
    SealedBallot,
)
from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Delivery, InMemoryBroker, MemoryTransport
from mpdp.parties.ballots.store import BallotStore
from mpdp.parties.curator.curator import Curator
from mpdp.parties.rounds.engine import RoundEngine, open_engine
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import RecordedMessage, TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.mqtt_fixtures import brute_force_majority

REPS, SESSION = 4, "eng"
TOPICS = Topics(SESSION)


@dataclass
class World:
    """A broker, a roster of three parties (pure eps 1, 1, and (2, 0.1)), a store, a sender client."""

    broker: InMemoryBroker
    roster: Roster
    keys: tuple[bytes, ...]
    coordinator: tuple[bytes, bytes]
    store: TranscriptStore
    sender: MemoryTransport

    def answer(self, party: int, symbols: list[int] | None = None, key: bytes | None = None, **changes: object) -> str:
        return signed_answer(key or self.keys[party], SESSION, party, symbols, **changes)


def signed_answer(key: bytes, session: str, party: int, symbols: list[int] | None = None, **changes: object) -> str:
    """A party message of round 0 with ``REPS`` repetitions, signed with ``key``: ``symbols``, or an
    abstention (``did-not-vote``) when None; ``changes`` override fields."""
    fields: dict[str, object] = dict(session=session, round=0, party=party, repetitions=REPS)
    fields.update(changes)
    if symbols is None:
        fields["reason"] = "did-not-vote"
    else:
        fields["symbols"] = np.array(symbols, np.uint8)
    return PartyMessage.signed(key, **fields).model_dump_json()  # type: ignore[arg-type]


MECHANISMS = (RandomizedResponse(1.0), RandomizedResponse(1.0), RandomizedResponse(2.0, 0.1))


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    broker = InMemoryBroker()
    roster, keys = Roster.generate(MECHANISMS)
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 3, REPS, ["r0", "r1"], mode="simulation (seeded generators)")
        async with broker.connect("sender") as sender:
            await sender.subscribe(TOPICS.rounds, TOPICS.release)
            yield World(broker, roster, keys, generate_key_pair(), store, sender)


def _observer(world: World) -> Observer:
    return Observer(TOPICS, world.roster, world.store, function=parse_function("majority"),
                    measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)


async def _announced(sender: MemoryTransport) -> bytes:
    async with asyncio.timeout(2):
        return (await anext(sender.deliveries())).payload


async def _send(world: World, sends: list[tuple[str, str]]) -> None:
    for topic, payload in sends:
        await world.sender.publish(topic, payload)


async def _round(engine: RoundEngine[PartyMessage, NDArray[np.uint8]], world: World,
                 sends: list[tuple[str, str]], index: int = 0) -> RoundOutcome:
    running = asyncio.create_task(engine.run_round(index, f"r{index}"))
    announcement = Announcement.model_validate_json(await _announced(world.sender))
    assert verify_message(announcement, world.coordinator[1]) and announcement.round == index
    await _send(world, sends)
    return await running


async def test_every_reject_reason_is_counted_and_only_valid_answers_recorded(world: World) -> None:
    stranger, _ = generate_key_pair()
    first = world.answer(0, [1, 0, 1, 1])
    sends = [
        (TOPICS.party(0), first),
        (TOPICS.party(1), world.answer(1, key=stranger)),                                  # signature
        (TOPICS.party(7), world.answer(7, [0, 0, 0, 0], key=stranger)),                    # unknown-party
        (TOPICS.party(0), first),                                       # the same again: a re-send, ignored
        (TOPICS.party(0), world.answer(0, [0, 0, 0, 0])),                             # double-release (new)
        (TOPICS.party(2), world.answer(2, [3, 2, 1, 0]).replace(SESSION, "other", 1)),     # session
        (TOPICS.party(2), "{not json"),                                                    # schema
        (TOPICS.party(2), world.answer(1)),                                                # topic
        (TOPICS.party(2), world.answer(2, [0, 0, 0, 0], round=1)),                         # round
        (TOPICS.party(2), world.answer(2, [0] * (REPS + 1), repetitions=REPS + 1)),        # repetitions
        (TOPICS.party(1), world.answer(1, [0, 2, 0, 0])),                                  # symbol-range
        (f"{TOPICS.prefix}/party/x", world.answer(1)),                                     # topic (no id)
        (TOPICS.party(1), world.answer(1)),                                                # abstention
        (TOPICS.party(2), world.answer(2, [3, 2, 1, 0])),                                  # completes
    ]
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=REPS, round_timeout=5.0) as engine:
        outcome = await _round(engine, world, sends)
        assert engine.messages_received == 3 and engine.messages_rejected == 10
    expected = {"signature": 1, "unknown-party": 1, "double-release": 1, "session": 1, "schema": 1, "topic": 2,
                "round": 1, "repetitions": 1, "symbol-range": 1}
    assert world.store.rejects(SESSION) == {(0, reason): n for reason, n in expected.items()}
    assert outcome.status == "complete" and outcome.messages_rejected == sum(expected.values())
    assert (outcome.participants.tolist(), outcome.abstained.tolist(), outcome.absent.tolist()) == ([0, 2], [1], [])
    assert outcome.symbols is not None
    assert outcome.symbols.T.tolist() == [[1, 0, 1, 1], [3, 2, 1, 0]]
    decisions, _ = brute_force_majority([MECHANISMS[0], MECHANISMS[2]], outcome.symbols)
    assert outcome.decisions.tolist() == decisions.tolist()
    rows = list(world.store.messages(SESSION))
    assert [(r["party"], r["kind"], r["payload"] == first.encode() if r["party"] == 0 else None) for r in rows] == [
        (0, "symbols", True), (1, "abstain", None), (2, "symbols", None)]


async def test_timeout_records_the_absent_and_late_answers_are_rejected(world: World) -> None:
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=REPS, round_timeout=0.3) as engine:
        outcome = await _round(engine, world, [(TOPICS.party(2), world.answer(2, [1, 1, 1, 1]))])
        await _send(world, [(TOPICS.party(0), world.answer(0, [1, 1, 1, 1]))])  # round 0 closed: late
        await asyncio.sleep(0.05)
    assert outcome.status == "timeout" and outcome.absent.tolist() == [0, 1]
    assert outcome.participants.tolist() == [2] and outcome.messages_received == 1
    assert world.store.rejects(SESSION) == {(0, "late"): 1}  # flushed on exit, after the round closed
    stored = world.store.load_round(SESSION, 0)
    assert stored.status == "timeout" and stored.absent.tolist() == [0, 1]
    assert [(r["party"], r["kind"]) for r in world.store.messages(SESSION)] == [(0, "absent"), (1, "absent"), (2, "symbols")]


async def test_a_round_is_recorded_in_one_transaction_or_not_at_all(world: World) -> None:
    # party 0's message of round 0 is already stored with another payload: the round's write conflicts
    world.store.record_message(SESSION, 0, REPS, RecordedMessage(0, "abstain", "did-not-vote", np.zeros(0, np.uint8), "x"))
    sends = [(TOPICS.party(p), world.answer(p, [1, 1, 1, 1])) for p in (0, 2)] + [(TOPICS.party(1), world.answer(1))]
    with pytest.raises(ExceptionGroup) as raised:
        async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0],
                               _observer(world), repetitions=REPS, round_timeout=5.0) as engine:
            await _round(engine, world, sends)
    assert raised.group_contains(ProtocolViolation, match="holds another message")
    assert world.store.recorded_rounds(SESSION) == [] and world.store.rejects(SESSION) == {}
    assert [r["party"] for r in world.store.messages(SESSION)] == []  # rows join recorded rounds only


async def test_status_reports_and_a_dropped_connection_that_comes_back(world: World) -> None:
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=REPS, round_timeout=5.0) as engine:
        await world.sender.publish(TOPICS.status, WorkerStatus.signed(world.keys[:2], session=SESSION, worker=0,
                                                                      state="ready", parties=(0, 1)).model_dump_json())
        await world.sender.publish(TOPICS.status, "nonsense")
        client = f"mpdp-{SESSION}-observer"
        running = asyncio.create_task(engine.run_round(0, "r0"))
        await _announced(world.sender)
        await world.broker.disconnect(client)  # the engine's persistent session queues what arrives
        await _send(world, [(TOPICS.party(p), world.answer(p, [0, 1, 0, 1])) for p in (0, 1, 2)])
        await asyncio.sleep(0.05)
        assert not running.done()
        await world.broker.reconnect(client)
        outcome = await running
        assert sorted(engine.ready_workers) == [0] and engine.failed_workers == {}
    assert outcome.status == "complete" and outcome.participants.tolist() == [0, 1, 2]
    assert world.store.rejects(SESSION) == {(-1, "schema"): 1}  # before any round opened


async def test_the_curator_opens_ballots_releases_and_records_ciphertexts_only(tmp_path: Path) -> None:
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RandomizedResponse(math.inf),) * 3)
    signing_private, signing_public = generate_key_pair()
    with BallotStore(tmp_path / "c.sqlite") as store:
        store.open_central_session(SESSION, 3, REPS, ["bill"], math.inf, 0.0, mode="simulation (seeded generators)")
        async with broker.connect("sender") as sender, open_engine(
            broker, TOPICS, roster, store, signing_private, Curator(TOPICS, roster, seed=np.random.SeedSequence(3)),
            repetitions=REPS, round_timeout=5.0,
        ) as engine:
            await sender.subscribe(TOPICS.rounds, TOPICS.release)
            running = asyncio.create_task(engine.run_round(0, "bill"))
            announcement = CuratorAnnouncement.model_validate_json(await _announced(sender))
            assert verify_message(announcement, signing_public)
            slot = dict(session=SESSION, round=0, repetitions=REPS, curator_key=announcement.key_bytes)
            ballots = [SealedBallot.signed(keys[0], party=0, bit=1, **slot),  # type: ignore[arg-type]
                       SealedBallot.signed(keys[1], party=1, bit=0, **slot),  # type: ignore[arg-type]
                       SealedBallot.signed(keys[2], party=2, bit=None, reason="did-not-vote", **slot)]  # type: ignore[arg-type]
            wrong_key = SealedBallot.signed(keys[2], party=2, bit=1, **{**slot, "curator_key": generate_x25519_key_pair()[1]})  # type: ignore[arg-type]
            await sender.publish(TOPICS.party(2), wrong_key.model_dump_json())
            for party, ballot in enumerate(ballots):
                await sender.publish(TOPICS.party(party), ballot.model_dump_json())
            outcome = await running
            release = CuratorRelease.model_validate_json(await _announced(sender))
    # eps = inf: the release is the majority of (1, 0) among the two voters, 0 (a tie is not a majority)
    assert outcome.decisions.tolist() == [0] * REPS and outcome.symbols is None
    assert (outcome.participants.tolist(), outcome.abstained.tolist()) == ([0, 1], [2])
    assert verify_message(release, signing_public) and release.voters == 2
    assert release.output_array().tolist() == outcome.decisions.tolist()
    with BallotStore(tmp_path / "c.sqlite") as store:
        assert store.rejects(SESSION) == {(0, "curator-key"): 1}
        assert [b["payload"] for b in store.ballots(SESSION)] == [b.model_dump_json() for b in ballots]
        assert store.release_payloads(SESSION) == [release.model_dump_json()]
        stored = store.load_round(SESSION, 0, symbols=False)
        assert stored.decisions.tolist() == outcome.decisions.tolist() and stored.symbols is None


async def test_a_backlog_is_handled_with_turns_for_the_event_loop() -> None:
    """A queued delivery is taken without a pause; 40 deliveries of 20 ms handling each (0.8 s of work) must
    let the event loop run (the client's keepalive, the heartbeats) before the last is handled: the engine
    gives it a turn after each YIELD_SECONDS of handling."""
    handled: list[int] = []
    seen_midway: list[int] = []

    class Backlog:
        async def deliveries(self) -> AsyncIterator[Delivery]:
            for i in range(40):
                yield Delivery("t", bytes([i]))

    def handle(topic: str, payload: bytes) -> None:
        time.sleep(0.02)
        handled.append(payload[0])

    async def other() -> None:
        while len(handled) < 40:
            seen_midway.append(len(handled))
            await asyncio.sleep(0)

    fake = types.SimpleNamespace(_transport=Backlog(), handle=handle)
    task = asyncio.create_task(other())
    await RoundEngine.receive_all(fake)  # type: ignore[arg-type]
    await task
    assert handled == list(range(40)) and any(0 < n < 40 for n in seen_midway)
