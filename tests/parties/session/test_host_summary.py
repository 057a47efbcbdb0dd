"""The closing line of ``mpdp party`` (:func:`answers_summary`), from a real answer record of signed answers."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.parties.rounds.answer_record import AnswerRecord, RecordedAnswer
from mpdp.parties.session.host_summary import answers_summary

SESSION = "summary"


def _record(path: Path, answers: dict[tuple[int, int], str | None]) -> None:
    """Write (round, party) -> an abstention's reason, or None for one symbol."""
    key, _ = generate_key_pair()
    rows = [RecordedAnswer(SESSION, party, index, PartyMessage.signed(
        key, session=SESSION, round=index, party=party, repetitions=1, reason=reason,
        symbols=None if reason else np.array([1], dtype=np.uint8)).to_wire(), None)
        for (index, party), reason in answers.items()]
    with AnswerRecord(path) as record:
        assert record.write(rows) == [None] * len(rows)


def test_every_round_a_policy_abstention_is_said(tmp_path: Path) -> None:
    _record(tmp_path / "a.sqlite", {(r, p): "policy" for r in range(200) for p in (3, 4)})
    assert answers_summary(tmp_path / "a.sqlite", SESSION, (3, 4)) == \
        "abstained from all 200 rounds (policy: 200) until the end: nothing released"


def test_a_round_counts_as_released_when_any_party_released(tmp_path: Path) -> None:
    # round 0: both released; round 1: one released, one over budget; rounds 2, 3: both abstained
    _record(tmp_path / "a.sqlite", {(0, 0): None, (0, 1): None, (1, 0): None, (1, 1): "budget-exhausted",
                                    (2, 0): "budget-exhausted", (2, 1): "budget-exhausted",
                                    (3, 0): "policy", (3, 1): "budget-exhausted"})
    assert answers_summary(tmp_path / "a.sqlite", SESSION, (0, 1)) == (
        "answered 4 rounds until the end: abstained from 2 (budget-exhausted: 2, policy: 1), released in 2")


def test_every_round_released_and_none(tmp_path: Path) -> None:
    _record(tmp_path / "a.sqlite", {(r, 0): None for r in range(3)})
    assert answers_summary(tmp_path / "a.sqlite", SESSION, (0,)) == "answered 3 rounds until the end"
    assert answers_summary(tmp_path / "a.sqlite", "other", (0,)) == "answered no round until the end"
