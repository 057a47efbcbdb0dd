"""Pipelined rounds (:meth:`RoundEngine.run_round` with ``following``): the next round is announced once a round
stops collecting, before it is decided and recorded; the round is on disk when its outcome is returned, the next
round is not announced twice, and a second answer to the closing round is still checked against its first (a
double release) while the next round is open."""

from __future__ import annotations

import asyncio

import pytest

from mpdp.broker.messages import Announcement
from mpdp.broker.signing import PrivateKey
from mpdp.broker.transport import MemoryTransport
from mpdp.broker.wire import WireAnswer
from mpdp.parties.rounds.engine import ClosedRound, Closing, open_engine
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.mqtt_fixtures import brute_force_majority
from tests.parties.rounds.test_engine import MECHANISMS, REPS, SESSION, TOPICS, World, _announced, world

__all__ = ["world"]  # the fixture, shared with test_engine

pytestmark = pytest.mark.timeout(30)


class GatedObserver(Observer):
    """The randomized-response observer whose close waits for ``gate`` (the test holds a round in its close)."""

    gate: asyncio.Event

    async def close(self, closed: ClosedRound[WireAnswer, bytes], signer: PrivateKey) -> Closing:
        closing = await super().close(closed, signer)
        await self.gate.wait()
        return closing


async def _announcement(sender: MemoryTransport) -> Announcement:
    return Announcement.model_validate_json(await _announced(sender))


async def test_the_next_round_is_announced_before_the_last_is_recorded_and_a_double_release_meanwhile_is_caught(
        world: World) -> None:
    gated = GatedObserver(TOPICS, world.roster, world.store, function=parse_function("majority"),
                          measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
    gated.gate = asyncio.Event()
    round_0 = {p: [1, 0, 1, 1] if p != 1 else [0, 0, 1, 0] for p in range(3)}
    async with open_engine(world.broker, TOPICS, world.roster, world.store, world.coordinator[0], gated,
                           repetitions=REPS, round_timeout=5.0) as engine:
        first = asyncio.create_task(engine.run_round(0, "r0", following=(1, "r1")))
        assert (await _announcement(world.sender)).round == 0
        for party, symbols in round_0.items():
            await world.sender.publish(TOPICS.party(party), world.answer(party, symbols))
        assert (await _announcement(world.sender)).round == 1  # round 0 is held in its close: not recorded
        assert engine.open_round == 1 and world.store.recorded_rounds(SESSION) == [] and not first.done()
        await world.sender.publish(TOPICS.party(0), world.answer(0, [0, 0, 0, 0]))  # a second answer to round 0
        await world.sender.publish(TOPICS.party(2), world.answer(2, [1, 1, 1, 1], round=1))  # round 1 goes on
        async with asyncio.timeout(5):
            while engine.rejections.counts.get("double-release", 0) < 1:
                await asyncio.sleep(0.01)
        gated.gate.set()
        outcome_0 = await first
        assert world.store.recorded_rounds(SESSION) == [0]  # on disk when returned
        second = asyncio.create_task(engine.run_round(1, "r1"))  # opened already: not announced again
        for party in (0, 1):
            await world.sender.publish(TOPICS.party(party), world.answer(party, [0, 1, 0, 1], round=1))
        outcome_1 = await second
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.1):
                await _announced(world.sender)
    assert outcome_0.status == "complete" and outcome_0.double_released.tolist() == [0]
    assert world.store.double_releases(SESSION, 0).tolist() == [0]
    assert outcome_0.symbols is not None
    assert outcome_0.symbols.T.tolist() == [round_0[p] for p in range(3)]
    decisions, _ = brute_force_majority(list(MECHANISMS), outcome_0.symbols)
    assert outcome_0.decisions.tolist() == decisions.tolist()
    assert outcome_1.status == "complete" and outcome_1.participants.tolist() == [0, 1, 2]
    assert world.store.recorded_rounds(SESSION) == [0, 1]
    assert world.store.rejects(SESSION) == {(1, "double-release"): 1}  # counted while round 1 was open
