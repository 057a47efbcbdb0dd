"""Answer bundles (broker/bundle.py): entries come back in order and byte for byte under the worker's signature
(checked with libsodium directly over the documented bytes); each fault of the layout is one ``schema`` naming it;
a bundle under another key, for another session or worker, or with one byte changed is ``signature``; the encoder
refuses what the decoder would."""

from __future__ import annotations

import struct

import pytest
from nacl.bindings import crypto_sign_open

from mpdp.broker.bundle import DOMAIN, FORMAT, MAX_ENTRIES, decode_bundle, encode_bundle
from mpdp.broker.signing import generate_key_pair, load_private_key, load_public_key
from mpdp.protocols.errors import ParameterError, ProtocolViolation

PRIVATE, PUBLIC = generate_key_pair()
KEY = load_private_key(PRIVATE)
VERIFY = load_public_key(PUBLIC)
SESSION = "bench-00000001"


def _signed(body: bytes) -> bytes:
    """``body`` with a valid signature (the layout faults below are not signature faults)."""
    context = DOMAIN + bytes((len(SESSION),)) + SESSION.encode("ascii") + struct.pack("<I", 3)
    return body + KEY.sign(context + body).signature


def test_round_trip_keeps_order_parties_and_bytes_under_the_documented_signature() -> None:
    entries = [(7, b"\x02abc"), (0, b"x"), (2**32 - 1, bytes(range(256)))]
    bundle = encode_bundle(entries, KEY, session=SESSION, worker=3)
    # the layout by hand: format, count, then (party, length, bytes) little-endian, then 64 signature bytes
    body = bytes([FORMAT]) + struct.pack("<I", 3) + b"".join(
        struct.pack("<II", party, len(message)) + message for party, message in entries)
    assert bundle[:-64] == body and len(bundle) == len(body) + 64
    # the signature covers the domain, the session (length-prefixed), the worker (uint32 LE), then the body
    signed = b"mpdp/answer-bundle/v2\n" + b"\x0ebench-00000001" + b"\x03\x00\x00\x00" + body
    assert crypto_sign_open(bundle[-64:] + signed, PUBLIC) == signed
    assert decode_bundle(bundle, VERIFY, session=SESSION, worker=3) == entries


@pytest.mark.parametrize(("body", "fault"), [
    (b"", "first byte"),
    (b"\x02" + struct.pack("<I", 1), "first byte"),  # a party answer, not a bundle
    (b"\x03" + struct.pack("<I", 1) + struct.pack("<II", 1, 1) + b"a", "first byte"),  # version 1 (unsigned)
    (bytes([FORMAT]) + struct.pack("<I", 0), "0 entries"),
    (bytes([FORMAT]) + struct.pack("<I", MAX_ENTRIES + 1), f"{MAX_ENTRIES + 1} entries"),
    (bytes([FORMAT]) + struct.pack("<I", 2) + struct.pack("<II", 1, 1) + b"a", "too short for 2 entries"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 5) + b"abc", "entry of party 1: 5 bytes"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 0), "entry of party 1: 0 bytes"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 1) + b"ab", "1 bytes between the last entry"),
])
def test_every_fault_is_one_schema_rejection_naming_it(body: bytes, fault: str) -> None:
    with pytest.raises(ProtocolViolation, match=fault) as caught:
        decode_bundle(_signed(body), VERIFY, session=SESSION, worker=3)
    assert caught.value.reason == "schema"


def test_a_bundle_is_only_valid_under_its_workers_key_for_its_session_and_worker() -> None:
    bundle = encode_bundle([(1, b"\x02answer"), (2, b"\x02other")], KEY, session=SESSION, worker=3)
    stranger = load_public_key(generate_key_pair()[1])
    changed = bytearray(bundle)
    changed[14] ^= 1  # a byte of party 1's answer
    for payload, key, session, worker in [(bundle, stranger, SESSION, 3),  # forged: another key
                                          (bundle, VERIFY, "bench-00000002", 3),  # replayed into another session
                                          (bundle, VERIFY, SESSION, 4),  # replayed on another worker's topic
                                          (bytes(changed), VERIFY, SESSION, 3)]:  # an answer altered
        with pytest.raises(ProtocolViolation, match="not signed by its bundle key") as caught:
            decode_bundle(payload, key, session=session, worker=worker)
        assert caught.value.reason == "signature"


@pytest.mark.parametrize("entries", [[], [(1, b"")], [(-1, b"a")], [(2**32, b"a")]])
def test_encoder_refuses_what_no_bundle_holds(entries: list[tuple[int, bytes]]) -> None:
    with pytest.raises(ParameterError, match="bundle entr"):
        encode_bundle(entries, KEY, session=SESSION, worker=3)
