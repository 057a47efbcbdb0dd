"""``mpdp.simulate(party_decisions=True)`` refuses, before any process starts, party decisions whose estimate
(:func:`mpdp.parties.session.sizing.party_decisions_cost`) exceeds the time limit, naming it, and transcripts larger
than the parties may be sent (:func:`mpdp.broker.decision_messages.check_transcript_size`)."""

from __future__ import annotations

import pytest

import mpdp
from mpdp.parties.session.estimate import Machine
from mpdp.parties.session.sizing import party_decisions_cost, party_decisions_wait
from mpdp.protocols.errors import CostLimitError, ParameterError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


def test_party_decisions_over_the_time_limit_are_refused_before_any_process_starts(tmp_path: object) -> None:
    epsilons = [0.1 + i * 1e-4 for i in range(3000)]  # 3,000 groups: posterior rules, ~450 CPU-s a process
    with pytest.raises(CostLimitError, match=r"the party decisions \(3,000 parties in 3,000 groups.*in 2 workers "
                                             r"and the observer, beside the session.s .*\).*over the 10 min time limit"):
        mpdp.simulate(parties=3000, rounds=1, epsilon=epsilons, party_decisions=True, workers=2, time_limit=600,
                      progress=False)


def test_workers_add_memory_and_every_process_adds_time() -> None:
    f = parse_function("majority")
    mechs = [RandomizedResponse(1.0)] * 4000
    one, three = party_decisions_cost(mechs, f, 1, 1, 1), party_decisions_cost(mechs, f, 1, 1, 3, 5e8)
    assert three.seconds == pytest.approx(5 / 3 * one.seconds)  # the observer's evaluation: 2 builds
    assert three.memory_bytes == pytest.approx(3 * one.memory_bytes + 5e8)  # the workers' rules beside the session
    assert "beside the session's 500 MB" in three.size


def test_a_transcript_larger_than_the_parties_may_be_sent_is_refused_before_any_process_starts() -> None:
    # 2^27 = 134,217,728 symbols a transcript: 70,000 x 1,917 fit (134,190,000), 2,000 repetitions do not
    with pytest.raises(ParameterError, match=r"70,000 participants x 2,000 repetitions = 140,000,000 symbols is over "
                                             r"the 134,217,728 one transcript may hold: use 1,917 repetitions or fewer"):
        mpdp.simulate(parties=70_000, rounds=1, repetitions=2_000, party_decisions=True, progress=False)


def test_worst_case_party_rules_over_the_factory_s_limits_are_refused_before_any_process_starts() -> None:
    # the observer's worst-case LP over 15,001 parties fits (~40 s estimated), each party's two do not (~80 s)
    with pytest.raises(CostLimitError, match=r"a party's worst-case LP .*use rule='average' for the party decisions"):
        mpdp.simulate(parties=15_001, rounds=1, repetitions=1, rule="worst-case", party_decisions=True, progress=False)


def test_the_observer_waits_for_the_party_decisions_as_this_machine_runs_them() -> None:
    f = parse_function("majority")
    two = party_decisions_cost([RandomizedResponse(1.0)] * 4000, f, 1, 1, 2)
    # idle, 2 cores: the two workers at once, each on its core
    assert party_decisions_wait(two, 2, Machine(2, 0.0)) == pytest.approx(two.seconds)
    # 10 other runnable processes: the two get 2 x 2 / 12 of a core, at half the reference speed
    assert party_decisions_wait(two, 2, Machine(2, 10.0, 2.0)) == pytest.approx(two.seconds * 2.0 * 2 / (2 * 2 / 12))
