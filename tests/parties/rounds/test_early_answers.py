"""What a restarted observer's persistent session delivers is kept, not thrown away: verified answers to a
round this engine has not announced yet count when that round opens (at most EARLY_ROUNDS rounds of them);
forged ones are still rejected; the parties' identical re-sends are no duplicates."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.engine import EARLY_ROUNDS, open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("early")


async def test_answers_before_their_round_opens_count_when_it_does(tmp_path: Path) -> None:
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 2)
    stranger, _ = generate_key_pair()
    coordinator, _ = generate_key_pair()

    def answer(party: int, index: int, key: bytes | None = None) -> str:
        return PartyMessage.signed(key or keys[party], session="early", round=index, party=party, repetitions=1,
                                   symbols=np.array([party], np.uint8)).model_dump_json()

    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("early", 2, 1, ["r0", "r1", "r2", "r3"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=1,
                               round_timeout=0.3) as engine, broker.connect("sender") as sender:
            round_2 = answer(0, 2)
            for text in (answer(0, 1), answer(1, 1), answer(0, 1, stranger), round_2, answer(0, 3)):
                await sender.publish(TOPICS.party(int(PartyMessage.from_wire(text).party)), text)
            await asyncio.sleep(0.05)  # all handled before any round opens
            outcome = await engine.run_round(1, "r1")  # both answers were there before it opened
            running = asyncio.create_task(engine.run_round(2, "r2"))
            await asyncio.sleep(0.05)
            await sender.publish(TOPICS.party(0), round_2)  # the party's re-send when round 2 opens: no duplicate
            later = await running
            assert dict(engine.rejections.counts) == {"signature": 1, "round": 1}  # round 3: beyond EARLY_ROUNDS
    assert EARLY_ROUNDS == 2
    assert outcome.status == "complete" and outcome.participants.tolist() == [0, 1]
    assert later.participants.tolist() == [0] and later.absent.tolist() == [1]
