"""Liveness that tells slow from gone (parties/rounds/liveness.py): a heartbeat delayed past the old 60 s
lifetime still counts, silence is counted only while the connection is up, a party process reads each
heartbeat once (one subscription per worker, whatever its parties), and the parties of a worker share
that one clock."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.control import DEFAULT_LIFETIME
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.liveness import ObserverClock, Stopwatch
from mpdp.parties.rr.party import Party, PartySpec
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import ProtocolViolation, TransportError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, PARTY_PRIVATE, TOPICS

pytestmark = pytest.mark.timeout(30)


class FakeTime:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _beat(index: int = 0, lifetime: float = DEFAULT_LIFETIME) -> bytes:
    return Announcement.signed(COORD_PRIVATE, session="s", kind="heartbeat", round=index, repetitions=1,
                               lifetime=lifetime).model_dump_json().encode()


def test_the_stopwatch_counts_only_time_while_the_connection_is_up() -> None:
    now, down = FakeTime(), [0.0]
    watch = Stopwatch(lambda: down[0], now)
    now.now += 3.0
    assert watch.elapsed() == 3.0
    now.now += 14.0
    down[0] += 10.0  # 10 of those 14 s without the broker
    assert watch.elapsed() == 7.0
    other = [50.0]
    watch.follow(lambda: other[0])  # another connection from now on: what was counted stays
    now.now += 2.0
    other[0] += 1.0
    assert watch.elapsed() == 8.0
    watch.restart()
    assert watch.elapsed() == 0.0


def test_a_heartbeat_delayed_by_a_busy_machine_still_counts_a_replay_does_not() -> None:
    """Signed 90 s before it is read (its lifetime is DEFAULT_LIFETIME, minutes): past the 60 s it used to
    live, it still proves the observer alive; the same heartbeat again is ignored by its sequence."""
    assert DEFAULT_LIFETIME >= 300.0
    now = FakeTime()
    clock = ObserverClock(Announcement, TOPICS, COORD_PUBLIC, clock=now)
    delayed = _beat(3, lifetime=DEFAULT_LIFETIME - 90.0)  # as if signed 90 s ago
    now.now += 50.0
    assert not clock.heard and clock.silence() == 50.0
    clock.offer(delayed)
    assert clock.heard and clock.round == 3 and clock.silence() == 0.0
    now.now += 7.0
    clock.offer(delayed)  # again: no sign of life
    assert (clock.silence(), clock.redelivered) == (7.0, 1)
    stale = _beat(4, lifetime=0.001)
    time.sleep(0.01)
    with pytest.raises(ProtocolViolation, match="expired"):
        clock.offer(stale)
    round_announcement = Announcement.signed(COORD_PRIVATE, session="s", kind="round", round=5, repetitions=1)
    with pytest.raises(ProtocolViolation, match="not a heartbeat"):
        clock.offer(round_announcement.model_dump_json().encode())
    forged = Announcement.signed(generate_key_pair()[0], session="s", kind="heartbeat", round=6, repetitions=1)
    with pytest.raises(ProtocolViolation, match="not signed by the coordinator"):
        clock.offer(forged.model_dump_json().encode())
    assert clock.round == 3


async def test_a_party_does_not_take_its_own_outage_for_the_observer_s_silence() -> None:
    """A party on its worker's shared clock: while the clock's connection is down (the heartbeats cannot
    come) it waits through 4 graces; once the connection is back, a grace of silence ends it with the
    observer-gone error."""
    grace = 0.4
    spec = PartySpec(1, np.array([1, 0], np.int8), RandomizedResponse(1.0), PARTY_PRIVATE,
                     np.random.SeedSequence(1), None, PrivacyLedger(1e-6))
    broker = InMemoryBroker(timeout=30.0)
    party = Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=5.0, observer_grace=grace)
    clock = ObserverClock(Announcement, TOPICS, COORD_PUBLIC)
    party.loop.share_clock(clock)
    assert TOPICS.heartbeat not in party.loop.filters  # the process reads the heartbeats, not the party
    listening = asyncio.create_task(clock.listen(broker, "worker-clock"))
    async with broker.connect("coordinator") as coordinator:
        while not broker.connected("worker-clock"):
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # subscribed
        await coordinator.publish(TOPICS.heartbeat, _beat())
        while not clock.heard:
            await asyncio.sleep(0.01)
        ready = asyncio.Event()
        task = asyncio.create_task(party.run(ready.set))
        await ready.wait()
        await broker.disconnect("worker-clock")
        await asyncio.sleep(4 * grace)
        assert not task.done()
        await broker.reconnect("worker-clock")
        back = time.monotonic()
        with pytest.raises(TransportError, match=rf"party 1: the observer has sent no round and no heartbeat for "
                                                 rf"{grace:g} s"):
            await task
        assert time.monotonic() - back >= 0.5 * grace  # at most the grace's start before the outage counts
    listening.cancel()


async def test_a_worker_reads_each_heartbeat_once_for_all_its_parties() -> None:
    """20 parties on their own connections (as a party host): one subscription to the heartbeat topic
    in the process, one clock shared by every party, fed by it."""
    broker = InMemoryBroker()
    k = 20
    parties = tuple(PartySpec(i, np.array([1], np.int8), RandomizedResponse(1.0), generate_key_pair()[0],
                              np.random.SeedSequence(i), None, PrivacyLedger(1e-6)) for i in range(k))
    spec = WorkerSpec(index=0, endpoint=broker, session="s", coordinator_key=COORD_PUBLIC, parties=parties,
                      idle_timeout=10.0)
    async with broker.connect("coordinator") as coordinator:
        await coordinator.subscribe(TOPICS.status)
        worker = asyncio.create_task(serve_parties(spec))
        async with asyncio.timeout(10):
            await anext(coordinator.deliveries())  # the worker's "ready": every party subscribed
        sessions = broker._sessions.values()  # noqa: SLF001 - who subscribed to what, as the broker sees it
        assert sum(session.wants(TOPICS.heartbeat) for session in sessions) == 1
        assert sum(session.wants(TOPICS.rounds) for session in sessions) == k
        await coordinator.publish(TOPICS.heartbeat, _beat(0))
        await asyncio.sleep(0.1)
        await coordinator.publish(TOPICS.rounds, Announcement.signed(
            COORD_PRIVATE, session="s", kind="end", round=0, repetitions=1).model_dump_json())
        async with asyncio.timeout(10):
            await worker


async def test_heartbeats_delivered_again_after_an_observer_reconnect_change_nothing_and_log_one_line(
        caplog: pytest.LogCaptureFixture) -> None:
    """The observer publishes again what the broker had not acknowledged when its connection dropped: the worker
    reads those heartbeats twice, and older ones after newer ones. They are no sign of life (silence runs on from
    the newest), name no round, wake no waiter (what re-sends a recorded answer), and are not rejections: counted,
    one INFO line for all, no WARNING (each reconnect at 10^5 parties logged ``rejected a message (replay)``)."""
    now = FakeTime()
    clock = ObserverClock(Announcement, TOPICS, COORD_PUBLIC, clock=now)
    beats = [_beat(i) for i in (4, 4, 5)]  # sequences increase in order of signing
    for beat in beats:
        clock.offer(beat)
    waiter = asyncio.create_task(clock.next_beat())
    await asyncio.sleep(0)
    now.now += 9.0
    with caplog.at_level("INFO", logger="mpdp.party"):
        for beat in (beats[2], beats[0], beats[1], beats[2]) * 3:  # delivered again, in any order
            clock.offer(beat)
    await asyncio.sleep(0)
    assert not waiter.done() and (clock.round, clock.silence()) == (5, 9.0)
    assert (clock.redelivered, clock.rejections.total) == (12, 0)
    assert [(r.levelname, r.getMessage().split(":")[0]) for r in caplog.records] == [("INFO", "heartbeats")]
    clock.offer(_beat(6))  # the next one, fresh, counts
    assert await waiter == 6 and clock.silence() == 0.0
