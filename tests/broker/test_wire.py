"""The binary party answer (mpdp.broker.wire) and the PyNaCl signatures: the documented layout byte for byte,
every bad field refused, any flipped bit caught, and signatures interchangeable with ``cryptography``'s (so
keys and records made before the switch stay valid)."""

from __future__ import annotations

import base64
import json
import struct
from unittest import mock

import numpy as np
import pytest
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.broker import signing, wire
from mpdp.broker.messages import PartyMessage, decode_answer
from mpdp.broker.packing import any_symbol_at_least, pack_bytes, unpack_rows
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import SESSION_PATTERN
from mpdp.protocols.errors import ParameterError, ProtocolViolation

PRIVATE, PUBLIC = signing.generate_key_pair()
SYMBOLS = np.array([0, 1, 2, 3, 3, 2, 1], dtype=np.uint8)


def _message(**changes: object) -> PartyMessage:
    fields: dict[str, object] = {"session": "s-1", "round": 2, "party": 5, "repetitions": 7, "symbols": SYMBOLS}
    return PartyMessage.signed(PRIVATE, **(fields | changes))  # type: ignore[arg-type]


def test_the_bytes_follow_the_documented_layout_and_cryptography_verifies_them() -> None:
    message = _message()
    data = message.to_wire()
    nonce = bytes.fromhex(message.nonce)
    # by hand from the table: format, session length, session, round, party, repetitions (uint32 LE), kind,
    # reason length, nonce, symbols 0,1,2,3 | 3,2,1,pad -> 0b00011011, 0b11100100, signature
    body = (b"\x02\x03s-1" + (2).to_bytes(4, "little") + (5).to_bytes(4, "little") + (7).to_bytes(4, "little")
            + b"\x00\x00" + nonce + bytes([0b00011011, 0b11100100]))
    assert data[:-64] == body and len(data) == len(body) + 64
    assert data[-64:] == base64.b64decode(message.signature)
    Ed25519PublicKey.from_public_bytes(PUBLIC).verify(data[-64:], b"mpdp/party-message/v2\n" + body)  # no raise
    assert message.signed_bytes() == b"mpdp/party-message/v2\n" + body


def test_an_abstention_carries_its_reason_and_no_symbols() -> None:
    message = PartyMessage.signed(PRIVATE, session="s", round=0, party=1, repetitions=9, reason="budget-exhausted")
    data = message.to_wire()
    assert data[3 + 12:3 + 14] == bytes([1, len("budget-exhausted")])
    assert data[3 + 14:3 + 14 + 16] == b"budget-exhausted" and len(data) == 3 + 14 + 16 + 16 + 64
    answer = decode_answer(data)
    assert (answer.kind, answer.reason, answer.packed, answer.symbol_array().shape) == ("abstain", "budget-exhausted",
                                                                                        b"", (0,))
    assert verify_message(answer, PUBLIC) and PartyMessage.from_wire(data) == message


@pytest.mark.parametrize("repetitions", [1, 2, 3, 4, 5, 200, 1001])
def test_both_forms_roundtrip_to_the_same_verified_message(repetitions: int) -> None:
    symbols = np.random.default_rng(repetitions).integers(0, 4, repetitions).astype(np.uint8)
    message = _message(repetitions=repetitions, symbols=symbols)
    for data in (message.to_wire(), message.model_dump_json().encode()):
        answer = decode_answer(data)
        assert (answer.session, answer.round, answer.party, answer.repetitions, answer.kind, answer.reason) == (
            "s-1", 2, 5, repetitions, "symbols", None)
        assert np.array_equal(answer.symbol_array(), symbols) and verify_message(answer, PUBLIC)
        assert answer.signed_bytes() == message.signed_bytes()  # one signature, two forms
        assert PartyMessage.from_wire(data) == message
    assert len(message.to_wire()) == 2 + 3 + 14 + 16 + (repetitions + 3) // 4 + 64


def _edit(data: bytes, at: int, new: bytes, cut: int = 0) -> bytes:
    return data[:at] + new + data[at + max(cut, len(new)):]


