"""Transcript and decision wire messages: round trip, signatures, malformed payloads."""

from __future__ import annotations

import numpy as np
import pytest
from pydantic import ValidationError

from mpdp.broker.decision_messages import (
    TRANSCRIPT_PART_SYMBOLS,
    DecisionMessage,
    TranscriptMessage,
    check_transcript_size,
    pack_decisions,
    part_rows,
    unpack_decisions,
)
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.protocols.errors import ParameterError, ProtocolViolation


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
                                    {"repetitions": 0}, {"extra": 1}, {"part": 1}, {"parts": 4},
                                    {"part": -1}])
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


@pytest.mark.parametrize("repetitions", [1, 2, 5, 7, 64, 1000])
@pytest.mark.parametrize("parts", [1, 2, 3, 4, 7])
def test_part_rows_tile_the_transcript_without_an_empty_part(repetitions: int, parts: int) -> None:
    if parts > repetitions:
        with pytest.raises(ValueError, match="parts <= repetitions"):
            part_rows(repetitions, 0, parts)
        return
    try:
        spans = [part_rows(repetitions, p, parts) for p in range(parts)]
    except ValueError as exc:  # e.g. 5 rows in 4 parts of 2: the last would be empty
        assert "empty" in str(exc) and (parts - 1) * -(-repetitions // parts) >= repetitions
        return
    assert spans[0][0] == 0 and spans[-1][1] == repetitions
    assert all(a[1] == b[0] for a, b in zip(spans, spans[1:])) and all(lo < hi for lo, hi in spans)


@pytest.mark.parametrize("max_symbols", [1, 6, 7, 20, 10**6])
def test_transcript_parts_reassemble_to_the_transcript(max_symbols: int) -> None:
    private, public = generate_key_pair()
    symbols = np.random.default_rng(2).integers(0, 4, size=(5, 3)).astype(np.uint8)
    parts = TranscriptMessage.signed_parts(private, session="s", round=1, participants=np.array([0, 4, 9]),
                                           symbols=symbols, max_symbols=max_symbols)
    # r = max(1, max_symbols // 3) rows a part at most, ceil(5 / r) parts: 1 -> 5, 6 -> 3, 7 -> 3, 20 -> 1
    assert len(parts) == {1: 5, 6: 3, 7: 3, 20: 1, 10**6: 1}[max_symbols]
    back = [TranscriptMessage.model_validate_json(p.model_dump_json()) for p in parts]
    assert all(verify_message(m, public) for m in back)
    assert all(m.symbol_matrix().size <= max(max_symbols, 3) for m in back)
    assert [(m.part, m.parts, m.repetitions) for m in back] == [(i, len(parts), 5) for i in range(len(parts))]
    assert np.array_equal(np.concatenate([m.symbol_matrix() for m in back]), symbols)
    with pytest.raises(ValueError, match="max_symbols"):
        TranscriptMessage.signed_parts(private, session="s", round=1, participants=np.arange(3), symbols=symbols,
                                       max_symbols=0)


def test_transcript_of_ten_thousand_parties_fits_the_brokers_default_payload_limits() -> None:
    # k = 10^4 participants x 300 repetitions = 3 million symbols: one message of 1 MB (packed 2 bits a
    # symbol, base64) would pass NATS's default max_payload of 1 MiB; every part stays far below it.
    private, public = generate_key_pair()
    k, repetitions = 10_000, 300
    symbols = np.random.default_rng(3).integers(0, 4, size=(repetitions, k)).astype(np.uint8)
    whole = len(TranscriptMessage.signed(private, session="s", round=0, participants=np.arange(k),
                                         symbols=symbols).model_dump_json())
    assert whole > 1 << 20
    parts = TranscriptMessage.signed_parts(private, session="s", round=0, participants=np.arange(k), symbols=symbols)
    assert len(parts) == -(-repetitions // (TRANSCRIPT_PART_SYMBOLS // k)) == 3
    sizes = [len(p.model_dump_json()) for p in parts]
    assert max(sizes) < 450_000 < 1 << 20  # 100 rows x 10^4 symbols: 333 kB of base64 + 49 kB of ids
    assert np.array_equal(np.concatenate([p.symbol_matrix() for p in parts]), symbols)


def test_a_transcript_is_refused_only_over_its_size_with_the_repetitions_that_fit() -> None:
    check_transcript_size(100_000, 200)  # 2 x 10^7 symbols: refused at 2^24 before (after the round had run)
    check_transcript_size(100_000, 1342)  # 134,200,000 <= 2^27 = 134,217,728
    with pytest.raises(ParameterError, match=r"100,000 participants x 1,343 repetitions = 134,300,000 symbols is "
                                             r"over the 134,217,728 .*use 1,342 repetitions or fewer"):
        check_transcript_size(100_000, 1343)


def test_a_part_naming_a_whole_transcript_over_the_limit_does_not_validate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mpdp.broker.decision_messages.MAX_TRANSCRIPT_SYMBOLS", 20)  # 5 x 4 fits, 5 x 5 not
    private, _ = generate_key_pair()
    symbols = np.zeros((5, 5), dtype=np.uint8)
    TranscriptMessage.signed(private, session="s", round=0, participants=np.arange(5), symbols=symbols[:4])
    with pytest.raises(ValueError, match="5 participants x 5 repetitions = 25 symbols is over the 20"):
        TranscriptMessage.signed_parts(private, session="s", round=0, participants=np.arange(5), symbols=symbols,
                                       max_symbols=5)
