"""Validator processes on a real mosquitto (MQTT 5 shared subscription) feeding the round engine: every
reject reason is counted in the merger (the validators' as well as the merger's own), the valid answers
are recorded once."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Delivery, Transport
from mpdp.parties.cli.main import main
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.session.validator import Rejected, Verified, forward
from mpdp.parties.session.validators import open_validated_engine
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.parties.cli.invoke import refused
from tests.parties.rounds.test_engine import MECHANISMS, REPS, signed_answer


@dataclass
class World:
    topics: Topics
    roster: Roster
    keys: tuple[bytes, ...]
    store: TranscriptStore
    sender: Transport

    def answer(self, party: int, symbols: list[int] | None = None, key: bytes | None = None,
               **changes: object) -> str:
        return signed_answer(key or self.keys[party], self.topics.session, party, symbols, **changes)


@pytest_asyncio.fixture(loop_scope="session")
async def world(mosquitto: BrokerEndpoint, tmp_path: Path) -> AsyncIterator[World]:
    topics = Topics(f"val-{uuid.uuid4().hex[:8]}")
    roster, keys = Roster.generate(MECHANISMS)
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(topics.session, 3, REPS, ["r0"], mode="simulation (seeded generators)")
        async with mosquitto.connect(f"sender-{topics.session}") as sender:
            await sender.subscribe(topics.rounds)
            yield World(topics, roster, keys, store, sender)


async def _until(condition: object, seconds: float = 20.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.02)


@pytest.mark.integration
@pytest.mark.asyncio(loop_scope="session")
@pytest.mark.timeout(120)
async def test_two_validators_count_every_reject_reason_and_record_each_answer_once(
        mosquitto: BrokerEndpoint, world: World) -> None:
    """alpha: none (deterministic). The state-free checks run in the validators, the rest in the merger."""
    topics, stranger = world.topics, generate_key_pair()[0]
    first = world.answer(0, [1, 0, 1, 1])
    bad = [
        (topics.party(1), world.answer(1, key=stranger)),                                  # signature
        (topics.party(7), world.answer(7, [0, 0, 0, 0], key=stranger)),                    # unknown-party
        (topics.party(2), world.answer(2, [3, 2, 1, 0]).replace(topics.session, "other", 1)),  # session
        (topics.party(2), "{not json"),                                                    # schema
        (topics.party(2), world.answer(1)),                                                # topic
        (f"{topics.prefix}/party/x", world.answer(1)),                                     # topic (no id)
        (topics.party(2), world.answer(2, [0, 0, 0, 0], round=1)),                         # round
        (topics.party(2), world.answer(2, [0] * (REPS + 1), repetitions=REPS + 1)),        # repetitions
        (topics.party(1), world.answer(1, [0, 2, 0, 0])),                                  # symbol-range
    ]
    observer = Observer(topics, world.roster, world.store, function=parse_function("majority"),
                        measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
    coordinator = generate_key_pair()[0]
    async with open_validated_engine(mosquitto, topics, world.roster, world.store, coordinator, observer,
                                     repetitions=REPS, round_timeout=30.0, validators=2) as engine:
        pids = [p.pid for p in multiprocessing.active_children() if p.name.startswith("mpdp-validator-")]
        assert len(pids) == 2
        running = asyncio.create_task(engine.run_round(0, "r0"))
        async with asyncio.timeout(10):
            announcement = Announcement.model_validate_json((await anext(world.sender.deliveries())).payload)
        assert announcement.round == 0
        await world.sender.publish(topics.party(0), first)
        await _until(lambda: engine.messages_received == 1)
        for topic, text in [*bad, (topics.party(0), first), (topics.party(0), world.answer(0, [0, 0, 0, 0]))]:
            await world.sender.publish(topic, text)
        await _until(lambda: engine.rejections.total == len(bad) + 1)  # + the double release; the re-send is no reject
        await world.sender.publish(topics.party(1), world.answer(1))
        await world.sender.publish(topics.party(2), world.answer(2, [3, 2, 1, 0]))
        outcome = await running
    expected = {"signature": 1, "unknown-party": 1, "session": 1, "schema": 1, "topic": 2, "round": 1,
                "repetitions": 1, "symbol-range": 1, "double-release": 1}
    assert dict(engine.rejections.counts) == expected
    assert {reason: n for (_, reason), n in world.store.rejects(topics.session).items()} == expected
    assert (outcome.status, outcome.messages_received, outcome.messages_rejected) == ("complete", 3, len(bad) + 1)
    assert outcome.participants.tolist() == [0, 2] and outcome.abstained.tolist() == [1]
    assert outcome.symbols is not None and outcome.symbols.T.tolist() == [[1, 0, 1, 1], [3, 2, 1, 0]]
    recorded = list(world.store.messages(topics.session))
    assert [(m["round"], m["party"]) for m in recorded] == [(0, 0), (0, 1), (0, 2)]
    assert recorded[0]["payload"] == first.encode()  # the signed message as received (JSON, accepted too)
    assert multiprocessing.active_children() == []
    for pid in pids:  # gone, not merely detached
        assert pid is not None
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


class _Queued:
    """A transport whose deliveries are a fixed list (for :func:`forward`'s batching)."""

    client_id = "queued"

    def __init__(self, deliveries: list[Delivery]) -> None:
        self._deliveries = deliveries

    async def deliveries(self) -> AsyncIterator[Delivery]:
        for delivery in self._deliveries:
            yield delivery
        await asyncio.Event().wait()  # then nothing more arrives


@pytest.mark.timeout(30)
async def test_forward_sends_full_batches_then_the_rest_once_idle() -> None:
    topics = Topics("batching")
    deliveries = [Delivery(topics.party(i), b"x") for i in range(7)]
    sent: list[list[Verified | Rejected]] = []
    task = asyncio.create_task(forward(_Queued(deliveries), lambda d: Rejected("schema", d.topic),  # type: ignore[arg-type]
                                       sent.append, batch=3))
    await _until(lambda: sum(map(len, sent)) == 7, 5.0)
    task.cancel()
    assert [len(batch) for batch in sent] == [3, 3, 1]
    assert [r.detail for batch in sent for r in batch if isinstance(r, Rejected)] == [d.topic for d in deliveries]


@pytest.mark.parametrize("argv, shown", [
    (["--broker", "embedded", "--validators", "2"], "--validators=2 is not allowed: 0 with the embedded broker"),
    (["--validators", "-1"], "--validators=-1 is not allowed: an integer in [0, 64]"),
    (["--protocol", "curator", "--validators", "1"], "--validators=1 is not allowed: 0 with protocol curator"),
])
def test_simulate_refuses_validators_it_cannot_use_in_one_line(capsys: pytest.CaptureFixture[str],
                                                                argv: list[str], shown: str) -> None:
    line = refused(capsys, "simulate", "--parties", "4", "--rounds", "1", "--repetitions", "2", *argv)
    assert shown in line, line


def test_observe_validators_refuse_a_broker_without_a_login_in_one_line(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path) -> None:
    """Issue 22: a deployed observer's validators log in; an anonymous broker is refused before anything is
    reached (port 1: nothing listens), unless told it is a simulation (--allow-anonymous-broker passes the
    check and only then fails to reach the broker)."""
    assert main(["keys", "--parties", "2", "--session", "anon-1", "--out", str(tmp_path / "keys"), "--quiet"]) == 0
    capsys.readouterr()
    argv = ["observe", "--roster", str(tmp_path / "keys" / "roster.json"), "--keys", str(tmp_path / "keys" / "coordinator"),
            "--rounds", "1", "--broker", "mqtt://127.0.0.1:1?protocol=5", "--validators", "2", "--reconnect-window", "0",
            "--wait-parties", "1", "--out", str(tmp_path / "out")]
    line = refused(capsys, *argv)
    assert "--validators=2 refuse a broker without a login (mqtt://127.0.0.1:1)" in line, line
    assert "--allow-anonymous-broker" in line and not (tmp_path / "out" / "transcripts.sqlite").exists()
    assert main([*argv, "--allow-anonymous-broker"]) != 0
    assert "refuse a broker without a login" not in capsys.readouterr().err
