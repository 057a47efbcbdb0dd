"""Issue 22: answers expected but never received are named (``RoundOutcome.lost``), and a failing coordinator
announces a signed failed end (``open_engine(announce_failure=True)``) that ends its parties at once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.messages import FAILED_END, Announcement
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.outcome import RoundOutcome, lost_answers, lost_answers_text
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

pytestmark = pytest.mark.timeout(20)

SESSION = "lost"
TOPICS = Topics(SESSION)


def test_a_missing_party_of_a_host_that_answered_is_lost_and_a_silent_host_is_not() -> None:
    hosts = [(0, 1, 2), (3, 4), (5,), (6, 7)]
    heard = {0, 2, 5, 6, 7}  # host (0-2) lost 1; host (3, 4) silent: gone, not a loss; the others complete
    assert lost_answers(hosts, heard).tolist() == [1]
    assert lost_answers(hosts, set(range(8))).tolist() == []
    assert lost_answers([(0, 1, 2, 3)], {3}).tolist() == [0, 1, 2]
    assert lost_answers([], {1}).dtype == np.int64


def _round(index: int, lost: list[int]) -> RoundOutcome:
    ids = np.array(lost, dtype=np.int64)
    return RoundOutcome(name=f"bill {index}", participants=np.zeros(0, np.int64), symbols=None,
                        decisions=np.zeros(1, np.int64), messages_received=0, messages_rejected=0, index=index,
                        absent=ids, status="timeout", lost=ids)


def test_the_lost_line_names_each_round_and_its_parties() -> None:
    assert lost_answers_text([_round(0, [])]) is None
    text = lost_answers_text([_round(0, [1, 2, 3, 7]), _round(1, []), _round(2, [4])])
    assert text is not None and text.startswith("LOST ANSWERS: 5 answer(s) expected but never received")
    assert "round 0 (bill 0): parties 1-3,7; round 2 (bill 2): parties 4;" in text, text


async def test_a_failing_coordinator_announces_a_signed_failed_end_and_a_cancelled_one_does_not(
        tmp_path: Path) -> None:
    broker = InMemoryBroker()
    roster, _ = Roster.generate((RandomizedResponse(1.0),) * 2)
    coordinator, public = generate_key_pair()
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 2, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with broker.connect("watch") as watch:
            await watch.subscribe(TOPICS.rounds)
            with pytest.raises(BaseExceptionGroup) as raised:  # the engine's task group (the runner surfaces it)
                async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=1,
                                       round_timeout=0.2, announce_failure=True):
                    raise WorkerError("a validator died")
            assert [str(e) for e in raised.value.exceptions] == ["a validator died"]
            delivery = await next_delivery(watch, 1.0)
            assert delivery is not None
            end = Announcement.model_validate_json(delivery.payload)
            verify_message(end, public)
            assert (end.kind, end.name) == ("end", f"{FAILED_END}WorkerError: a validator died")
            stopped = asyncio.create_task(_engine_until_cancelled(broker, roster, store, coordinator, observer))
            await asyncio.sleep(0.05)
            stopped.cancel()
            with pytest.raises(asyncio.CancelledError):
                await stopped
            assert await next_delivery(watch, 0.3) is None  # Ctrl-C: nothing announced


async def _engine_until_cancelled(broker: InMemoryBroker, roster: Roster, store: TranscriptStore, coordinator: bytes,
                                  observer: Observer) -> None:
    async with open_engine(broker, TOPICS, roster, store, coordinator, observer, repetitions=1, round_timeout=0.2,
                           announce_failure=True):
        await asyncio.Event().wait()
