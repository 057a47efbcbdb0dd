"""A transcript published in parts (issue 13: k = 10^4 must fit the brokers' payload limits): the
parties of a worker decide once every part of a round arrived, in any order, and only on parts the
coordinator signed."""

from __future__ import annotations

import itertools
import time

import numpy as np
import pytest

from mpdp.broker.decision_messages import TranscriptMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.parties.rr.decisions import PartyDecider, PartyDecisionSpec, apply_rule
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

K, REPS = 5, 7
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()


def _decider() -> PartyDecider:
    spec = PartyDecisionSpec(tuple(RandomizedResponse(1.0 + 0.2 * i) for i in range(K)), "majority")
    return PartyDecider(spec, "s", COORD_PUBLIC)


def _parts(symbols: np.ndarray, private: bytes = COORD_PRIVATE, round: int = 2) -> list[bytes]:
    messages = TranscriptMessage.signed_parts(private, session="s", round=round, participants=np.arange(K),
                                              symbols=symbols, max_symbols=2 * K)  # 2 rows a part
    return [m.model_dump_json().encode() for m in messages]


@pytest.mark.parametrize("order", list(itertools.permutations(range(4)))[::5])
def test_the_whole_transcript_comes_back_once_every_part_arrived(order: tuple[int, ...]) -> None:
    symbols = np.random.default_rng(4).integers(0, 2, size=(REPS, K)).astype(np.uint8)
    payloads = _parts(symbols)
    assert len(payloads) == 4  # rows 0-1, 2-3, 4-5, 6
    decider = _decider()
    got = [decider.transcript(payloads[i]) for i in order]
    assert got[:-1] == [None] * 3 and got[-1] is not None
    message, whole = got[-1]
    assert message.round == 2 and message.participants == tuple(range(K))
    assert np.array_equal(whole, symbols)
    # every later part (another party of the worker) sees the assembled transcript, verified once
    again = decider.transcript(payloads[order[0]])
    assert again is not None and again[1] is whole
    # the decisions equal those on the transcript sent whole
    rule = decider.rule(message.participants, 3)
    assert np.array_equal(apply_rule(rule, whole, np.random.default_rng(0), own_bits=1),
                          apply_rule(rule, symbols, np.random.default_rng(0), own_bits=1))


def test_a_part_not_signed_by_the_coordinator_does_not_complete_a_transcript() -> None:
    symbols = np.random.default_rng(5).integers(0, 2, size=(REPS, K)).astype(np.uint8)
    stranger, _ = generate_key_pair()
    good, forged = _parts(symbols), _parts(np.zeros_like(symbols), private=stranger)
    decider = _decider()
    assert [decider.transcript(p) for p in good[:3]] == [None] * 3
    assert decider.transcript(forged[3]) is None  # the last part, but forged: still incomplete
    done = decider.transcript(good[3])
    assert done is not None and np.array_equal(done[1], symbols)


def test_parts_of_two_rounds_are_not_mixed() -> None:
    rng = np.random.default_rng(6)
    a, b = (rng.integers(0, 2, size=(REPS, K)).astype(np.uint8) for _ in range(2))
    decider = _decider()
    first, second = _parts(a, round=1), _parts(b, round=2)
    assert [decider.transcript(p) for p in first[:3] + second[:3]] == [None] * 6
    one, two = decider.transcript(second[3]), decider.transcript(first[3])
    assert one is not None and two is not None
    assert (one[0].round, two[0].round) == (2, 1)
    assert np.array_equal(one[1], b) and np.array_equal(two[1], a)


def test_a_transcript_over_what_one_message_holds_reaches_the_parties_in_parts() -> None:
    # 90,000 participants x 200 repetitions = 1.8 x 10^7 symbols: over the 2^24 that refused 10^5 parties at
    # the default repetitions after the round had run; 20 parts of 10 rows, assembled in a worker as sent
    k, repetitions = 90_000, 200
    symbols = np.random.default_rng(8).integers(0, 2, size=(repetitions, k)).astype(np.uint8)
    assert symbols.size > 1 << 24
    messages = TranscriptMessage.signed_parts(COORD_PRIVATE, session="s", round=0, participants=np.arange(k),
                                              symbols=symbols, max_symbols=10 * k)
    decider = PartyDecider(PartyDecisionSpec((RandomizedResponse(1.0),) * k, "majority"), "s", COORD_PUBLIC)
    got = [decider.transcript(m.model_dump_json().encode()) for m in messages][-1]
    assert len(messages) == 20 and got is not None and np.array_equal(got[1], symbols)


def test_every_party_finds_its_transcript_without_hashing_the_participants() -> None:
    # a worker's parties each look the transcript up for every part: with 10^5 ids in the key each lookup hashed
    # the tuple anew (~0.5 ms), 10^5 parties x 20 parts held a worker for ~1,000 s; 10,000 lookups: ~5 CPU-s then
    k = 100_000
    symbols = np.zeros((2, k), dtype=np.uint8)
    messages = TranscriptMessage.signed_parts(COORD_PRIVATE, session="s", round=0, participants=np.arange(k),
                                              symbols=symbols, max_symbols=k)
    decider = PartyDecider(PartyDecisionSpec((RandomizedResponse(1.0),) * k, "majority"), "s", COORD_PUBLIC)
    first, last = (m.model_dump_json().encode() for m in messages)
    assert decider.transcript(first) is None  # verified once
    started = time.process_time()
    assert all(decider.transcript(first) is None for _ in range(10_000))
    assert decider.transcript(last) is not None
    assert all(decider.transcript(last) is not None for _ in range(10_000))
    assert time.process_time() - started < 1.0
