"""Symbols on the wire: 2 bits per symbol (symbols 0..3), 4 per byte, first symbol in the high bits
(:func:`pack_bytes`; the binary party answer carries these bytes), then base64 (RFC 4648, with padding) in
JSON messages (:func:`pack_symbols`). 200 repetitions take 50 bytes, 68 characters."""

from __future__ import annotations

import base64
import binascii
import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ProtocolViolation

__all__ = [
    "any_symbol_at_least",
    "pack_bytes",
    "pack_symbols",
    "packed_length",
    "unpack_bytes",
    "unpack_rows",
    "unpack_symbols",
]

_SHIFTS = np.array([6, 4, 2, 0], dtype=np.uint8)
#: Up to this many uint8 symbols are packed with Python integers (fewer numpy calls than the array path).
_SMALL = 64
#: Four symbols (bytes 0..3 each) -> their packed byte: a party's few symbols packed by one lookup per byte (a
#: generator of shifts cost ~10% of a simulation worker's CPU at one symbol per answer); a byte above 3 is no key.
_QUADS = {bytes((a, b, c, d)): a << 6 | b << 4 | c << 2 | d
          for a in range(4) for b in range(4) for c in range(4) for d in range(4)}


def packed_length(repetitions: int) -> int:
    """Bytes holding ``repetitions`` symbols: ceil(repetitions / 4)."""
    return (repetitions + 3) // 4


def pack_bytes(symbols: NDArray[np.integer[Any]]) -> bytes:
    """Pack uint8 symbols of shape (n,), each in 0..3, into ceil(n / 4) bytes (padding bits zero).

    Raises:
        ProtocolViolation: ``"symbols"`` if the array is not 1-D or holds a value above 3.
    """
    values = np.asarray(symbols)
    if values.dtype == np.uint8 and values.ndim == 1 and values.size <= _SMALL:  # a party's few symbols
        raw = values.tobytes()
        raw += bytes(-len(raw) % 4)  # zero padding symbols
        try:
            return bytes([_QUADS[raw[i:i + 4]] for i in range(0, len(raw), 4)])
        except KeyError:
            raise ProtocolViolation("symbols", "need a 1-D array of symbols in 0..3") from None
    if values.ndim != 1 or (values.size and (values.min() < 0 or values.max() > 3)):
        raise ProtocolViolation("symbols", "need a 1-D array of symbols in 0..3")
    padded = np.zeros(4 * packed_length(values.size), dtype=np.uint8)
    padded[: values.size] = values
    return (padded.reshape(-1, 4) << _SHIFTS).sum(axis=1, dtype=np.uint8).tobytes()


def pack_symbols(symbols: NDArray[np.integer[Any]]) -> str:
    """:func:`pack_bytes` as base64 text.

    Raises:
        ProtocolViolation: ``"symbols"`` if the array is not 1-D or holds a value above 3.
    """
    return base64.b64encode(pack_bytes(symbols)).decode("ascii")


def unpack_bytes(raw: bytes, repetitions: int) -> NDArray[np.uint8]:
    """Inverse of :func:`pack_bytes`: uint8 array of shape (repetitions,), values in 0..3.

    Raises:
        ProtocolViolation: ``"symbols"`` for the wrong length or non-zero padding bits (one symbol
            sequence has exactly one encoding).
    """
    if len(raw) != packed_length(repetitions):
        raise ProtocolViolation(
            "symbols", f"{len(raw)} bytes for {repetitions} repetitions (need {packed_length(repetitions)})"
        )
    values = ((np.frombuffer(raw, dtype=np.uint8)[:, None] >> _SHIFTS) & 3).astype(np.uint8).ravel()
    if values[repetitions:].any():
        raise ProtocolViolation("symbols", "non-zero padding bits")
    return values[:repetitions].copy()


def unpack_rows(rows: Sequence[bytes], repetitions: int) -> NDArray[np.uint8]:
    """Many checked :func:`pack_bytes` outputs of ``repetitions`` symbols each, unpacked at once: uint8
    (len(rows), repetitions), row i the symbols of ``rows[i]`` (the caller checked each length)."""
    size = packed_length(repetitions)
    raw = np.frombuffer(b"".join(rows), dtype=np.uint8).reshape(len(rows), size)
    return ((raw[:, :, None] >> _SHIFTS) & 3).astype(np.uint8).reshape(len(rows), 4 * size)[:, :repetitions]


def any_symbol_at_least(raw: bytes, limit: int) -> bool:
    """Whether packed symbols (padding bits zero) hold a symbol >= ``limit`` (1..4), without unpacking:
    one integer AND over the bytes (the observer's per-message range check)."""
    if limit >= 4:
        return False
    value = int.from_bytes(raw, "little")
    if limit == 3:  # a symbol 3 = both bits of a pair set
        return bool(value & (value >> 1) & _repeated(0x55, len(raw)))
    if limit == 2:  # a symbol 2 or 3 = the high bit of a pair set
        return bool(value & _repeated(0xAA, len(raw)))
    return value != 0


@functools.lru_cache(maxsize=64)
def _repeated(byte: int, size: int) -> int:
    return int.from_bytes(bytes((byte,)) * size, "little")


def unpack_symbols(text: str, repetitions: int) -> NDArray[np.uint8]:
    """Inverse of :func:`pack_symbols`: uint8 array of shape (repetitions,), values in 0..3.

    Raises:
        ProtocolViolation: ``"symbols"`` for text that is not base64, of the wrong length, or with
            non-zero padding bits (one symbol sequence has exactly one encoding).
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ProtocolViolation("symbols", "not base64") from None
    if base64.b64encode(raw).decode("ascii") != text:
        raise ProtocolViolation("symbols", "non-canonical base64")
    return unpack_bytes(raw, repetitions)
