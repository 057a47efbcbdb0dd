"""Answer bundles: many parties' answers in one MQTT message, signed once by the worker that sends them
(``mpdp simulate --connections per-worker``).

A simulation worker that serves its parties on one connection (:mod:`mpdp.parties.session.multiplex`) sends
their answers of a round in bundles on its own topic (:meth:`mpdp.broker.topics.Topics.bundle`) instead of one
QoS 1 message per party: one PUBLISH, one PUBACK and one pass of the MQTT clients' and the event loops' per-message
work for up to :data:`MAX_ENTRIES` answers (issue 23 item 2). Each entry is the party's own message, drawn by the
party under its own privacy policy: for randomized response its binary answer of :mod:`mpdp.broker.wire` without
the party's own signature (:data:`mpdp.broker.wire.UNSIGNED_FORMAT`: the bundle's signature authenticates it, one
Ed25519 signature per bundle instead of one per answer: signing was ~29% of a worker's busy samples); for the
curator its signed sealed ballot.

Authentication: the worker signs the whole bundle once with a key of its own (a fresh Ed25519 key per worker
process), whose public half it names in its "ready" report (:attr:`mpdp.broker.messages.WorkerStatus.bundle_key`),
which every one of its parties signs with its own roster key. So each party endorsed that key with its own
key, as it endorses the report itself: a worker can bundle only for parties whose private keys it holds, the
same parties it could sign answers for, and a bundled answer is attributable to that party through the key its
host holds, as an answer on the party's topic is. The observer checks the bundle's signature (one Ed25519
verification per bundle instead of one per answer: verification was ~80% of its intake per answer) and that
every entry's party is one of that worker's ready parties. The transcript store keeps each bundle that brought
an answer it records and each part of the worker's signed "ready", so an auditor re-verifies every answer
offline: the party's signature on the "ready" naming the key, the key's signature on the bundle holding the
answer (:func:`mpdp.parties.rounds.transcript_check.verify_transcript`). The signature covers the session and the
worker, so a bundle does not verify on another worker's topic or in another session. A bundle delivered twice
(a replay) carries the same answers: each is the party's recorded answer again (ignored in its open round,
``late`` after it), as the same answer sent twice on a party topic.

Layout (version 2, little-endian)::

    offset  size  field
    0       1     format: 0x04 (signed answer bundle, version 2); a party answer starts with 0x02, JSON with ``{``
    1       4     uint32 n, the number of entries (1 .. MAX_ENTRIES)
    5       ...   n entries: uint32 party id, uint32 length L (1 .. MAX_ENTRY_BYTES), then L bytes
    end     64    Ed25519 signature of DOMAIN + uint8 len(session) + session (ASCII) + uint32 worker + bytes [0, end)

The length must be exactly what the entries and the signature take, so one bundle has one encoding.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

from mpdp.broker.signing import PrivateKey, PublicKey, sign_bytes, verify_bytes
from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = ["DOMAIN", "FORMAT", "MAX_ENTRIES", "MAX_ENTRY_BYTES", "decode_bundle", "encode_bundle"]

#: The first byte of a signed answer bundle, version 2.
FORMAT = 0x04
#: What the worker's signature covers before the session, the worker and the bundle's bytes.
DOMAIN = b"mpdp/answer-bundle/v2\n"
#: Entries one bundle may carry at most.
MAX_ENTRIES = 10_000
#: Bytes one entry may carry at most (a party answer of 10^6 repetitions is 250 kB).
MAX_ENTRY_BYTES = 1 << 20
SIGNATURE_SIZE = 64
_COUNT = struct.Struct("<BI")
_ENTRY = struct.Struct("<II")
_WORKER = struct.Struct("<I")


def _context(session: str, worker: int) -> bytes:
    """What the signature covers before the bundle: the domain, the session and the worker."""
    name = session.encode("ascii")
    return DOMAIN + bytes((len(name),)) + name + _WORKER.pack(worker)


def encode_bundle(entries: Sequence[tuple[int, bytes]], key: PrivateKey, *, session: str, worker: int) -> bytes:
    """The bundle of ``entries``, (party id, the party's message bytes) pairs, in their order, signed with the
    worker's bundle ``key`` for ``session`` and ``worker``.

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
    body = b"".join(parts)
    return body + sign_bytes(_context(session, worker) + body, key)


def _schema(detail: str) -> ProtocolViolation:
    return ProtocolViolation("schema", f"answer bundle: {detail}")


def decode_bundle(payload: bytes, key: PublicKey, *, session: str, worker: int) -> list[tuple[int, bytes]]:
    """The (party id, message bytes) entries of a bundle of ``worker`` in ``session``, in order, once its
    signature verifies under the worker's bundle ``key`` (the entries' own messages are not checked here).

    Raises:
        ProtocolViolation: ``"schema"``, not a bundle of this layout (names the first fault); ``"signature"``,
            the signature does not verify (another key, another session or worker, a changed byte).
    """
    size = len(payload) - SIGNATURE_SIZE
    if size < _COUNT.size or payload[0] != FORMAT:
        raise _schema(f"the first byte must be {FORMAT:#04x}, then a uint32 count, entries and a signature")
    _, count = _COUNT.unpack_from(payload)
    if not 1 <= count <= MAX_ENTRIES:
        raise _schema(f"{count} entries, allowed 1..{MAX_ENTRIES}")
    entries, at = [], _COUNT.size
    for _ in range(count):
        if at + _ENTRY.size > size:
            raise _schema(f"{size} bytes before the signature, too short for {count} entries")
        party, length = _ENTRY.unpack_from(payload, at)
        at += _ENTRY.size
        if not 1 <= length <= MAX_ENTRY_BYTES or at + length > size:
            raise _schema(f"entry of party {party}: {length} bytes")
        entries.append((party, payload[at:at + length]))
        at += length
    if at != size:
        raise _schema(f"{size - at} bytes between the last entry and the signature")
    if not verify_bytes(_context(session, worker) + payload[:size], payload[size:], key):
        raise ProtocolViolation("signature", f"answer bundle of worker {worker}: not signed by its bundle key")
    return entries
