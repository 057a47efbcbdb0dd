"""A worker's party rules are built off its event loop (:meth:`mpdp.parties.rr.decisions.PartyDecider.decide`): at
10^5 parties the ~40 s build held the loop past the MQTT keepalive and the broker dropped the worker for 34.6 s.
Here a heartbeat coroutine ticks every 10 ms while the parties of a worker wait for a build of 20,001 parties
(~3 s on an idle core): the loop's longest pause stays a small part of the build, and the decisions are those of
each party's own rule built directly (:func:`mpdp.protocols.rules.rule_factory.decision_rule`, no shared tables)."""

from __future__ import annotations

import asyncio
import time

import numpy as np

from mpdp.broker.decision_messages import TranscriptMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.parties.rr.decisions import PartyDecider, PartyDecisionSpec
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule

K, REPS, TICK = 20_001, 3, 0.01
DECIDING = (0, 1, 7, 9_999, 20_000)  # the parties of this worker that decide, with bits 1, 0, 1, 0, 1


def test_the_event_loop_keeps_ticking_while_a_worker_builds_its_parties_rules() -> None:
    private, public = generate_key_pair()
    mechs = (RandomizedResponse(1.0),) * K
    symbols = np.random.default_rng(11).integers(0, 2, size=(REPS, K)).astype(np.uint8)
    payloads = [m.model_dump_json().encode() for m in TranscriptMessage.signed_parts(
        private, session="s", round=0, participants=np.arange(K), symbols=symbols)]
    bits = {p: (i + 1) % 2 for i, p in enumerate(DECIDING)}
    decider = PartyDecider(PartyDecisionSpec(mechs, "majority"), "s", public)

    async def run() -> tuple[list[np.ndarray], list[float], float]:
        verified = [decider.transcript(p) for p in payloads][-1]
        assert verified is not None
        message, whole = verified
        loop = asyncio.get_running_loop()
        gaps: list[float] = []

        async def heartbeat() -> None:
            last = loop.time()
            while True:
                await asyncio.sleep(TICK)
                now = loop.time()
                gaps.append(now - last)
                last = now

        ticker = asyncio.create_task(heartbeat())
        await asyncio.sleep(5 * TICK)  # the ticker is running
        started = time.monotonic()
        decided = await asyncio.gather(*(decider.decide(message, whole, p, bits[p], None) for p in DECIDING))
        build = time.monotonic() - started
        await asyncio.sleep(5 * TICK)  # the ticker notes the pause the build made, if any
        ticker.cancel()
        return list(decided), gaps, build

    decided, gaps, build = asyncio.run(run())
    assert build > 0.5, f"the build took {build:.2f} s: too short to show anything"
    assert max(gaps) < max(0.25 * build, 20 * TICK), (max(gaps), build)  # on the loop it was the whole build
    assert len(gaps) > build / (20 * TICK)  # it ticked throughout
    f, cache = parse_function("majority"), RuleCache()
    for p, got in zip(DECIDING, decided, strict=True):
        own = decision_rule(mechs, f, observer=p, cache=cache)
        np.testing.assert_array_equal(got, own.decide(symbols, own_bits=bits[p]))
