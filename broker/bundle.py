"""Answer bundles: many parties' signed answers in one MQTT message (``mpdp simulate --connections per-worker``).

A simulation worker that serves its parties on one connection (:mod:`mpdp.parties.session.multiplex`) sends
their answers of a round in bundles on its own topic (:meth:`mpdp.broker.topics.Topics.bundle`) instead of one
QoS 1 message per party: one PUBLISH, one PUBACK and one pass of the MQTT clients' and the event loops' per-message
work for up to :data:`MAX_ENTRIES` answers (issue 23 item 2). Each entry is the party's own message, byte for byte
as it would publish it on its party topic (for randomized response the signed binary answer of
:mod:`mpdp.broker.wire`, drawn and signed by the party under its own privacy policy): the observer verifies
and records each entry as if it had come on that party's topic, and checks that the party is one of the
bundling worker's (from the worker's signed "ready"), as it checks an answer's topic against its party.

Layout (version 1, little-endian)::

    offset  size  field
    0       1     format: 0x03 (answer bundle, version 1); a party answer starts with 0x02, JSON with ``{``
    1       4     uint32 n, the number of entries (1 .. MAX_ENTRIES)
    5       ...   n entries: uint32 party id, uint32 length L (1 .. MAX_ENTRY_BYTES), then L bytes

The length must be exactly what the entries take, so one bundle has one encoding.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = ["FORMAT", "MAX_ENTRIES", "MAX_ENTRY_BYTES", "decode_bundle", "encode_bundle"]

#: The first byte of an answer bundle, version 1.
FORMAT = 0x03
#: Entries one bundle may carry at most.
MAX_ENTRIES = 10_000
#: Bytes one entry may carry at most (a party answer of 10^6 repetitions is 250 kB).
MAX_ENTRY_BYTES = 1 << 20
_COUNT = struct.Struct("<BI")
_ENTRY = struct.Struct("<II")


def encode_bundle(entries: Sequence[tuple[int, bytes]]) -> bytes:
    """The bundle of ``entries``, (party id, the party's message bytes) pairs, in their order.

    Raises:
        ParameterError: no entry or more than :data:`MAX_ENTRIES`, an empty or too long message, a party id
            outside uint32.
    """
    if not 1 <= len(entries) <= MAX_ENTRIES:
        raise ParameterError("bundle entries", len(entries), f"1..{MAX_ENTRIES}")
    parts = [_COUNT.pack(FORMAT, len(entries))]
    for party, message in entries:
        if not 1 <= len(message) <= MAX_ENTRY_BYTES or not 0 <= party < 2**32:
            raise ParameterError("bundle entry", (party, len(message)),
                                 f"a party id in 0..2**32-1 and 1..{MAX_ENTRY_BYTES} bytes")
        parts += (_ENTRY.pack(party, len(message)), message)
    return b"".join(parts)


def _schema(detail: str) -> ProtocolViolation:
    return ProtocolViolation("schema", f"answer bundle: {detail}")


def decode_bundle(payload: bytes) -> list[tuple[int, bytes]]:
    """The (party id, message bytes) entries of a bundle, in order (the messages are not checked here).

    Raises:
        ProtocolViolation: ``"schema"``, not a bundle of this layout (names the first fault).
    """
    size = len(payload)
    if size < _COUNT.size or payload[0] != FORMAT:
        raise _schema(f"the first byte must be {FORMAT:#04x}, then a uint32 count")
    _, count = _COUNT.unpack_from(payload)
    if not 1 <= count <= MAX_ENTRIES:
        raise _schema(f"{count} entries, allowed 1..{MAX_ENTRIES}")
    entries, at = [], _COUNT.size
    for _ in range(count):
        if at + _ENTRY.size > size:
            raise _schema(f"{size} bytes, too short for {count} entries")
        party, length = _ENTRY.unpack_from(payload, at)
        at += _ENTRY.size
        if not 1 <= length <= MAX_ENTRY_BYTES or at + length > size:
            raise _schema(f"entry of party {party}: {length} bytes")
        entries.append((party, payload[at:at + length]))
        at += length
    if at != size:
        raise _schema(f"{size - at} bytes after the last entry")
    return entries
