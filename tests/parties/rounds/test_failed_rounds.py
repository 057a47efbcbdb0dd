"""A round nobody answers is ``failed``, never decided from nothing: recorded with status failed and
decisions -1, nothing published for it; a round with one answer is an ordinary timeout. A store written
before ``failed`` existed is migrated and keeps its rounds."""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.messages import PartyMessage, WorkerStatus
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.outcome import NO_DECISION, RoundOutcome, failed_rounds_text, no_answers_text
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import MessageRows, RecordedMessage, RoundRecord, TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

pytestmark = pytest.mark.timeout(20)

SESSION, REPS = "fail", 3
TOPICS = Topics(SESSION)


async def test_a_round_with_no_answer_fails_and_one_with_an_answer_times_out(tmp_path: Path) -> None:
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 3)
    coordinator, _ = generate_key_pair()
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 3, REPS, ["r0", "r1"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule,
                            party_decisions=True)
        async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=REPS,
                               round_timeout=0.2) as engine, broker.connect("watch") as watch:
            await watch.subscribe(TOPICS.rounds, TOPICS.transcript)
            failed = await engine.run_round(0, "r0")
            running = asyncio.create_task(engine.run_round(1, "r1"))
            assert (await next_delivery(watch, 1.0)) is not None  # round 0's announcement
            assert (await next_delivery(watch, 1.0)) is not None  # round 1's: nothing published in between
            answer = PartyMessage.signed(keys[1], session=SESSION, round=1, party=1, repetitions=REPS,
                                         symbols=np.array([1, 0, 1], np.uint8))
            await watch.publish(TOPICS.party(1), answer.model_dump_json())
            timed_out = await running
            transcript = await next_delivery(watch, 1.0)  # round 1 had data: its transcript is published
            assert transcript is not None and transcript.topic == TOPICS.transcript
        assert (failed.status, failed.decisions.tolist(), failed.absent.tolist()) == ("failed", [NO_DECISION] * REPS,
                                                                                       [0, 1, 2])
        assert failed.participants.size == 0 and failed.messages_received == 0
        assert (timed_out.status, timed_out.participants.tolist(), timed_out.absent.tolist()) == ("timeout", [1], [0, 2])
        assert set(timed_out.decisions.tolist()) <= {0, 1}
        stored = store.load_round(SESSION, 0)
        assert stored.status == "failed" and stored.decisions.tolist() == [NO_DECISION] * REPS
    assert failed_rounds_text([failed, timed_out]) == (
        "1 of 2 round(s) failed with no answer at all (nothing was decided, their decisions are recorded as -1): "
        "0 (r0)")
    assert failed_rounds_text([timed_out]) is None


def test_a_store_from_before_failed_rounds_is_migrated(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with TranscriptStore(path) as store:
        store.open_session(SESSION, 1, 1, ["r0", "r1"], mode="simulation (seeded generators)")
    with sqlite3.connect(path) as db:  # the rounds table as the earlier schema wrote it, with one round
        db.executescript("""
            DROP TABLE rounds;
            CREATE TABLE rounds (
                session TEXT NOT NULL, round INTEGER NOT NULL, name TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('complete', 'timeout')),
                participants TEXT NOT NULL, abstained TEXT NOT NULL, absent TEXT NOT NULL,
                messages_received INTEGER NOT NULL, messages_rejected INTEGER NOT NULL, decided REAL NOT NULL,
                PRIMARY KEY (session, round)) WITHOUT ROWID;
            INSERT INTO rounds VALUES ('fail', 0, 'r0', 'timeout', '[]', '[]', '[0]', 0, 0, 1.0);
        """)
    with TranscriptStore(path) as store:
        assert store.recorded_rounds(SESSION) == [0]
        failed = RoundOutcome(name="r1", participants=np.zeros(0, np.int64), symbols=np.zeros((1, 0), np.uint8),
                              decisions=np.array([NO_DECISION]), messages_received=0, messages_rejected=0, index=1,
                              absent=np.array([0]), status="failed")
        store.record_round(RoundRecord(SESSION, failed, MessageRows(1, (RecordedMessage(
            0, "absent", None, np.zeros(0, np.uint8), None),)), {}))
        assert store.recorded_rounds(SESSION) == [0, 1] and store.load_round(SESSION, 1).status == "failed"


async def test_a_round_in_which_every_party_abstained_is_not_decided(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 3)
    coordinator, _ = generate_key_pair()
    path = tmp_path / "t.sqlite"
    with TranscriptStore(path) as store:
        store.open_session(SESSION, 3, REPS, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule,
                            party_decisions=True)
        async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=REPS,
                               round_timeout=0.5) as engine, broker.connect("watch") as watch:
            await watch.subscribe(TOPICS.rounds, TOPICS.transcript)
            with caplog.at_level(logging.WARNING, "mpdp.rounds"):
                running = asyncio.create_task(engine.run_round(0, "r0"))
                assert (await next_delivery(watch, 1.0)) is not None  # the announcement
                for party, reason in ((0, "policy"), (2, "policy"), (1, "budget-exhausted")):
                    abstention = PartyMessage.signed(keys[party], session=SESSION, round=0, party=party,
                                                     repetitions=REPS, reason=reason)
                    await watch.publish(TOPICS.party(party), abstention.model_dump_json())
                empty = await running
            assert await next_delivery(watch, 0.3) is None  # nothing published for it (no transcript)
    assert (empty.status, empty.decisions.tolist(), empty.participants.size) == ("no-answers", [NO_DECISION] * REPS, 0)
    assert empty.reasons == {"policy": [0, 2], "budget-exhausted": [1]} and empty.abstained.tolist() == [0, 1, 2]
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING and "NOT DECIDED" in r.message]
    assert warnings == ["observer: round 0 (r0) NOT DECIDED: no party released, every party heard from abstained "
                        "(budget-exhausted: 1; policy: 0,2)"]
    with TranscriptStore(path) as store:  # recorded so, with the reasons
        stored = store.load_round(SESSION, 0)
    assert (stored.status, stored.reasons, stored.exhausted.tolist()) == (
        "no-answers", {"budget-exhausted": [1], "policy": [0, 2]}, [1])
    assert no_answers_text([stored]) == (
        "1 of 1 round(s) had no answer to decide from: every party heard from abstained (nothing was decided, their "
        "decisions are recorded as -1; abstention reason and parties): 0 (r0: budget-exhausted 1; policy 0,2)")
    assert failed_rounds_text([stored]) is None


