"""A round's deadline by progress (parties/rounds/engine.py): a round that is still receiving answers is
not timed out at ``round_timeout``; it closes ``round_timeout`` after its last new answer; the quiet time
is not counted while the engine's own connection is down; the next round is announced only once the last
is decided and recorded."""

from __future__ import annotations

import asyncio

import pytest

from mpdp.broker.messages import Announcement
from mpdp.parties.rounds.engine import open_engine
from tests.parties.rounds.test_engine import TOPICS, World, _announced, _observer, world

__all__ = ["world"]  # the fixture, shared with test_engine

pytestmark = pytest.mark.timeout(30)

TIMEOUT = 1.0
SLACK = 10.0  # seconds a busy machine may add to a wait (the bound is loose on purpose: slow is not wrong)


async def test_a_round_still_receiving_answers_is_not_closed_at_the_round_timeout(world: World) -> None:
    """Three answers half a round_timeout apart (a sender's sleep may overshoot by as much on a busy machine):
    the round lasts 1.5 x round_timeout and completes."""
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=4, round_timeout=TIMEOUT) as engine:
        loop = asyncio.get_running_loop()
        start = loop.time()
        running = asyncio.create_task(engine.run_round(0, "r0"))
        await _announced(world.sender)
        for party in range(3):
            await asyncio.sleep(0.5 * TIMEOUT)
            await world.sender.publish(TOPICS.party(party), world.answer(party, [1, 0, 1, 1]))
        outcome = await running
        took = loop.time() - start
    assert outcome.status == "complete" and outcome.participants.tolist() == [0, 1, 2]
    assert took >= 1.5 * TIMEOUT


async def test_a_round_closes_a_round_timeout_after_its_last_answer(world: World) -> None:
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=4, round_timeout=TIMEOUT) as engine:
        loop = asyncio.get_running_loop()
        running = asyncio.create_task(engine.run_round(0, "r0"))
        await _announced(world.sender)
        await asyncio.sleep(0.5 * TIMEOUT)
        await world.sender.publish(TOPICS.party(2), world.answer(2, [1, 1, 1, 1]))
        last = loop.time()
        outcome = await running
        quiet = loop.time() - last
    assert outcome.status == "timeout" and outcome.absent.tolist() == [0, 1] and outcome.participants.tolist() == [2]
    assert TIMEOUT <= quiet <= TIMEOUT + SLACK


async def test_the_quiet_time_pauses_while_the_engine_is_disconnected(world: World) -> None:
    """No answer at all; the engine's connection is dropped for 3 x round_timeout: the round is not failed
    meanwhile; once reconnected, it fails round_timeout later."""
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=4, round_timeout=TIMEOUT) as engine:
        loop = asyncio.get_running_loop()
        running = asyncio.create_task(engine.run_round(0, "r0"))
        await _announced(world.sender)
        await world.broker.disconnect("mpdp-eng-observer")
        await asyncio.sleep(3 * TIMEOUT)
        assert not running.done()
        await world.broker.reconnect("mpdp-eng-observer")
        back = loop.time()
        outcome = await running
        waited = loop.time() - back
    assert outcome.status == "failed"
    assert 0.5 * TIMEOUT <= waited <= TIMEOUT + SLACK  # at most the announcement's moments before the drop count


async def test_the_next_round_is_announced_only_once_the_last_is_recorded(world: World) -> None:
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], _observer(world),
                           repetitions=4, round_timeout=TIMEOUT) as engine:
        first = asyncio.create_task(engine.run_round(0, "r0"))
        assert Announcement.model_validate_json(await _announced(world.sender)).round == 0
        for party in range(3):
            await world.sender.publish(TOPICS.party(party), world.answer(party, [0, 1, 0, 1]))
        await first
        assert world.store.load_round("eng", 0).status == "complete"
        second = asyncio.create_task(engine.run_round(1, "r1"))
        assert Announcement.model_validate_json(await _announced(world.sender)).round == 1
        second.cancel()