GOOD = _message().to_wire()
ABSTAIN = PartyMessage.signed(PRIVATE, session="s-1", round=2, party=5, repetitions=7, reason="did-not-vote").to_wire()
AT = 5  # the round's offset in GOOD (session "s-1")


#: (name, bytes) of answers with one bad field; the name is the test id (the bytes carry a fresh signature per
#: process, and pytest-xdist's workers must collect the same ids).
BAD_FIELDS = [
    ("empty", b""), ("format byte", _edit(GOOD, 0, b"\x01")), ("JSON-looking", b"{" + GOOD[1:]),
    ("session length 0", _edit(GOOD, 1, b"\x00")), ("session length 65", _edit(GOOD, 1, b"\x41")),
    ("session character", _edit(GOOD, 2, b"/")), ("session starts with '-'", _edit(GOOD, 2, b"-")),
    ("session newline", _edit(GOOD, 4, b"\n")),
    ("round 2**31", _edit(GOOD, AT, struct.pack("<I", 2**31))),
    ("party 2**31", _edit(GOOD, AT + 4, struct.pack("<I", 2**31))),
    ("repetitions 0", _edit(GOOD, AT + 8, struct.pack("<I", 0))),
    ("repetitions above the cap", _edit(GOOD, AT + 8, struct.pack("<I", wire.MAX_REPETITIONS + 1))),
    ("repetitions 9 for 2 bytes of symbols", _edit(GOOD, AT + 8, struct.pack("<I", 9))),
    ("kind 2", _edit(GOOD, AT + 12, b"\x02")), ("symbols with a reason length", _edit(GOOD, AT + 13, b"\x01")),
    ("abstain without a reason", _edit(ABSTAIN, AT + 12, b"\x01\x00", cut=2 + len("did-not-vote"))),
    ("symbols marked abstain", _edit(GOOD, AT + 12, b"\x01")),
    ("reason character", _edit(ABSTAIN, AT + 14, b"D")), ("reason newline", _edit(ABSTAIN, AT + 25, b"\n")),
    ("non-zero padding bits", _edit(GOOD, AT + 14 + 16 + 1, b"\xe5")),
    ("one byte more", GOOD + b"\x00"), ("one byte less", GOOD[:-1]), ("header only", GOOD[:AT + 3]),
]


@pytest.mark.parametrize(("name", "data"), BAD_FIELDS, ids=[name for name, _ in BAD_FIELDS])
def test_every_bad_field_is_refused_as_schema(name: str, data: bytes) -> None:
    with pytest.raises(ProtocolViolation) as caught:
        decode_answer(data)
    assert caught.value.reason == "schema", name


def test_any_flipped_bit_is_refused_or_fails_the_signature() -> None:
    for data in (GOOD, ABSTAIN):
        for at in range(len(data)):
            for bit in (0, 7):
                bad = bytearray(data)
                bad[at] ^= 1 << bit
                try:
                    answer = decode_answer(bytes(bad))
                except ProtocolViolation as exc:
                    assert exc.reason == "schema"
                    continue
                assert not verify_message(answer, PUBLIC), (at, bit)
        assert verify_message(decode_answer(data), PUBLIC)


def test_signatures_and_keys_interchange_with_cryptography() -> None:
    data = b"mpdp/party-message/v2\n" + GOOD[:-64]
    old = Ed25519PrivateKey.from_private_bytes(PRIVATE)
    old_public = old.public_key()
    assert signing.public_key_of(PRIVATE) == old_public.public_bytes_raw()
    # Ed25519 is deterministic: both libraries make the same signature, and each verifies the other's
    assert old.sign(data) == signing.sign_bytes(data, PRIVATE)
    assert signing.verify_bytes(data, old.sign(data), PUBLIC)
    old_public.verify(signing.sign_bytes(data, PRIVATE), data)  # no raise
    tampered = bytes([data[0] ^ 1]) + data[1:]
    assert not signing.verify_bytes(tampered, old.sign(data), PUBLIC)
    with pytest.raises(InvalidSignature):
        old_public.verify(signing.sign_bytes(data, PRIVATE), tampered)
    assert not signing.verify_bytes(data, old.sign(data)[:63], PUBLIC)  # a short signature is a failure, not an error


