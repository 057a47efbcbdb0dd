"""The binary wire format of a party's answer (version 2): the hot message, parsed with :mod:`struct`.

A party answers every round with one message; the observer reads k of them per round, so this one has a
fixed little-endian layout instead of JSON, and the observer reads it without pydantic. The first byte
tells the forms apart: JSON messages start with ``{`` (0x7B), this one with the format byte 0x02.

========  ============  ======  ========================================================================
offset    size (bytes)  type    field
========  ============  ======  ========================================================================
0         1             uint8   format: 0x02 (party answer, version 2)
1         1             uint8   L = length of the session id (1..64)
2         L             ASCII   session id (``SESSION_PATTERN`` of :mod:`mpdp.broker.topics`)
2+L       4             uint32  round (0 .. 2**31 - 1)
6+L       4             uint32  party (0 .. 2**31 - 1)
10+L      4             uint32  repetitions (1 .. :data:`MAX_REPETITIONS`)
14+L      1             uint8   kind: 0 = symbols, 1 = abstain
15+L      1             uint8   R = length of the abstention reason (0 for symbols, 1..64 to abstain)
16+L      R             ASCII   reason (``[a-z0-9][a-z0-9-]*``), e.g. ``budget-exhausted``
16+L+R    16            bytes   nonce (fresh random per message)
32+L+R    S             bytes   symbols, 2 bits each, first in the high bits, padding bits zero
                                (:func:`mpdp.broker.packing.pack_bytes`); S = ceil(repetitions / 4)
                                for symbols, 0 for an abstention
32+L+R+S  64            bytes   Ed25519 signature of :data:`DOMAIN` + bytes [0, 32+L+R+S)
========  ============  ======  ========================================================================

The unsigned form (format byte :data:`UNSIGNED_FORMAT`, 0x05) is the same layout without the last 64 bytes: the
entry of an answer bundle (:mod:`mpdp.broker.bundle`), authenticated by the bundle's signature under the worker
key the party endorsed in its signed "ready", never valid on its own (the observer refuses it on a party topic:
``signature``). A simulated party whose worker bundles its answers sends this form, which saves one Ed25519
signature per answer: ~29% of a worker's busy samples at 1000 parties x 20 rounds (py-spy, 2026-12-03).

A message of 200 repetitions in session ``bench-00000000`` is 160 bytes (its JSON form: 339). Every field
is checked (:func:`decode`): the length must be exactly the layout's, so one answer has exactly one
encoding. The signature domain differs from the JSON form's (``mpdp/party-message/v1``), so a signature of
one form never verifies as the other. :class:`mpdp.broker.messages.PartyMessage` (pydantic) is the typed,
validating object users build; its ``to_wire``/``from_wire`` use this module. A party answering a round
builds the bytes directly with :func:`sign_answer` (no pydantic model: 76 against 201 us per answer of one
repetition, ``benchmarks/bench_wire.py``) through the same :func:`encode_body`, so both paths give the same
bytes for the same fields and nonce.
"""

from __future__ import annotations

import os
import re
import struct
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.packing import pack_bytes, packed_length, unpack_bytes
from mpdp.broker.signing import PrivateKey, sign_bytes
from mpdp.broker.topics import SESSION_PATTERN
from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = ["DOMAIN", "FORMAT", "MAX_REPETITIONS", "UNSIGNED_FORMAT", "WireAnswer", "decode", "encode_body",
           "sign_answer"]

#: The first byte of a binary party answer (JSON starts with ``{``).
FORMAT = 0x02
#: The first byte of a binary party answer without its signature (an answer bundle's entry only).
UNSIGNED_FORMAT = 0x05
#: What the signature covers before the message's bytes.
DOMAIN = b"mpdp/party-message/v2\n"
#: Largest number of repetitions one message may carry (250 kB of packed symbols).
MAX_REPETITIONS = 1_000_000
#: Largest index (round, party): what JSON messages allow too.
MAX_INDEX = 2**31 - 1
NONCE_SIZE = 16
SIGNATURE_SIZE = 64
_FIELDS = struct.Struct("<IIIBB")  # round, party, repetitions, kind, reason length
_SESSION = re.compile(SESSION_PATTERN.encode("ascii"))
_REASON = re.compile(rb"^[a-z0-9][a-z0-9-]{0,63}$")
_KINDS: tuple[Literal["symbols", "abstain"], ...] = ("symbols", "abstain")


