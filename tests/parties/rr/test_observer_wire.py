"""The observer on binary party answers (in-memory broker, real SQLite): the packed range check per
message, all participants unpacked at the close, the bytes stored exactly as received, and a round in
which every party abstains."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.mqtt_fixtures import brute_force_majority

pytestmark = pytest.mark.timeout(30)
REPS, TOPICS = 6, Topics("wire-obs")
MECHANISMS = (RandomizedResponse(1.0), RandomizedResponse(1.0), RandomizedResponse(2.0, 0.1))  # 2, 2, 4 symbols
ROSTER, KEYS = Roster.generate(MECHANISMS)


def _answer(party: int, index: int, symbols: list[int] | None) -> bytes:
    return PartyMessage.signed(KEYS[party], session=TOPICS.session, round=index, party=party, repetitions=REPS,
                               symbols=None if symbols is None else np.array(symbols, np.uint8),
                               reason="did-not-vote" if symbols is None else None).to_wire()


async def _rounds(store: TranscriptStore, sends: list[list[tuple[int, bytes]]]) -> list:
    observer = Observer(TOPICS, ROSTER, store, function=parse_function("majority"),
                        measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
    outcomes = []
    async with open_engine(InMemoryBroker(), TOPICS, ROSTER, store, generate_key_pair()[0], observer,
                           repetitions=REPS, round_timeout=5.0) as engine:
        for index, messages in enumerate(sends):
            running = asyncio.create_task(engine.run_round(index, f"r{index}"))
            await asyncio.sleep(0)
            for party, payload in messages:
                engine.handle(TOPICS.party(party), payload)
            outcomes.append(await running)
        rejections = dict(engine.rejections.counts)
    return [outcomes, rejections]


async def test_binary_answers_are_checked_packed_decided_and_stored_as_received(tmp_path: Path) -> None:
    s0, s2 = [1, 0, 1, 1, 0, 1], [3, 2, 1, 0, 2, 3]
    first = [(0, _answer(0, 0, [0, 2, 0, 0, 0, 0])),  # symbol 2 from a two-symbol party: symbol-range
             (0, _answer(0, 0, s0)), (1, _answer(1, 0, None)), (2, _answer(2, 0, s2))]
    everyone_abstains = [(p, _answer(p, 1, None)) for p in range(3)]
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(TOPICS.session, 3, REPS, ["r0", "r1"], mode="simulation (seeded generators)")
        (decided, abstained), rejections = await _rounds(store, [first, everyone_abstains])
        stored = {party: payload for party, payload in store.query(
            "SELECT party, payload FROM messages WHERE round = 0 ORDER BY party")}
        recorded = store.load_round(TOPICS.session, 0)
    assert rejections == {"symbol-range": 1}
    assert decided.status == "complete" and decided.participants.tolist() == [0, 2]
    assert np.array_equal(decided.symbols, np.array([s0, s2], np.uint8).T)
    expected, _ = brute_force_majority([MECHANISMS[0], MECHANISMS[2]], decided.symbols)
    assert decided.decisions.tolist() == expected.tolist()
    assert np.array_equal(recorded.symbols, decided.symbols)
    assert stored == {0: first[1][1], 1: first[2][1], 2: first[3][1]}  # the bytes as received
    # every party abstained: not decided from nothing (decisions -1), the reason recorded
    assert (abstained.status, abstained.participants.tolist(), abstained.abstained.tolist()) == ("no-answers", [],
                                                                                                   [0, 1, 2])
    assert abstained.decisions.tolist() == [-1] * REPS and abstained.reasons == {"did-not-vote": [0, 1, 2]}
    assert abstained.symbols is not None and abstained.symbols.shape == (REPS, 0)