def test_a_version_1_json_answer_signed_by_cryptography_still_verifies_and_domains_do_not_mix() -> None:
    draft = PartyMessage(version=1, session="s-1", round=2, party=5, kind="symbols", repetitions=7,
                         symbols=_message().symbols, nonce="0" * 32, signature=signing.PLACEHOLDER_SIGNATURE)
    signature = Ed25519PrivateKey.from_private_bytes(PRIVATE).sign(signing.canonical_bytes(draft))  # the old backend
    record = draft.model_copy(update={"signature": base64.b64encode(signature).decode()}).model_dump_json()
    answer = decode_answer(record.encode())
    assert verify_message(answer, PUBLIC) and answer.signed_bytes().startswith(b"mpdp/party-message/v1\n")
    assert PartyMessage.from_wire(record).to_wire() == record.encode()  # version 1 is re-sent as JSON
    # the same fields under version 2 (binary domain) do not verify with the version-1 signature, nor the reverse
    as_v2 = json.loads(record) | {"version": 2}
    assert not verify_message(decode_answer(json.dumps(as_v2).encode()), PUBLIC)
    v2 = _message()
    as_v1 = json.loads(v2.model_dump_json()) | {"version": 1}
    assert not verify_message(decode_answer(json.dumps(as_v1).encode()), PUBLIC)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), min_size=1, max_size=41).map(lambda v: np.array(v, np.uint8)),
                min_size=1, max_size=5), st.integers(1, 4))
def test_the_packed_range_check_and_the_bulk_unpack_agree_with_unpacking_each(rows: list[np.ndarray],
                                                                               limit: int) -> None:
    for symbols in rows:
        assert any_symbol_at_least(pack_bytes(symbols), limit) == (int(symbols.max()) >= limit)
    length = len(rows[0])
    same = [np.resize(symbols, length) for symbols in rows]  # one repetition count per round
    unpacked = unpack_rows([pack_bytes(s) for s in same], length)
    assert unpacked.dtype == np.uint8 and np.array_equal(unpacked, np.stack(same))
    assert unpack_rows([], length).shape == (0, length)  # a round nobody answered with symbols


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(GOOD) - 1), st.integers(1, 255)), max_size=3),
       st.integers(0, 3), st.binary(max_size=3))
def test_a_decoded_binary_answer_has_exactly_one_encoding(flips: list[tuple[int, int]], cut: int, tail: bytes) -> None:
    data = bytearray(GOOD)
    for at, bits in flips:
        data[at] ^= bits
    edited = bytes(data[:len(data) - cut]) + tail
    try:
        message = PartyMessage.from_wire(edited)
    except ProtocolViolation as exc:
        assert exc.reason == "schema"
        return
    assert message.to_wire() == edited and decode_answer(edited).signed_bytes() == message.signed_bytes()


def test_an_unknown_binary_format_is_named() -> None:
    """A payload whose first byte is another binary format (not 0x02, not JSON text) is refused as
    ``schema`` naming the format, not as invalid JSON."""
    for first in (0x00, 0x01, 0x03, 0x08):
        with pytest.raises(ProtocolViolation, match=f"format {first}; this version reads format 2 and JSON"):
            decode_answer(bytes((first,)) + b"\x02s1" + bytes(40))


_SESSIONS = st.from_regex(SESSION_PATTERN, fullmatch=True)
_REASONS = st.from_regex(r"^[a-z0-9][a-z0-9-]{0,63}$", fullmatch=True)
_INDEX = st.integers(0, 2**31 - 1)


@settings(max_examples=150, deadline=None)
@given(session=_SESSIONS, round=_INDEX, party=_INDEX, repetitions=st.integers(1, 300),
       reason=st.none() | _REASONS, nonce=st.binary(min_size=16, max_size=16), seed=st.integers(0, 2**32 - 1))
