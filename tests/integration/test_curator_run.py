"""The curator protocol end to end: worker processes running curator parties (BallotParty with SealedBallots), the curator, a real
mosquitto. eps = inf releases the exact majority every time; a finite eps releases exactly the
seeded draws of the optimal central mechanism, consistent with its exact theory; a rerun resumes."""

from __future__ import annotations

import math
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.statistics.stats import consistency_test
from mpdp.analysis.theory.central_vs_distributed import (
    curator_accuracy_on_input,
    curator_release_probability,
)
from mpdp.broker.curator_messages import SealedBallot
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.ballots.store import BallotStore
from mpdp.parties.rounds.seeds import round_generator
from mpdp.parties.session.runner import RunConfig, RunOutcome, run_async
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled
from tests.frequencies import assert_proportion_fits

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]
K, R, SEED = 9, 3, 11


def _config(tmp_path: Path, endpoint: BrokerEndpoint, epsilon: float, repetitions: int, **changes: object) -> RunConfig:
    bits = np.random.default_rng(4).integers(0, 2, size=(K, R)).astype(np.int8)
    bits[:5, 1], bits[5:, 1] = 1, 0  # round 1: 5 of 9, a margin of one vote
    bits[2, 2] = -1
    fields: dict[str, object] = dict(
        session=f"cur-{tmp_path.name[-10:].replace('_', '')}-{int(min(epsilon, 99))}",
        round_names=("bill a", "bill b", "bill c"), bits=bits,
        mechanisms=(RandomizedResponse(epsilon),) * K, repetitions=repetitions, seed=SEED,
        function=parse_function("passed"), measure=accuracy_measure("zero-one", 2),
        broker=BrokerSettings.from_url(f"mqtt://127.0.0.1:{endpoint.port}", environ={}), workers=2,
        store_path=tmp_path / "c.sqlite", round_timeout=scaled(15.0), protocol="curator",
    )
    fields.update(changes)
    return RunConfig(**fields)  # type: ignore[arg-type]


def assert_exact_majority(config: RunConfig, outcome: RunOutcome) -> None:
    """Every round complete, participants and abstainers as in the data, every release the majority
    of the participants' votes (a central mechanism at eps = inf)."""
    for index, got in enumerate(outcome.rounds):
        takes_part = config.bits[:, index] >= 0
        votes = config.bits[takes_part, index]
        assert got.participants.tolist() == np.flatnonzero(takes_part).tolist()
        assert got.abstained.tolist() == np.flatnonzero(~takes_part).tolist()
        assert (got.status, got.messages_received, got.messages_rejected) == ("complete", config.k, 0)
        assert got.decisions.tolist() == [int(2 * votes.sum() > votes.size)] * config.repetitions


async def test_infinite_epsilon_releases_the_exact_majority(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    config = _config(tmp_path, mosquitto, math.inf, 30)
    outcome = await run_async(config)
    assert_exact_majority(config, outcome)
    with BallotStore(config.store_path) as store:  # ciphertexts only, one per party that voted
        ballots = list(store.ballots(config.session))
        assert len(ballots) == K * R
        for entry in ballots:
            if entry["kind"] == "sealed":
                assert SealedBallot.model_validate_json(str(entry["payload"])).ciphertext
    assert multiprocessing.active_children() == []


async def test_finite_epsilon_matches_theory_and_resumes(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """Exactly the seeded draws; each round's accuracy consistent with theory and round 1's release
    frequency with e / (1 + e), each at alpha = 0.01 (seeded: deterministic)."""
    repetitions = 400
    config = _config(tmp_path, mosquitto, 1.0, repetitions)
    outcome = await run_async(config)
    curator_seed = np.random.SeedSequence(SEED).spawn(1)[0]
    for index, got in enumerate(outcome.rounds):
        votes = config.bits[got.participants, index].astype(np.int64)
        p_one = curator_release_probability(int(votes.sum()), votes.size, 1.0, 0.0)
        expected = round_generator(curator_seed, index).random(repetitions) < p_one
        assert np.array_equal(got.decisions, expected.astype(np.int64))  # exactly the seeded draws
        theory = curator_accuracy_on_input(votes, 1.0, 0.0).value
        correct = int((got.decisions == int(2 * votes.sum() > votes.size)).sum())
        assert consistency_test(correct, repetitions, theory, alpha=0.01, rounds=R).consistent
    released = outcome.rounds[1].decisions
    assert_proportion_fits(int(released.sum()), released.size, math.exp(1) / (1 + math.exp(1)), alpha=0.01)
    again = await run_async(config)  # every round recorded: loaded, nobody asked again
    for first, second in zip(outcome.rounds, again.rounds, strict=True):
        assert np.array_equal(first.decisions, second.decisions) and first.name == second.name
    with pytest.raises(ParameterError, match="epsilon"):
        await run_async(_config(tmp_path, mosquitto, 1.0, repetitions, session=config.session,
                                        mechanisms=(RandomizedResponse(2.0),) * K))


async def test_curator_refuses_what_it_cannot_release(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="protocol rr"):
        await run_async(_config(tmp_path, mosquitto, 1.0, 5, function=parse_function("sum")))
    mixed = tuple(RandomizedResponse(1.0 + (i % 2)) for i in range(K))
    with pytest.raises(ParameterError, match="one epsilon"):
        await run_async(_config(tmp_path, mosquitto, 1.0, 5, mechanisms=mixed))
