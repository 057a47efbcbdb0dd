"""A dead observer is noticed: the engine publishes a signed heartbeat on the heartbeat topic whenever it
announced nothing for an interval; a party that has heard the coordinator leaves after ``observer_grace``
seconds of silence with an error that says so. Heartbeats keep it, forged or replayed ones do not, and a
heartbeat (its own topic and sequence) never makes a round announcement look replayed; a heartbeat delivered again
is counted, not rejected (at-least-once delivery)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import Party
from mpdp.protocols.errors import TransportError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.calibration import scaled
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, PARTY_PRIVATE, TOPICS, _drain

pytestmark = pytest.mark.timeout(20)

GRACE = 0.4


def _beat(index: int = 0, key: bytes = COORD_PRIVATE) -> str:
    return Announcement.signed(key, session="s", kind="heartbeat", round=index, repetitions=1).model_dump_json()


def _round(index: int) -> str:
    return Announcement.signed(COORD_PRIVATE, session="s", kind="round", round=index, repetitions=1).model_dump_json()


async def test_a_party_leaves_after_its_grace_once_the_observer_falls_silent() -> None:
    spec = PartySpec(1, np.array([1, 0, 1], np.int8), RandomizedResponse(1.0), PARTY_PRIVATE,
                     np.random.SeedSequence(1), None, PrivacyLedger(1e-6))
    broker = InMemoryBroker()
    party = Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=5.0, observer_grace=GRACE)
    stranger, _ = generate_key_pair()
    async with broker.connect("coordinator") as coordinator:
        await coordinator.subscribe(TOPICS.all_parties)
        ready = asyncio.Event()
        task = asyncio.create_task(party.run(ready.set))
        await ready.wait()
        await asyncio.sleep(2 * GRACE)  # before the first announcement the idle timeout (5 s) applies
        assert not task.done()
        await coordinator.publish(TOPICS.heartbeat, beat := _beat())
        for _ in range(4):  # heartbeats keep it: 4 x 0.6 GRACE > GRACE
            await asyncio.sleep(0.6 * GRACE)
            await coordinator.publish(TOPICS.heartbeat, _beat())
        await coordinator.publish(TOPICS.rounds, _round(0))  # newer heartbeats do not shadow the round
        last_sign_of_life = time.monotonic()  # the party hears the round after this, so its silence starts later
        await asyncio.sleep(0.6 * GRACE)
        await coordinator.publish(TOPICS.heartbeat, _beat(0, stranger))  # forged: no sign of life
        await coordinator.publish(TOPICS.heartbeat, beat)  # replayed: no sign of life
        silent = time.monotonic()
        with pytest.raises(TransportError, match=rf"party 1: the observer has sent no round and no heartbeat for "
                                                 rf"{GRACE:g} s \(--observer-grace\): it is gone"):
            await task
        waited = time.monotonic() - silent
        silence = time.monotonic() - last_sign_of_life
        assert [m.round for m in await _drain(coordinator)] == [0]
    assert party.rejections.counts == {"signature": 1} and party.loop.clock.redelivered == 1  # a copy: no alarm
    # never before its grace after the last genuine message (however late the sleeps wake), and not long after
    assert silence >= GRACE and waited <= GRACE + scaled(1.0)


async def test_the_engine_beats_only_when_it_announced_nothing_for_an_interval(tmp_path: Path) -> None:
    broker = InMemoryBroker()
    roster, _ = Roster.generate((RandomizedResponse(1.0),))
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s", 1, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with broker.connect("watch") as watch, open_engine(
                broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1, round_timeout=0.5) as engine:
            await watch.subscribe(TOPICS.rounds, TOPICS.heartbeat)
            beats = asyncio.create_task(engine.heartbeat(0.1))
            seen, where = [], []
            while (delivery := await next_delivery(watch, 0.35)) is not None and len(seen) < 3:
                seen.append(Announcement.model_validate_json(delivery.payload))
                where.append(delivery.topic)
            await engine.run_round(0, "r0")  # 0.5 s: a heartbeat every 0.1 s of it, after its announcement
            await engine.finish(1)
            await asyncio.sleep(0.3)
            while (delivery := await next_delivery(watch, 0.05)) is not None:
                seen.append(Announcement.model_validate_json(delivery.payload))
                where.append(delivery.topic)
            assert beats.done()  # the end stops the heartbeat
    kinds = [a.kind for a in seen]
    assert kinds[:3] == ["heartbeat"] * 3 and kinds[-1] == "end" and kinds.count("round") == 1
    assert 3 <= kinds[kinds.index("round"):].count("heartbeat") <= 6
    assert all(verify_message(a, COORD_PUBLIC) for a in seen)
    assert all(a.round == 0 for a in seen if a.kind == "heartbeat")
    # heartbeats on their own topic (read once per party process), rounds and the end on the rounds topic
    assert [t for a, t in zip(seen, where, strict=True) if a.kind == "heartbeat"] == [TOPICS.heartbeat] * kinds.count("heartbeat")
    assert [t for a, t in zip(seen, where, strict=True) if a.kind != "heartbeat"] == [TOPICS.rounds] * 2
