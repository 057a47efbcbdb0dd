"""The observer publishes each closed round's transcript (coordinator-signed) and validates the parties'
decision messages over a real mosquitto: forged, foreign, duplicate and out-of-range ones are rejected
and counted, valid ones recorded."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.decision_messages import DecisionMessage, TranscriptMessage
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import zero_one_rules

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60), pytest.mark.asyncio(loop_scope="session")]
REPS = 4


async def test_transcript_published_and_decisions_validated(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"pdo{tmp_path.name[-8:].replace('_', '')}"
    topics = Topics(session)
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 3)
    coord_private, coord_public = generate_key_pair()
    stranger, _ = generate_key_pair()
    store = TranscriptStore(tmp_path / "t.sqlite")
    store.open_session(session, 3, REPS, ["r0"], mode="simulation (seeded generators)")
    symbols = {0: np.array([1, 0, 1, 1], np.uint8), 2: np.array([0, 0, 1, 1], np.uint8)}
    deciding = Observer(topics, roster, store, function=parse_function("majority"),
                        measure=accuracy_measure("zero-one", 2), rule_factory=zero_one_rules(engine="posterior"), party_decisions=True)
    async with open_engine(
        mosquitto, topics, roster, store, coord_private, deciding, repetitions=REPS, round_timeout=10.0,
    ) as observer, mosquitto.client(f"{session}-sender") as sender:
        await sender.subscribe(topics.rounds, qos=1)
        await sender.subscribe(topics.transcript, qos=1)
        messages = aiter(sender.messages)
        round_task = asyncio.create_task(observer.run_round(0, "r0"))
        async with asyncio.timeout(5):
            await anext(messages)  # the announcement
        for party in (0, 2):
            answer = PartyMessage.signed(keys[party], session=session, round=0, party=party, repetitions=REPS,
                                         symbols=symbols[party])
            await sender.publish(topics.party(party), answer.model_dump_json(), qos=1)
        await sender.publish(topics.party(1), PartyMessage.signed(
            keys[1], session=session, round=0, party=1, repetitions=REPS, reason="did-not-vote").model_dump_json(), qos=1)
        outcome = await round_task
        async with asyncio.timeout(5):
            transcript = TranscriptMessage.model_validate_json(bytes((await anext(messages)).payload))
        assert verify_message(transcript, coord_public) and transcript.participants == (0, 2)
        assert np.array_equal(transcript.symbol_matrix(), outcome.symbols)

        def decision(party: int, key: bytes, values: list[int], round: int = 0) -> str:
            return DecisionMessage.signed(key, session=session, round=round, party=party,
                                          decisions=np.array(values)).model_dump_json()

        sends = [
            (topics.decision(0), decision(0, stranger, [1, 1, 1, 1])),   # signature
            (topics.decision(1), decision(1, keys[1], [1, 1, 1, 1])),    # not-participant (abstained)
            (topics.decision(0), decision(0, keys[0], [1, 0, 1, 2])),    # decision-range (|Y| = 2)
            (topics.decision(2), decision(2, keys[2], [0, 0, 0])),       # repetitions
            (topics.decision(2), decision(2, keys[2], [0, 0, 0, 0], round=5)),  # round
            (topics.decision(2), decision(0, keys[0], [0, 0, 0, 0])),    # topic
            (topics.decision(0), decision(0, keys[0], [1, 0, 1, 1])),    # valid
            (topics.decision(0), decision(0, keys[0], [1, 1, 1, 1])),    # duplicate
            (topics.decision(2), decision(2, keys[2], [0, 0, 1, 1])),    # valid
        ]
        for topic, payload in sends:
            await sender.publish(topic, payload, qos=1)
        assert deciding.decisions is not None and await deciding.decisions.collect(5.0)
    assert deciding.decisions.received == 2
    recorded = store.party_decisions(session, 0)
    assert {p: d.tolist() for p, d in recorded.items()} == {0: [1, 0, 1, 1], 2: [0, 0, 1, 1]}
    expected = {"signature": 1, "not-participant": 1, "decision-range": 1, "repetitions": 1, "round": 1,
                "topic": 1, "duplicate": 1}
    assert store.rejects(session) == {(0, reason): n for reason, n in expected.items()}
    store.close()
