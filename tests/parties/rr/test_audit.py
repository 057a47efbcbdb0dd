"""The live audit on a party's real publishing path: correct parties pass, planted faults are caught.

Seeded on the simulation path; the deployed path draws from the OS CSPRNG (no seed), so its "never
flagged" test runs at alpha = 1e-4 (a false alarm has probability at most 1e-4)."""

from __future__ import annotations

import math

import pytest

from mpdp.analysis.privacy.audit import expected_lower_bound
from mpdp.parties.rr.audit import Fault, audit_party, parse_fault
from mpdp.protocols import ParameterError

MILLION = 10**6


def test_a_correct_simulated_party_at_a_million_samples_is_close_to_the_closed_form() -> None:
    run = audit_party(1.0, samples=MILLION, party_path="simulation", seed=11)
    e = run.estimate
    p = math.exp(1.0) / (1 + math.exp(1.0))
    assert not e.violation and e.epsilon_lower_bound <= 1.0
    # within 0.01 of epsilon, and within 0.005 of the closed form at the expected counts (about 3 standard
    # deviations of the estimate's noise, 0.0017 at this N)
    assert e.epsilon_lower_bound > 0.99
    assert e.epsilon_lower_bound == pytest.approx(expected_lower_bound(p, 1 - p, MILLION, e.tests, 0.05), abs=0.005)
    assert run.messages == 2 * MILLION // 50_000 and e.samples == MILLION


def test_a_correct_deployed_party_is_not_flagged() -> None:
    e = audit_party(2.0, 0.01, samples=100_000, party_path="deployed", alpha=1e-4).estimate
    assert not e.violation and e.epsilon_lower_bound <= 2.0


@pytest.mark.parametrize("seed", range(3))
def test_correct_k_fold_releases_are_not_flagged(seed: int) -> None:
    e = audit_party(0.5, 0.001, samples=50_000, releases=8, party_path="simulation", seed=seed).estimate
    assert not e.violation and e.epsilon_lower_bound <= 8 * 0.5


@pytest.mark.parametrize("fault", ["double-epsilon", "leak:0.01"])
def test_planted_faults_are_flagged_at_a_million_samples(fault: str) -> None:
    e = audit_party(1.0, samples=MILLION, party_path="simulation", fault=parse_fault(fault), seed=5).estimate
    assert e.violation and e.epsilon_lower_bound > 1.0


def test_double_epsilon_on_the_deployed_path_is_flagged() -> None:
    e = audit_party(1.0, samples=100_000, party_path="deployed", fault=Fault("double-epsilon"), seed=1).estimate
    assert e.violation and e.epsilon_lower_bound > 1.8


@pytest.mark.slow
def test_a_one_percent_leak_on_the_deployed_path_is_flagged_at_a_million_samples() -> None:
    e = audit_party(1.0, samples=MILLION, party_path="deployed", fault=Fault("leak", 0.01), seed=2).estimate
    assert e.violation and e.epsilon_lower_bound > 1.0


def test_a_leak_in_a_four_symbol_k_fold_release_is_flagged() -> None:
    e = audit_party(0.5, 0.001, samples=100_000, releases=4, party_path="simulation", fault=Fault("leak", 0.01),
                    seed=3).estimate
    assert e.violation and e.epsilon_lower_bound > 4 * 0.5


@pytest.mark.parametrize("text", ["leak", "leak:0", "leak:2", "leak:x", "half-epsilon", ""])
def test_bad_faults_are_refused(text: str) -> None:
    with pytest.raises(ParameterError, match="--fault"):
        parse_fault(text)


@pytest.mark.parametrize("kwargs", [{"samples": 0}, {"party_path": "cloud"}, {"alpha": 0.0}, {"releases": 0},
                                    {"epsilon": -1.0}])
def test_bad_arguments_are_refused(kwargs: dict[str, object]) -> None:
    args: dict[str, object] = {"epsilon": 1.0, "samples": 10, **kwargs}
    with pytest.raises(ParameterError):
        audit_party(**args)  # type: ignore[arg-type]