def test_the_direct_answer_is_byte_for_byte_the_pydantic_one_and_decodes_back(
        session: str, round: int, party: int, repetitions: int, reason: str | None, nonce: bytes, seed: int) -> None:
    """The party's hot path (:func:`wire.sign_answer`, no pydantic) and the validating edge
    (``PartyMessage.signed(...).to_wire()``) give the same bytes for the same fields and nonce (Ed25519 is
    deterministic), and :func:`decode_answer` reads every field back."""
    symbols = None if reason is not None else \
        np.random.default_rng(seed).integers(0, 4, repetitions).astype(np.uint8)
    fields = {"session": session, "round": round, "party": party, "repetitions": repetitions, "symbols": symbols,
              "reason": reason}
    direct = wire.sign_answer(PRIVATE, nonce=nonce, **fields)  # type: ignore[arg-type]
    with mock.patch("mpdp.broker.messages.new_nonce", return_value=nonce.hex()):
        validated = PartyMessage.signed(PRIVATE, **fields)  # type: ignore[arg-type]
    data = direct.to_wire()
    assert data == validated.to_wire() and direct.signed_bytes() == validated.signed_bytes()
    answer = decode_answer(data)
    assert (answer.session, answer.round, answer.party, answer.repetitions, answer.kind, answer.reason,
            answer.nonce, answer.packed, answer.signature, answer.signed) == (
        session, round, party, repetitions, "abstain" if reason else "symbols", reason, nonce, direct.packed,
        direct.signature, direct.signed)
    assert np.array_equal(answer.symbol_array(), np.zeros(0) if symbols is None else symbols)
    assert verify_message(answer, PUBLIC) and answer.to_wire() == data


def test_the_direct_answer_draws_a_fresh_nonce_and_needs_exactly_one_of_symbols_and_reason() -> None:
    first, second = (wire.sign_answer(PRIVATE, session="s", round=0, party=1, repetitions=7, symbols=SYMBOLS)
                     for _ in range(2))
    assert len(first.nonce) == 16 and first.nonce != second.nonce and first.to_wire() != second.to_wire()
    with pytest.raises(ParameterError, match="reason"):
        wire.sign_answer(PRIVATE, session="s", round=0, party=1, repetitions=7)
    with pytest.raises(ParameterError, match="reason"):
        wire.sign_answer(PRIVATE, session="s", round=0, party=1, repetitions=7, symbols=SYMBOLS, reason="policy")
    with pytest.raises(ProtocolViolation, match="symbols"):
        wire.sign_answer(PRIVATE, session="s", round=0, party=1, repetitions=2, symbols=np.array([1, 4], np.uint8))


def test_fresh_nonces_are_distinct_across_buffer_refills() -> None:
    nonces = [wire.sign_answer(PRIVATE, session="s", round=0, party=0, repetitions=1, reason="policy").nonce
              for _ in range(600)]  # > two buffers of 256
    assert len(set(nonces)) == 600 and {len(n) for n in nonces} == {16}


def test_the_unsigned_form_is_the_signed_layout_without_its_signature_and_never_verifies() -> None:
    """A bundle's entry (format 0x05): the signed answer's bytes with the format byte 0x05 and without the last 64
    bytes; it decodes to the same fields with an empty signature, which no key verifies, and its length is checked
    as exactly the layout's."""
    nonce = bytes(range(16))
    fields = {"session": "s-1", "round": 2, "party": 5, "repetitions": 7, "symbols": SYMBOLS, "nonce": nonce}
    signed = wire.sign_answer(PRIVATE, **fields).to_wire()  # type: ignore[arg-type]
    unsigned = wire.sign_answer(None, **fields).to_wire()  # type: ignore[arg-type]
    assert unsigned == b"\x05" + signed[1:-64] and len(unsigned) == len(signed) - 64
    answer = decode_answer(unsigned)
    assert (answer.session, answer.round, answer.party, answer.nonce, answer.signature) == ("s-1", 2, 5, nonce, b"")
    assert answer.symbol_array().tolist() == SYMBOLS.tolist() and not verify_message(answer, PUBLIC)
    for bad in (unsigned + bytes(64), unsigned[:-1]):  # a signature appended, a byte short
        with pytest.raises(ProtocolViolation, match="bytes, the layout needs"):
            decode_answer(bad)