@dataclass(frozen=True, slots=True, eq=False)
class WireAnswer:
    """A decoded party answer (not yet verified): the fields, and what its signature covers.

    Attributes:
        session, round, party, repetitions, kind, reason: as :class:`mpdp.broker.messages.PartyMessage`
            (``reason`` None for symbols).
        nonce: 16 bytes. packed: the packed symbols (empty for an abstention).
        signature: the 64 raw signature bytes; b"" for the unsigned form (:data:`UNSIGNED_FORMAT`).
        signed: the bytes the signature covers (domain included), or would cover for the unsigned form.
    """

    session: str
    round: int
    party: int
    repetitions: int
    kind: Literal["symbols", "abstain"]
    reason: str | None
    nonce: bytes
    packed: bytes
    signature: bytes
    signed: bytes

    def signed_bytes(self) -> bytes:
        """What the signature covers (see :mod:`mpdp.broker.signing`)."""
        return self.signed

    def signature_bytes(self) -> bytes:
        """The raw 64-byte signature."""
        return self.signature

    def symbol_array(self) -> NDArray[np.uint8]:
        """The symbols as uint8 of shape (repetitions,); empty (0,) for an abstention."""
        if self.kind == "abstain":
            return np.zeros(0, dtype=np.uint8)
        return unpack_bytes(self.packed, self.repetitions)

    def to_wire(self) -> bytes:
        """The bytes to publish: the layout above, signature last (what :func:`decode` read)."""
        return self.signed[len(DOMAIN):] + self.signature


def encode_body(session: str, round: int, party: int, repetitions: int, reason: str | None, nonce: bytes,
                packed: bytes, *, form: int = FORMAT) -> bytes:
    """The bytes of an answer before its signature (the layout above; ``reason`` None = symbols; ``form``:
    :data:`FORMAT`, or :data:`UNSIGNED_FORMAT` for a bundle's entry). The caller validated the fields
    (:class:`mpdp.broker.messages.PartyMessage` does)."""
    name = session.encode("ascii")
    text = b"" if reason is None else reason.encode("ascii")
    return b"".join((bytes((form, len(name))), name,
                     _FIELDS.pack(round, party, repetitions, 0 if reason is None else 1, len(text)), text,
                     nonce, packed))


def sign_answer(key: bytes | PrivateKey | None, *, session: str, round: int, party: int, repetitions: int,
                symbols: NDArray[np.uint8] | None = None, reason: str | None = None,
                nonce: bytes | None = None) -> WireAnswer:
    """A party's signed answer built straight into the binary layout (no pydantic model): the same bytes as
    ``PartyMessage.signed(...).to_wire()`` for the same fields and nonce (tests/broker/test_wire.py proves it).

    Args:
        key: the party's Ed25519 private key (raw 32 bytes, or loaded once: :func:`mpdp.broker.signing.load_private_key`);
            None: the unsigned form (:data:`UNSIGNED_FORMAT`), for a worker's signed answer bundle only.
        session, round, party, repetitions: as :class:`mpdp.broker.messages.PartyMessage`; the caller
            took them from a validated announcement and its own spec (they are not checked again here).
        symbols: uint8 (repetitions,) in 0..3, or None with ``reason`` (an abstention).
        nonce: 16 bytes; None = fresh from the OS CSPRNG (:class:`_Nonces`; tests pass one to compare encodings).

    Returns:
        The answer as :func:`decode` would read it (``to_wire()`` gives the bytes to publish).

    Raises:
        ParameterError: both or neither of ``symbols`` and ``reason``.
        ProtocolViolation: ``"symbols"``, symbols not 1-D or outside 0..3 (:func:`mpdp.broker.packing.pack_bytes`).
        struct.error: round, party or repetitions outside uint32.
    """
    if (symbols is None) == (reason is None):
        raise ParameterError("reason", reason, "a reason to abstain (symbols None), or symbols and no reason")
    packed = b"" if symbols is None else pack_bytes(symbols)
    fresh = _nonces.take() if nonce is None else nonce
    signed = DOMAIN + encode_body(session, round, party, repetitions, reason, fresh, packed,
                                  form=FORMAT if key is not None else UNSIGNED_FORMAT)
    return WireAnswer(session, round, party, repetitions, "symbols" if symbols is not None else "abstain",
                      reason, fresh, packed, b"" if key is None else sign_bytes(signed, key), signed)


