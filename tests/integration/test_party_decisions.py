"""End to end over a real mosquitto: every participant decides f itself from the published transcript.

Each party's decisions are recomputed here independently: its optimal rule from
:func:`mpdp.protocols.rules.optimal.optimal_rules` (observer = its index among the participants) applied to the
recorded transcript with its own bit and the generator of its seed; the worst-case observer's randomized
decisions are reproduced from the run's seed."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.rounds.seeds import decision_generator
from mpdp.parties.session.runner import RunConfig, run_async
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.rule_factory import zero_one_rules
from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90), pytest.mark.asyncio(loop_scope="session")]
REPS, SEED = 30, 11
MAJORITY = parse_function("majority")


def _config(tmp_path: Path, mosquitto: BrokerEndpoint, mechanisms: tuple[RandomizedResponse, ...],
            bits: np.ndarray, **changes: object) -> RunConfig:
    fields: dict[str, object] = dict(
        session=f"pd-{tmp_path.name[-10:].replace('_', '')}", round_names=tuple(f"r{j}" for j in range(bits.shape[1])),
        bits=bits, mechanisms=mechanisms, repetitions=REPS, seed=SEED, function=MAJORITY,
        measure=accuracy_measure("zero-one", 2), broker=BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={}), workers=2,
        store_path=tmp_path / "t.sqlite", round_timeout=scaled(15.0))
    fields.update(changes)
    return RunConfig(**fields)  # type: ignore[arg-type]


async def test_worst_case_party_decisions_match_their_rules(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    await _worst_case_party_decisions(mosquitto, tmp_path)


async def test_party_decisions_on_a_transcript_published_in_parts(
    mosquitto: BrokerEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # parts of one row (7 symbols) each: 30 signed parts a round, assembled by every worker
    monkeypatch.setattr("mpdp.parties.rr.decision_collector.TRANSCRIPT_PART_SYMBOLS", 7)
    await _worst_case_party_decisions(mosquitto, tmp_path)


async def _worst_case_party_decisions(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    k = 7
    mechanisms = (RandomizedResponse(float("inf")),) + (RandomizedResponse(0.8),) * 4 + (RandomizedResponse(1.5),) * 2
    bits = np.array([[1, 0], [1, 1], [0, 1], [1, -1], [0, 0], [1, 1], [0, 1]], dtype=np.int8)
    config = _config(tmp_path, mosquitto, mechanisms, bits, party_rule="worst-case",
                     rule_factory=zero_one_rules("worst-case"))
    outcome = await run_async(config)
    seeds = np.random.SeedSequence(SEED).spawn(k)
    observer_seed = np.random.SeedSequence(SEED, spawn_key=(2**31 + 1,))  # the seed tree's observer stream
    randomized = 0
    for index, rnd in enumerate(outcome.rounds):
        ids = rnd.participants
        mechs = [mechanisms[i] for i in ids]
        w = accuracy_measure("zero-one", 2)
        central = optimal_rules(mechs, MAJORITY, w, rule="worst-case").worst_case.rule
        randomized += central.randomized
        assert np.array_equal(rnd.decisions, central.decide(rnd.symbols, rng=decision_generator(observer_seed, index)))
        assert rnd.party_decisions is not None and rnd.party_decisions.shape == (ids.size, REPS)
        for j, party in enumerate(ids):
            rule = optimal_rules(mechs, MAJORITY, w, observer=j, rule="worst-case").worst_case.rule
            expected = rule.decide(rnd.symbols, rng=decision_generator(seeds[party], index),
                                   own_bits=int(bits[party, index]))
            assert np.array_equal(rnd.party_decisions[j], expected), (index, party)
    assert randomized >= 1  # the test exercises a randomized rule
    assert multiprocessing.active_children() == []


async def test_parties_with_infinite_epsilon_decide_exactly(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    bits = np.array([[1, 0, 1], [0, 0, 1], [1, 1, 0], [1, -1, 0], [0, 1, 0]], dtype=np.int8)
    mechanisms = (RandomizedResponse(float("inf")),) * 5
    outcome = await run_async(_config(tmp_path, mosquitto, mechanisms, bits, party_rule="average", workers=1))
    for index, rnd in enumerate(outcome.rounds):
        truth = MAJORITY(bits[rnd.participants, index])
        assert (rnd.party_decisions == truth).all() and (rnd.decisions == truth).all()
