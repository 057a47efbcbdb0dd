"""Wire messages: roundtrip, every bad field rejected, signatures that catch any tampering."""

from __future__ import annotations

import base64
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.packing import pack_symbols, unpack_symbols
from mpdp.broker.signing import (
    canonical_bytes,
    generate_key_pair,
    public_key_of,
    verify_message,
    verify_signature,
)
from mpdp.protocols.errors import ProtocolViolation

PRIVATE, PUBLIC = generate_key_pair()
SYMBOLS = np.array([0, 1, 2, 3, 3, 2, 1], dtype=np.uint8)


def _message(**changes: object) -> PartyMessage:
    return PartyMessage.signed(PRIVATE, session="s-1", round=2, party=5, repetitions=7, symbols=SYMBOLS, **changes)


def test_party_message_roundtrips_through_json_and_verifies() -> None:
    message = _message()
    again = PartyMessage.model_validate_json(message.model_dump_json())
    assert again == message
    assert np.array_equal(again.symbol_array(), SYMBOLS) and again.symbol_array().dtype == np.uint8
    assert verify_message(again, PUBLIC)
    assert public_key_of(PRIVATE) == PUBLIC


def test_abstention_carries_a_reason_and_no_symbols() -> None:
    message = PartyMessage.signed(PRIVATE, session="s", round=0, party=0, repetitions=3, reason="budget-exhausted")
    again = PartyMessage.model_validate_json(message.model_dump_json())
    assert (again.kind, again.reason, again.symbols) == ("abstain", "budget-exhausted", "")
    assert again.symbol_array().shape == (0,) and verify_message(again, PUBLIC)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("extra", 1), ("version", 3), ("session", "a/b"), ("session", "a+"), ("session", ""),
        ("session", "x" * 65), ("round", -1), ("round", "2"), ("round", 2.0), ("round", True),
        ("party", -1), ("party", 2**31), ("kind", "vote"), ("reason", "did-not-vote"), ("repetitions", 0),
        ("repetitions", 9), ("repetitions", 6), ("symbols", "!!!!"), ("symbols", "G5s"),
        ("symbols", "G5u7"), ("symbols", ""), ("nonce", "00"), ("nonce", "Z" * 32),
        ("signature", "abc"), ("signature", None),
    ],
)
def test_every_bad_field_is_rejected(field: str, value: object) -> None:
    data = json.loads(_message().model_dump_json())
    data[field] = value
    with pytest.raises(ValidationError):
        PartyMessage.model_validate_json(json.dumps(data))


@pytest.mark.parametrize("field", ["session", "round", "party", "kind", "repetitions", "symbols", "nonce", "signature"])
def test_a_missing_field_is_rejected(field: str) -> None:
    data = json.loads(_message().model_dump_json())
    del data[field]
    with pytest.raises(ValidationError):
        PartyMessage.model_validate_json(json.dumps(data))


def test_abstention_with_symbols_or_without_reason_is_rejected() -> None:
    data = json.loads(PartyMessage.signed(PRIVATE, session="s", round=0, party=0, repetitions=4,
                                          reason="did-not-vote").model_dump_json())
    for bad in ({"symbols": pack_symbols(np.zeros(4, np.uint8))}, {"reason": None}):
        with pytest.raises(ValidationError):
            PartyMessage.model_validate_json(json.dumps(data | bad))


@pytest.mark.parametrize(
    ("field", "value"),
    [("session", "s-2"), ("round", 3), ("party", 6), ("repetitions", 8),
     ("symbols", pack_symbols(np.array([1, 1, 2, 3, 3, 2, 1], np.uint8))), ("nonce", "0" * 32)],
)
def test_tampering_with_any_signed_field_breaks_the_signature(field: str, value: object) -> None:
    data = json.loads(_message().model_dump_json())
    data[field] = value
    if field == "repetitions":
        data["symbols"] = pack_symbols(np.zeros(8, np.uint8))
    tampered = PartyMessage.model_validate_json(json.dumps(data))
    assert not verify_message(tampered, PUBLIC)