class _Nonces:
    """Fresh nonces from the OS CSPRNG (``os.urandom``), read :data:`_NONCE_BATCH` at a time: one system call
    per 256 answers instead of one per answer. Each nonce is handed out once; a forked child starts with an
    empty buffer (it never reuses its parent's)."""

    def __init__(self) -> None:
        self._buffer, self._at = b"", 0
        os.register_at_fork(after_in_child=self._clear)

    def _clear(self) -> None:
        self._buffer, self._at = b"", 0

    def take(self) -> bytes:
        """The next :data:`NONCE_SIZE` unused random bytes."""
        if self._at + NONCE_SIZE > len(self._buffer):
            self._buffer, self._at = os.urandom(_NONCE_BATCH * NONCE_SIZE), 0
        nonce = self._buffer[self._at:self._at + NONCE_SIZE]
        self._at += NONCE_SIZE
        return nonce


_NONCE_BATCH = 256
_nonces = _Nonces()


def _schema(detail: str) -> ProtocolViolation:
    return ProtocolViolation("schema", f"binary party answer: {detail}")


def decode(payload: bytes) -> WireAnswer:
    """Parse and check a binary party answer, signed (:data:`FORMAT`) or not (:data:`UNSIGNED_FORMAT`: its
    ``signature`` is b""): every field; the signature is the caller's check.

    Raises:
        ProtocolViolation: ``"schema"``, naming the first field out of the layout.
    """
    size = len(payload)
    if size < 2 or payload[0] not in (FORMAT, UNSIGNED_FORMAT):
        raise _schema(f"the first byte must be {FORMAT:#04x} (signed) or {UNSIGNED_FORMAT:#04x} (unsigned)")
    tail = SIGNATURE_SIZE if payload[0] == FORMAT else 0
    start = 2 + payload[1]
    session = payload[2:start]
    if not _SESSION.fullmatch(session):
        raise _schema("session id")
    if size < start + _FIELDS.size:
        raise _schema(f"{size} bytes, too short")
    round, party, repetitions, kind, reason_length = _FIELDS.unpack_from(payload, start)
    if round > MAX_INDEX or party > MAX_INDEX:
        raise _schema(f"round {round} or party {party} above {MAX_INDEX}")
    if not 1 <= repetitions <= MAX_REPETITIONS:
        raise _schema(f"repetitions {repetitions} outside 1..{MAX_REPETITIONS}")
    if kind > 1 or (kind == 1) != (reason_length > 0):
        raise _schema(f"kind {kind} with a reason of {reason_length} bytes (symbols: none; abstain: one)")
    at = start + _FIELDS.size + reason_length
    reason = payload[at - reason_length:at]
    if kind and not _REASON.fullmatch(reason):
        raise _schema("reason")
    symbols_at = at + NONCE_SIZE
    end = symbols_at + (0 if kind else packed_length(repetitions))
    if size != end + tail:
        raise _schema(f"{size} bytes, the layout needs {end + tail}")
    packed = payload[symbols_at:end]
    if not kind and repetitions % 4 and packed[-1] & ((1 << 2 * (4 - repetitions % 4)) - 1):
        raise _schema("non-zero padding bits")
    return WireAnswer(session.decode("ascii"), round, party, repetitions, _KINDS[kind],
                      reason.decode("ascii") if kind else None, payload[at:symbols_at], packed,
                      payload[end:], DOMAIN + payload[:end])
