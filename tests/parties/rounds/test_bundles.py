"""The engine reads a simulation worker's answer bundles (broker/bundle.py), signed with the bundle key that the
worker's parties endorsed in its signed "ready": each entry counts as if it had come on its party's topic (the
recorded bytes are the entry's, the party's own signed answer); a party that is not one of the bundling worker's
ready parties is rejected ``topic`` (as an answer on another party's topic); a bundle that does not parse is one
``schema``, one signed with another key (a forgery, or another worker's bundle replayed on this worker's topic) one
``signature``, one from a worker that is not ready one ``topic``; a bundle delivered again changes nothing in its
round and is ``late`` after it; a second, different answer of a party in a valid bundle is a double release."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.bundle import encode_bundle
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import PrivateKey, generate_key_pair, load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.broker.wire import sign_answer
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

pytestmark = pytest.mark.timeout(20)

SESSION = "bundles"
TOPICS = Topics(SESSION)
COORD_PRIVATE, _ = generate_key_pair()


def _answer(key: bytes, party: int, symbol: int) -> bytes:
    return sign_answer(key, session=SESSION, round=0, party=party, repetitions=1,
                       symbols=np.array([symbol], dtype=np.uint8)).to_wire()


def _bundle_key() -> tuple[PrivateKey, bytes]:
    private, public = generate_key_pair()
    return load_private_key(private), public


def _observer(roster: Roster, store: TranscriptStore) -> Observer:
    store.open_session(SESSION, roster.k, 1, ["r0"], mode="simulation (seeded generators)")
    return Observer(TOPICS, roster, store, function=parse_function("majority"),
                    measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)


async def test_bundle_entries_count_as_their_parties_answers_under_the_workers_key(tmp_path: Path) -> None:
    roster, keys = Roster.generate((RandomizedResponse(0.7),) * 4)
    broker = InMemoryBroker()
    answers = [_answer(keys[p], p, p % 2) for p in range(4)]
    other_0 = _answer(keys[0], 0, 1)  # party 0's second, different, validly signed answer to round 0
    signer, public = _bundle_key()
    stranger, _ = _bundle_key()

    def bundle(entries: list[tuple[int, bytes]], key: PrivateKey = signer, worker: int = 0) -> bytes:
        return encode_bundle(entries, key, session=SESSION, worker=worker)

    genuine = bundle([(0, answers[0]), (1, answers[1])])
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, _observer(roster, store), repetitions=1,
                               round_timeout=0.5, bundles=True) as engine, broker.connect("worker") as worker:
            ready = WorkerStatus.signed((keys[0], keys[1], keys[3]), session=SESSION, worker=0, state="ready",
                                        parties=(0, 1, 3), bundle_key=public)
            await worker.publish(TOPICS.status, ready.model_dump_json())
            await asyncio.sleep(0.05)
            round_0 = asyncio.create_task(engine.run_round(0, "r0"))
            await asyncio.sleep(0.05)
            await worker.publish(TOPICS.bundle(0), genuine)
            await worker.publish(TOPICS.bundle(0), genuine)  # delivered again: the same answers, nothing new
            await worker.publish(TOPICS.bundle(0), bundle([(2, answers[2])]))  # party 2 is not worker 0's: topic
            await worker.publish(TOPICS.bundle(0), bundle([(3, answers[3])], key=stranger))  # forged: signature
            await worker.publish(TOPICS.bundle(1), bundle([(2, answers[2])], worker=1))  # worker 1 not ready: topic
            await worker.publish(TOPICS.bundle(0), b"\x04junk")  # schema
            await worker.publish(TOPICS.bundle(0), bundle([(0, other_0)]))  # double release
            outcome = await round_0
            assert dict(engine.rejections.counts) == {"topic": 2, "signature": 1, "schema": 1, "double-release": 1}
            await worker.publish(TOPICS.bundle(0), genuine)  # after the close: late, each answer
            await asyncio.sleep(0.05)
            assert dict(engine.rejections.counts) == {"topic": 2, "signature": 1, "schema": 1, "double-release": 1,
                                                      "late": 2}
        assert outcome.participants.tolist() == [0, 1] and outcome.absent.tolist() == [2, 3]
        assert outcome.double_released.tolist() == [0]
        assert [store.recorded_payload(SESSION, 0, p) for p in (0, 1)] == answers[:2]  # each party's own signed bytes
        assert outcome.symbols is not None and outcome.symbols.tolist() == [[0, 1]]


async def test_a_bundle_counts_only_under_the_key_every_party_of_the_ready_report_endorsed(tmp_path: Path) -> None:
    """A worker that named no bundle key, or another worker's key (a bundle replayed on its topic), gets its bundle
    rejected ``signature``; a part of a worker's report naming another key than its earlier part is ``schema`` and
    adds none of its parties; a report a party did not sign with its own key adds nothing (``signature``)."""
    roster, keys = Roster.generate((RandomizedResponse(0.7),) * 4)
    broker = InMemoryBroker()
    answers = [_answer(keys[p], p, 1) for p in range(4)]
    signer_0, public_0 = _bundle_key()
    _, public_1 = _bundle_key()
    stranger = generate_key_pair()[0]
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, _observer(roster, store), repetitions=1,
                               round_timeout=0.5, bundles=True) as engine, broker.connect("worker") as worker:
            reports = [
                WorkerStatus.signed((keys[0],), session=SESSION, worker=0, state="ready", parties=(0,),
                                    bundle_key=public_0),
                WorkerStatus.signed((keys[1],), session=SESSION, worker=0, state="ready", parties=(1,),
                                    bundle_key=public_1),  # a further part naming another key: schema
                WorkerStatus.signed((keys[2],), session=SESSION, worker=1, state="ready", parties=(2,)),  # no key
                WorkerStatus.signed((stranger,), session=SESSION, worker=2, state="ready", parties=(3,),
                                    bundle_key=public_0),  # party 3 did not sign it: signature
            ]
            for report in reports:
                await worker.publish(TOPICS.status, report.model_dump_json())
            await asyncio.sleep(0.05)
            assert {w: s.parties for w, s in engine.ready_workers.items()} == {0: (0,), 1: (2,)}
            round_0 = asyncio.create_task(engine.run_round(0, "r0"))
            await asyncio.sleep(0.05)
            await worker.publish(TOPICS.bundle(1), encode_bundle([(2, answers[2])], signer_0, session=SESSION,
                                                                 worker=1))  # worker 1 named no key: signature
            await worker.publish(TOPICS.bundle(2), encode_bundle([(3, answers[3])], signer_0, session=SESSION,
                                                                 worker=2))  # worker 2 is not ready: topic
            await worker.publish(TOPICS.bundle(0), encode_bundle([(0, answers[0])], signer_0, session=SESSION,
                                                                 worker=0))
            outcome = await round_0
        assert dict(engine.rejections.counts) == {"schema": 1, "signature": 2, "topic": 1}
        assert outcome.participants.tolist() == [0] and outcome.absent.tolist() == [1, 2, 3]