async def test_a_failed_workers_parties_are_not_waited_for_until_it_is_ready_again(tmp_path: Path) -> None:
    """Worker 0 (parties 0, 1) reports "failed" while round 0 waits for it: the round closes at once without its
    parties (not after round_timeout, 60 s here), and round 1 closes as soon as party 2 answered. Its "ready"
    again (restarted) makes round 2 wait for its parties again (complete once they answered). With worker 2 (party
    2) failed too, round 3 is ``failed`` at once: nobody is left to answer."""
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RandomizedResponse(1.0),) * 3)
    coordinator, _ = generate_key_pair()

    def status(state: str, worker: int = 0) -> str:
        parties = (0, 1) if worker == 0 else (2,)
        return WorkerStatus.signed([keys[p] for p in parties], session=SESSION, worker=worker,
                                   state=state, parties=parties,  # type: ignore[arg-type]
                                   detail="broken" if state == "failed" else "").model_dump_json()

    async def answer(party: int, index: int) -> None:
        message = PartyMessage.signed(keys[party], session=SESSION, round=index, party=party, repetitions=REPS,
                                      symbols=np.array([1, 0, 1], np.uint8))
        await watch.publish(TOPICS.party(party), message.model_dump_json())

    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 3, REPS, ["r0", "r1", "r2", "r3"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=REPS,
                               round_timeout=60.0, skip_failed=True) as engine, broker.connect("watch") as watch:
            await watch.subscribe(TOPICS.rounds)
            await watch.publish(TOPICS.status, status("ready"))
            await watch.publish(TOPICS.status, status("ready", worker=2))
            running = asyncio.create_task(engine.run_round(0, "r0"))
            assert await next_delivery(watch, 1.0) is not None  # round 0's announcement
            await answer(2, 0)
            await asyncio.sleep(0.1)
            assert not running.done()  # parties 0 and 1 are waited for
            await watch.publish(TOPICS.status, status("failed"))
            first = await asyncio.wait_for(running, 1.0)
            running = asyncio.create_task(engine.run_round(1, "r1"))
            assert await next_delivery(watch, 1.0) is not None
            await answer(2, 1)
            second = await asyncio.wait_for(running, 1.0)
            await watch.publish(TOPICS.status, status("ready"))  # restarted
            await asyncio.sleep(0.05)
            assert engine.failed_workers == {}
            running = asyncio.create_task(engine.run_round(2, "r2"))
            assert await next_delivery(watch, 1.0) is not None
            await answer(2, 2)
            await asyncio.sleep(0.1)
            assert not running.done()  # its parties are waited for again
            await answer(0, 2)
            await answer(1, 2)
            third = await asyncio.wait_for(running, 1.0)
            await watch.publish(TOPICS.status, status("failed"))
            await watch.publish(TOPICS.status, status("failed", worker=2))
            await asyncio.sleep(0.05)
            fourth = await asyncio.wait_for(engine.run_round(3, "r3"), 1.0)
    assert [(o.status, o.participants.tolist(), o.absent.tolist()) for o in (first, second, third, fourth)] == [
        ("timeout", [2], [0, 1]), ("timeout", [2], [0, 1]), ("complete", [0, 1, 2], []), ("failed", [], [0, 1, 2])]
