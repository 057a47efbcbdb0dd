"""The engine reads a simulation worker's answer bundles (broker/bundle.py): each entry counts as if it had come
on its party's topic (the recorded bytes are the entry's), a party that is not one of the bundling worker's
ready parties is rejected ``topic`` (as an answer on another party's topic), a bundle that does not parse is one
``schema``, and a forged entry is rejected ``signature`` without spoiling the others."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.bundle import encode_bundle
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import generate_key_pair
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


async def test_bundle_entries_count_as_their_parties_answers(tmp_path: Path) -> None:
    roster, keys = Roster.generate((RandomizedResponse(0.7),) * 4)
    broker = InMemoryBroker()
    answers = [_answer(keys[p], p, p % 2) for p in range(4)]
    forged = _answer(generate_key_pair()[0], 3, 1)
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 4, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1,
                               round_timeout=0.5, bundles=True) as engine, broker.connect("worker") as worker:
            ready = WorkerStatus.signed((keys[0], keys[1], keys[3]), session=SESSION, worker=0, state="ready",
                                        parties=(0, 1, 3), detail="")
            await worker.publish(TOPICS.status, ready.model_dump_json())
            await asyncio.sleep(0.05)
            round_0 = asyncio.create_task(engine.run_round(0, "r0"))
            await asyncio.sleep(0.05)
            await worker.publish(TOPICS.bundle(0), encode_bundle(
                [(0, answers[0]), (2, answers[2]), (3, forged), (1, answers[1])]))  # 2 is not worker 0's
            await worker.publish(TOPICS.bundle(1), encode_bundle([(2, answers[2])]))  # worker 1 never said ready
            await worker.publish(TOPICS.bundle(0), b"\x03junk")
            outcome = await round_0
        assert outcome.participants.tolist() == [0, 1] and outcome.absent.tolist() == [2, 3]
        assert dict(engine.rejections.counts) == {"topic": 2, "signature": 1, "schema": 1}
        assert [store.recorded_payload(SESSION, 0, p) for p in (0, 1)] == answers[:2]
        assert outcome.symbols is not None and outcome.symbols.tolist() == [[0, 1]]
