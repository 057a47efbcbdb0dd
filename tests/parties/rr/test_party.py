"""A party's answer to an announcement: privatized, signed, reproducible, and never the raw bit."""

from __future__ import annotations

import dataclasses
import math
import sys

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger
from mpdp.analysis.privacy.composition import optimal_epsilon
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.seeds import round_generator
from mpdp.parties.rr.party import Party, secure_sampler
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.secure import sample_secure

COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()
ENDPOINT = BrokerEndpoint("embedded", "127.0.0.1", 1)


def _party(bits: list[int], mechanism: RandomizedResponse, seed: int = 11, party: int = 2, k: int = 5) -> tuple[Party, bytes]:
    private, public = generate_key_pair()
    spec = PartySpec(party, np.array(bits, np.int8), mechanism, private, np.random.SeedSequence(seed).spawn(k)[party])
    return Party(spec, ENDPOINT, Topics("s"), COORD_PUBLIC, idle_timeout=1.0), public


def _announce(index: int, repetitions: int = 64) -> Announcement:
    return Announcement.signed(COORD_PRIVATE, session="s", kind="round", round=index, repetitions=repetitions)


def test_round_generator_is_the_spawned_child_without_mutating_the_parent() -> None:
    parent = np.random.SeedSequence(123).spawn(4)[3]
    expected = np.random.default_rng(np.random.SeedSequence(123).spawn(4)[3].spawn(6)[5]).random(4)
    assert np.array_equal(round_generator(parent, 5).random(4), expected)
    assert parent.n_children_spawned == 0


def test_symbols_are_the_mechanism_sample_of_the_round_generator() -> None:
    mechanism = RandomizedResponse(0.7, 0.1)
    party, public = _party([1, 0, -1], mechanism)
    for index in (0, 1):
        message = party.respond(_announce(index))
        seed = np.random.SeedSequence(11).spawn(5)[2].spawn(3)[index]
        expected = mechanism.sample([1, 0][index], 64, np.random.default_rng(seed))
        assert np.array_equal(message.symbol_array(), expected)
        assert (message.kind, message.round, message.party, message.repetitions) == ("symbols", index, 2, 64)
        assert verify_message(message, public)


def test_epsilon_infinity_reports_the_bit_and_minus_one_abstains() -> None:
    party, public = _party([1, 0, -1], RandomizedResponse(float("inf")))
    assert party.respond(_announce(0)).symbol_array().tolist() == [1] * 64
    assert party.respond(_announce(1)).symbol_array().tolist() == [0] * 64
    abstain = party.respond(_announce(2))
    assert (abstain.kind, abstain.reason, abstain.packed) == ("abstain", "did-not-vote", b"")
    assert verify_message(abstain, public)


def test_the_raw_bit_is_in_no_message_field_and_no_repr() -> None:
    party, _ = _party([1, 0, 1], RandomizedResponse(0.0))
    fields = {field.name for field in dataclasses.fields(party.respond(_announce(0)))}
    assert fields == {"session", "round", "party", "kind", "reason", "repetitions", "packed", "nonce", "signature",
                      "signed"}
    assert "bits" not in repr(party.spec) and "private_key" not in repr(party.spec)


def test_fresh_nonces_and_a_round_beyond_the_bits_is_refused() -> None:
    party, _ = _party([1], RandomizedResponse(1.0))
    assert party.respond(_announce(0)).nonce != party.respond(_announce(0)).nonce
    with pytest.raises(ParameterError, match=r"^party 2 has no bit for round 1: its dataset has 1 round \(columns\), 0\.\.0$"):
        party.respond(_announce(1))


def test_simulation_mode_needs_a_seed() -> None:
    private, _ = generate_key_pair()
    spec = PartySpec(0, np.array([1], np.int8), RandomizedResponse(1.0), private, None)
    with pytest.raises(ParameterError, match="seed"):
        Party(spec, ENDPOINT, Topics("s"), COORD_PUBLIC, idle_timeout=1.0)


def test_secure_mode_samples_with_protocols_secure() -> None:
    sampler = secure_sampler()
    assert sampler is sample_secure
    # at epsilon = inf randomized response reports the bit itself, whatever the randomness
    assert sampler(RandomizedResponse(math.inf), 1, 5).tolist() == [1] * 5
    assert sampler(RandomizedResponse(math.inf), 0, 5).tolist() == [0] * 5


def test_secure_mode_without_protocols_secure_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mpdp.protocols.randomization.secure", None)  # makes the import raise ImportError
    with pytest.raises(ParameterError, match="protocols.randomization.secure is not available"):
        secure_sampler()


def test_a_party_abstains_when_its_next_answer_would_exceed_its_budget() -> None:
    """(0.5, 0)-randomized response, 3 releases per round, budget (4, 1e-5) at delta_tilde 1e-6:
    the exact optimum of 3n releases is about 1.5, 3.0, 4.5 (000 Theorem 3.3 is near k * epsilon for so few),
    so the party answers two rounds and refuses the third; a round it does not vote in costs nothing."""
    private, public = generate_key_pair()
    spec = PartySpec(1, np.array([1, -1, 0, 1, 0], np.int8), RandomizedResponse(0.5), private,
                     np.random.SeedSequence(3).spawn(2)[1], Budget(4.0, 1e-5), PrivacyLedger(1e-6))
    party = Party(spec, ENDPOINT, Topics("s"), COORD_PUBLIC, idle_timeout=1.0)
    replies = [party.respond(_announce(r, repetitions=3)) for r in range(5)]
    assert [(m.kind, m.reason) for m in replies] == [
        ("symbols", None), ("abstain", "did-not-vote"), ("symbols", None),
        ("abstain", "budget-exhausted"), ("abstain", "budget-exhausted"),
    ]
    assert all(verify_message(m, public) for m in replies) and replies[3].packed == b""
    assert party.ledger.rounds == (0, 2)
    assert party.ledger.spent().epsilon == pytest.approx(optimal_epsilon(0.5, 6, 1e-6), rel=1e-12)
    assert 2.99 < party.ledger.spent().epsilon <= 3.0
    assert optimal_epsilon(0.5, 9, 1e-6) > 4.0
    # answering a charged round again charges nothing (same simulation sample)
    again = party.respond(_announce(2, repetitions=3))
    assert np.array_equal(again.symbol_array(), replies[2].symbol_array()) and party.ledger.rounds == (0, 2)
    # without a budget the party answers every round it votes in, and still keeps its ledger
    free = Party(PartySpec(1, spec.bits, spec.mechanism, private, spec.seed), ENDPOINT, Topics("s"),
                 COORD_PUBLIC, idle_timeout=1.0)
    assert [free.respond(_announce(r, repetitions=3)).kind for r in range(5)] == ["symbols", "abstain"] + ["symbols"] * 3
    assert free.ledger.rounds == (0, 2, 3, 4) and free.ledger.spent().mechanisms == 12


def test_a_few_repetitions_are_the_mechanism_sample_of_the_round_generator_too() -> None:
    mechanism = RandomizedResponse(0.7, 0.1)
    party, _ = _party([1, 0, 1], mechanism)
    for index in (0, 1, 2):
        message = party.respond(_announce(index, repetitions=3))
        seed = np.random.SeedSequence(11).spawn(5)[2].spawn(3)[index]
        expected = mechanism.sample([1, 0, 1][index], 3, np.random.default_rng(seed))
        assert np.array_equal(message.symbol_array(), expected)
