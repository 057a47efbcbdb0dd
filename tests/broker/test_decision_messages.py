"""Transcript and decision wire messages: round trip, signatures, malformed payloads."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from mpdp.broker.decision_messages import (
    DecisionMessage,
    TranscriptMessage,
    pack_decisions,
    unpack_decisions,
)
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.protocols.errors import ProtocolViolation


def test_transcript_round_trip_and_signature() -> None:
    private, public = generate_key_pair()
    stranger, _ = generate_key_pair()
    symbols = np.random.default_rng(1).integers(0, 4, size=(7, 5)).astype(np.uint8)
    message = TranscriptMessage.signed(private, session="s1", round=3, participants=np.array([0, 2, 3, 8, 9]),
                                       symbols=symbols)
    back = TranscriptMessage.model_validate_json(message.model_dump_json())
    assert np.array_equal(back.symbol_matrix(), symbols) and back.participants == (0, 2, 3, 8, 9)
    assert verify_message(back, public)
    assert not verify_message(TranscriptMessage.signed(stranger, session="s1", round=3,
                                                       participants=np.arange(5), symbols=symbols), public)
    forged = back.model_copy(update={"participants": (0, 2, 3, 8, 10)})
    assert not verify_message(forged, public)


@pytest.mark.parametrize("change", [{"participants": [2, 1]}, {"participants": [1, 1]}, {"symbols": "AA=="},
                                    {"repetitions": 0}, {"extra": 1}])
def test_malformed_transcript_is_rejected(change: dict[str, object]) -> None:
    private, _ = generate_key_pair()
    good = TranscriptMessage.signed(private, session="s", round=0, participants=np.array([1, 2]),
                                    symbols=np.zeros((3, 2), np.uint8)).model_dump()
    good.update(change)
    with pytest.raises(ValidationError):
        TranscriptMessage.model_validate(good)


def test_decision_round_trip_signature_and_packing() -> None:
    private, public = generate_key_pair()
    decisions = np.array([0, 1, 1, 0, 435, 65535])
    message = DecisionMessage.signed(private, session="s", round=2, party=7, decisions=decisions)
    back = DecisionMessage.model_validate_json(message.model_dump_json())
    assert back.decision_array().tolist() == decisions.tolist() and back.repetitions == 6
    assert verify_message(back, public)
    assert not verify_message(back.model_copy(update={"party": 8}), public)
    assert unpack_decisions(pack_decisions(np.array([3, 0])), 2).tolist() == [3, 0]
    with pytest.raises(ProtocolViolation):
        pack_decisions(np.array([65536]))
    with pytest.raises(ProtocolViolation):
        unpack_decisions(pack_decisions(np.array([1, 2])), 3)
    bad = message.model_dump()
    bad["decisions"] = "AAE="  # 2 bytes for 6 repetitions
    with pytest.raises(ValidationError):
        DecisionMessage.model_validate(bad)
