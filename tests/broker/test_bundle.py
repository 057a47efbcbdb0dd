"""Answer bundles (broker/bundle.py): entries come back in order and byte for byte; each fault of the layout is
one ``schema`` naming it; the encoder refuses what the decoder would."""

from __future__ import annotations

import struct

import pytest

from mpdp.broker.bundle import FORMAT, MAX_ENTRIES, decode_bundle, encode_bundle
from mpdp.protocols.errors import ParameterError, ProtocolViolation


def test_round_trip_keeps_order_parties_and_bytes() -> None:
    entries = [(7, b"\x02abc"), (0, b"x"), (2**32 - 1, bytes(range(256)))]
    bundle = encode_bundle(entries)
    # the layout by hand: format, count, then (party, length, bytes) little-endian
    expected = bytes([FORMAT]) + struct.pack("<I", 3) + b"".join(
        struct.pack("<II", party, len(message)) + message for party, message in entries)
    assert bundle == expected
    assert decode_bundle(bundle) == entries


@pytest.mark.parametrize(("payload", "fault"), [
    (b"", "first byte"),
    (b"\x02" + struct.pack("<I", 1), "first byte"),  # a party answer, not a bundle
    (bytes([FORMAT]) + struct.pack("<I", 0), "0 entries"),
    (bytes([FORMAT]) + struct.pack("<I", MAX_ENTRIES + 1), f"{MAX_ENTRIES + 1} entries"),
    (bytes([FORMAT]) + struct.pack("<I", 2) + struct.pack("<II", 1, 1) + b"a", "too short for 2 entries"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 5) + b"abc", "entry of party 1: 5 bytes"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 0), "entry of party 1: 0 bytes"),
    (bytes([FORMAT]) + struct.pack("<I", 1) + struct.pack("<II", 1, 1) + b"ab", "1 bytes after the last entry"),
])
def test_every_fault_is_one_schema_rejection_naming_it(payload: bytes, fault: str) -> None:
    with pytest.raises(ProtocolViolation, match=fault) as caught:
        decode_bundle(payload)
    assert caught.value.reason == "schema"


@pytest.mark.parametrize("entries", [[], [(1, b"")], [(-1, b"a")], [(2**32, b"a")]])
def test_encoder_refuses_what_no_bundle_holds(entries: list[tuple[int, bytes]]) -> None:
    with pytest.raises(ParameterError, match="bundle entr"):
        encode_bundle(entries)
