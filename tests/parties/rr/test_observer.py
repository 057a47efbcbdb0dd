"""The observer over a real mosquitto: forged, unknown, duplicate, wrong-session and malformed
messages sent by a real client are rejected and counted, never recorded."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiomqtt
import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.engine import RoundEngine, open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.mqtt_fixtures import brute_force_majority

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60), pytest.mark.asyncio(loop_scope="session")]
REPS = 5


@contextlib.asynccontextmanager
async def _observing(mosquitto: BrokerEndpoint, topics: Topics, roster: Roster, store: TranscriptStore,
                     coord_private: bytes, round_timeout: float) -> AsyncIterator[tuple[RoundEngine, aiomqtt.Client]]:
    """A majority observer on the round engine, and a raw client subscribed to the announcements."""
    async with open_engine(
        mosquitto, topics, roster, store, coord_private,
        Observer(topics, roster, store, function=parse_function("majority"), measure=accuracy_measure("zero-one", 2),
                 rule_factory=observer_average_rule),
        repetitions=REPS, round_timeout=round_timeout,
    ) as observer, mosquitto.client(f"{topics.session}-sender") as sender:
        await sender.subscribe(topics.rounds, qos=1)
        yield observer, sender


async def test_invalid_messages_are_rejected_counted_and_not_recorded(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"obs{tmp_path.name[-8:].replace('_', '')}"
    topics = Topics(session)
    mechanisms = (RandomizedResponse(1.0), RandomizedResponse(1.0), RandomizedResponse(2.0, 0.1))
    roster, keys = Roster.generate(mechanisms)
    coord_private, coord_public = generate_key_pair()
    stranger, _ = generate_key_pair()
    symbols = {0: np.array([1, 0, 1, 1, 0], np.uint8), 2: np.array([3, 2, 1, 0, 2], np.uint8)}

    def message(party: int, key: bytes, **changes: object) -> PartyMessage:
        fields = dict(session=session, round=0, party=party, repetitions=REPS)
        fields.update(changes)  # type: ignore[arg-type]
        if party == 1 and "reason" not in changes:
            fields["reason"] = "did-not-vote"
        elif "reason" not in changes:
            fields["symbols"] = symbols.get(party, np.zeros(REPS, np.uint8))
        return PartyMessage.signed(key, **fields)  # type: ignore[arg-type]

    good0 = message(0, keys[0])
    sends = [
        (topics.party(0), good0.model_dump_json()),
        (topics.party(1), message(1, stranger).model_dump_json()),                     # signature
        (topics.party(7), message(7, stranger).model_dump_json()),                     # unknown-party
        (topics.party(0), good0.model_dump_json()),                    # the same again: a re-send, ignored
        (topics.party(0), message(0, keys[0]).model_dump_json()),                      # double-release (new nonce)
        (topics.party(2), message(2, keys[2]).model_dump_json().replace(session, "other", 1)),  # session
        (topics.party(2), "{not json"),                                                # schema
        (topics.party(2), message(1, keys[1]).model_dump_json()),                      # topic
        (topics.party(2), message(2, keys[2], round=1).model_dump_json()),             # round
        (topics.party(2), message(2, keys[2], repetitions=REPS + 1,
                                  symbols=np.zeros(REPS + 1, np.uint8)).model_dump_json()),  # repetitions
        (topics.party(0), message(0, keys[0]).model_dump_json()),                      # double-release
        (topics.party(1), message(1, keys[1]).model_dump_json()),                      # valid abstention
        (topics.party(2), message(2, keys[2]).model_dump_json()),                      # valid, completes
    ]
    sends.insert(8, (topics.party(0), message(0, keys[0], symbols=np.array([2, 0, 0, 0, 0], np.uint8)).model_dump_json()))

    store = TranscriptStore(tmp_path / "t.sqlite")
    store.open_session(session, 3, REPS, ["r0"], mode="simulation (seeded generators)")
    async with _observing(mosquitto, topics, roster, store, coord_private, 10.0) as (observer, sender):
        round_task = asyncio.create_task(observer.run_round(0, "r0"))
        async with asyncio.timeout(5):
            announcement = Announcement.model_validate_json(bytes((await anext(aiter(sender.messages))).payload))
        assert (announcement.kind, announcement.round, announcement.repetitions) == ("round", 0, REPS)
        for topic, payload in sends:
            await sender.publish(topic, payload, qos=1)
        outcome = await round_task

    assert outcome.status == "complete" and outcome.messages_received == 3
    assert outcome.participants.tolist() == [0, 2] and outcome.abstained.tolist() == [1]
    assert np.array_equal(outcome.symbols, np.stack([symbols[0], symbols[2]], axis=1))
    decisions, clear = brute_force_majority([mechanisms[0], mechanisms[2]], outcome.symbols)
    assert clear.all() and outcome.decisions.tolist() == decisions.tolist()
    expected = {"signature": 1, "unknown-party": 1, "double-release": 2, "session": 1, "schema": 1, "topic": 1,
                "round": 1, "repetitions": 1}
    # the symbol-range message (party 0, symbol 2 from a pure party) arrives after party 0's valid one: validly
    # signed by party 0, so a double release too
    assert outcome.messages_rejected == sum(expected.values()) + 1
    assert store.rejects(session) == {(0, r): n + (r == "double-release") for r, n in expected.items()}
    stored = store.load_round(session, 0)
    assert np.array_equal(stored.symbols, outcome.symbols) and stored.decisions.tolist() == outcome.decisions.tolist()
    payloads = [row["payload"] for row in store.messages(session)]
    assert json.loads(payloads[0])["nonce"] == good0.nonce and len(payloads) == 3
    assert stored.double_released.tolist() == [0, 0, 0]  # three more answers of party 0, each kept
    store.close()


async def test_symbol_range_and_timeout_records_the_absent(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"obt{tmp_path.name[-8:].replace('_', '')}"
    topics = Topics(session)
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 3)
    coord_private, _ = generate_key_pair()
    store = TranscriptStore(tmp_path / "t.sqlite")
    store.open_session(session, 3, REPS, ["r0"], mode="simulation (seeded generators)")
    async with _observing(mosquitto, topics, roster, store, coord_private, 1.0) as (observer, sender):
        round_task = asyncio.create_task(observer.run_round(0, "r0"))
        async with asyncio.timeout(5):
            await anext(aiter(sender.messages))
        bad = PartyMessage.signed(keys[0], session=session, round=0, party=0, repetitions=REPS,
                                  symbols=np.array([0, 1, 2, 0, 0], np.uint8))
        good = PartyMessage.signed(keys[2], session=session, round=0, party=2, repetitions=REPS,
                                   symbols=np.ones(REPS, np.uint8))
        await sender.publish(topics.party(0), bad.model_dump_json(), qos=1)
        await sender.publish(topics.party(2), good.model_dump_json(), qos=1)
        outcome = await round_task
        late = PartyMessage.signed(keys[1], session=session, round=0, party=1, repetitions=REPS,
                                   symbols=np.ones(REPS, np.uint8))
        await sender.publish(topics.party(1), late.model_dump_json(), qos=1)
        await asyncio.sleep(0.3)
    assert outcome.status == "timeout" and outcome.absent.tolist() == [0, 1]
    assert outcome.participants.tolist() == [2] and outcome.decisions.tolist() == [1] * REPS  # one party, eps 1, reports 1
    assert store.rejects(session) == {(0, "symbol-range"): 1, (0, "late"): 1}
    kinds = [(row["party"], row["kind"]) for row in store.messages(session)]
    assert kinds == [(0, "absent"), (1, "absent"), (2, "symbols")]
    store.close()