def test_a_signature_by_another_key_or_flipped_bit_does_not_verify() -> None:
    message = _message()
    _, other_public = generate_key_pair()
    assert not verify_message(message, other_public)
    raw = bytearray(base64.b64decode(message.signature))
    raw[0] ^= 1
    flipped = message.model_copy(update={"signature": base64.b64encode(bytes(raw)).decode()})
    assert not verify_message(flipped, PUBLIC)


def test_canonical_bytes_are_sorted_compact_json_after_the_domain() -> None:
    message = _message()
    domain, body = canonical_bytes(message).split(b"\n", 1)
    assert domain == b"mpdp/party-message/v1"
    fields = json.loads(body)
    assert list(fields) == sorted(fields) and "signature" not in fields and b" " not in body
    assert fields == json.loads(message.model_dump_json(exclude={"signature"}))


def test_announcement_and_status_roundtrip() -> None:
    announcement = Announcement.signed(PRIVATE, session="s", kind="round", round=4, name="bill 4", repetitions=9)
    assert Announcement.model_validate_json(announcement.model_dump_json()) == announcement
    assert verify_message(announcement, PUBLIC)
    # the party-message domain separates the two kinds of signed message
    assert canonical_bytes(announcement).startswith(b"mpdp/announcement/v1\n")
    other_private, other_public = generate_key_pair()
    status = WorkerStatus.signed([PRIVATE, other_private], session="s", worker=1, state="ready", parties=(3, 4))
    assert WorkerStatus.model_validate_json(status.model_dump_json()) == status
    # one signature per listed party, each by that party's own key over the same canonical bytes
    assert status.unsigned({3: PUBLIC, 4: other_public}) == [] and len(set(status.signatures)) == 2
    assert status.unsigned({3: PUBLIC, 4: PUBLIC}) == [4] and status.unsigned({3: other_public}) == [3, 4]
    assert status.unsigned({3: PUBLIC, 4: PUBLIC}, first=1) == [] and status.unsigned({3: other_public}, first=1) == [3]
    assert all(verify_signature(hashlib.sha512(canonical_bytes(status)).digest(), s, key)
               for s, key in zip(status.signatures, (PUBLIC, other_public), strict=True))
    assert canonical_bytes(status).startswith(b"mpdp/worker-status/v1\n") and b"signatures" not in canonical_bytes(status)
    tampered = status.model_copy(update={"detail": "x"})
    assert tampered.unsigned({3: PUBLIC, 4: other_public}) == [3, 4]
    with pytest.raises(ValidationError):
        WorkerStatus.model_validate_json(status.model_dump_json().replace("ready", "sleeping"))
    with pytest.raises(ValidationError, match="1 signatures for 2 parties"):
        WorkerStatus.signed([PRIVATE], session="s", worker=1, state="ready", parties=(3, 4))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=41))
def test_packing_roundtrips_and_is_canonical(values: list[int]) -> None:
    symbols = np.array(values, dtype=np.uint8)
    text = pack_symbols(symbols)
    assert len(text) == 4 * (((len(values) + 3) // 4 + 2) // 3)
    assert np.array_equal(unpack_symbols(text, len(values)), symbols)


def test_packing_layout_and_errors() -> None:
    assert pack_symbols(np.array([0, 1, 2, 3, 1], np.uint8)) == "G0A="  # 0b00011011, 0b01000000
    with pytest.raises(ProtocolViolation, match="symbols"):
        pack_symbols(np.array([4], np.uint8))
    with pytest.raises(ProtocolViolation, match="padding"):
        unpack_symbols("G0E=", 5)  # a non-zero bit after the fifth symbol
    with pytest.raises(ProtocolViolation, match="bytes"):
        unpack_symbols("G0A=", 9)
