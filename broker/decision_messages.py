"""Wire messages of the parties' own decisions (pydantic v2, ``extra="forbid"``, frozen, signed).

* :class:`TranscriptMessage` — after a round closes the observer publishes what it recorded: the
  participants' ids and their symbols (``repetitions`` x n, packed 2 bits a symbol, row-major),
  signed with the coordinator key, in ``parts`` messages of consecutive rows
  (:meth:`TranscriptMessage.signed_parts`: each at most :data:`TRANSCRIPT_PART_SYMBOLS` symbols, about
  350 kB of JSON with 10^4 participants, under every broker's default payload limit — NATS 1 MB,
  EMQX 1 MB, VerneMQ/HiveMQ larger). Each participating party verifies every part before deciding.
* :class:`DecisionMessage` — party i's decisions f_i(tau, x_i) for each repetition of a round
  (002 eqs. (2), (4)), packed as big-endian uint16, signed with the party's key. The party's bit
  is in no field.
"""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any, ClassVar, Self

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from mpdp.broker.control import DEFAULT_LIFETIME, stamp
from mpdp.broker.messages import (
    MAX_REPETITIONS,
    Fresh,
    Index,
    RoundSigned,
    as_value_error,
    new_nonce,
)
from mpdp.broker.packing import pack_symbols, unpack_symbols
from mpdp.broker.signing import PLACEHOLDER_SIGNATURE, PrivateKey, sign_message
from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = [
    "MAX_PART_SYMBOLS", "MAX_TRANSCRIPT_SYMBOLS", "TRANSCRIPT_PART_SYMBOLS", "DecisionMessage", "TranscriptMessage",
    "check_transcript_size", "pack_decisions", "part_rows", "unpack_decisions",
]

#: Largest transcript of a round (repetitions x participants symbols, all parts): 128 MiB as the uint8 matrix a
#: receiving worker assembles (it decides on an int64 copy: ~1 GiB); 10^5 participants x 1,342 repetitions,
#: 10^6 x 134. It was 2^24, the largest one message holds, which refused 10^5 parties at the default 200
#: repetitions after the round had run although the transcript goes in parts.
MAX_TRANSCRIPT_SYMBOLS = 1 << 27
#: Largest part (one message): 4 MiB packed, 5.6 MB of base64.
MAX_PART_SYMBOLS = 1 << 24
#: Symbols of one transcript part at most (unless one row is longer): 256 KiB packed, 342 kB base64.
TRANSCRIPT_PART_SYMBOLS = 1 << 20


def check_transcript_size(participants: int, repetitions: int) -> None:
    """Refuse a transcript of ``participants`` x ``repetitions`` symbols larger than :data:`MAX_TRANSCRIPT_SYMBOLS`.

    Raises:
        ParameterError: naming the size and the repetitions (or participants) that would fit.
    """
    if participants * repetitions > MAX_TRANSCRIPT_SYMBOLS:
        fits = MAX_TRANSCRIPT_SYMBOLS // max(1, participants)
        raise ParameterError(
            "repetitions", repetitions, "", message=(
                f"a round's transcript of {participants:,} participants x {repetitions:,} repetitions = "
                f"{participants * repetitions:,} symbols is over the {MAX_TRANSCRIPT_SYMBOLS:,} one transcript may "
                "hold: " + (f"use {fits:,} repetitions or fewer, or fewer parties" if fits else "use fewer parties")
                + " (or no party decisions: only they need the transcript published)"))


def part_rows(repetitions: int, part: int, parts: int) -> tuple[int, int]:
    """The rows ``[first, stop)`` of part ``part`` (0-based) of ``parts``: ``ceil(repetitions / parts)``
    rows each, the last one what is left.

    Raises:
        ValueError: not ``0 <= part < parts <= repetitions`` (every part has at least one row).
    """
    if not 0 <= part < parts <= repetitions:
        raise ValueError(f"part {part} of {parts} for {repetitions} repetitions: need 0 <= part < parts <= repetitions")
    size = -(-repetitions // parts)
    if (parts - 1) * size >= repetitions:
        raise ValueError(f"{parts} parts of {size} rows leave the last of {repetitions} repetitions empty")
    return part * size, min(repetitions, (part + 1) * size)
_U16 = np.dtype(">u2")


def pack_decisions(decisions: NDArray[np.integer[Any]]) -> str:
    """Pack decisions (integers in 0..65535, shape (n,)) as base64 of big-endian uint16.

    Raises:
        ProtocolViolation: ``"decisions"`` for a value outside 0..65535 or a non 1-D array.
    """
    values = np.asarray(decisions)
    if values.ndim != 1 or (values.size and (values.min() < 0 or values.max() > 0xFFFF)):
        raise ProtocolViolation("decisions", "need a 1-D array of decisions in 0..65535")
    return base64.b64encode(values.astype(_U16).tobytes()).decode("ascii")


def unpack_decisions(text: str, repetitions: int) -> NDArray[np.int64]:
    """Inverse of :func:`pack_decisions`: int64 (repetitions,).

    Raises:
        ProtocolViolation: ``"decisions"`` for text that is not canonical base64 of the right length.
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ProtocolViolation("decisions", "not base64") from None
    if len(raw) != 2 * repetitions or base64.b64encode(raw).decode("ascii") != text:
        raise ProtocolViolation("decisions", f"{len(raw)} bytes for {repetitions} repetitions (need {2 * repetitions})")
    return np.frombuffer(raw, dtype=_U16).astype(np.int64)


class TranscriptMessage(RoundSigned, Fresh):
    """The recorded transcript of one closed round, signed by the coordinator.

    Fields:
        session, round: where it belongs. repetitions: rows of the whole transcript (all parts).
        participants: the ids of the parties whose symbols were recorded, ascending.
        part, parts: this message is part ``part`` (0-based) of ``parts``; it holds the rows
            :func:`part_rows` ``(repetitions, part, parts)``.
        symbols: :func:`mpdp.broker.packing.pack_symbols` of those rows of the uint8 (repetitions, n)
            matrix, row-major.
        sequence, expires_ms: freshness (:class:`mpdp.broker.messages.Fresh`).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/transcript/v1"

    participants: tuple[Index, ...]
    part: Annotated[int, Field(ge=0)] = 0
    parts: Annotated[int, Field(ge=1, le=MAX_REPETITIONS)] = 1
    symbols: Annotated[str, Field(max_length=MAX_PART_SYMBOLS // 3 + 4)]

    @model_validator(mode="after")
    def _well_formed(self) -> Self:
        if list(self.participants) != sorted(set(self.participants)):
            raise ValueError("participants must be ascending and distinct")
        check_transcript_size(len(self.participants), self.repetitions)
        part_rows(self.repetitions, self.part, self.parts)
        as_value_error(self.symbol_matrix)
        return self

    @property
    def rows(self) -> tuple[int, int]:
        """The transcript rows ``[first, stop)`` this part holds."""
        return part_rows(self.repetitions, self.part, self.parts)

    def symbol_matrix(self) -> NDArray[np.uint8]:
        """This part's rows of the transcript: uint8 (stop - first, n), column j = participant
        ``participants[j]`` (the whole transcript when ``parts == 1``)."""
        n = len(self.participants)
        first, stop = self.rows
        return unpack_symbols(self.symbols, (stop - first) * n).reshape(stop - first, n)

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int,
               participants: NDArray[np.integer[Any]], symbols: NDArray[np.uint8], part: int = 0,
               parts: int = 1, lifetime: float = DEFAULT_LIFETIME) -> TranscriptMessage:
        """Build and sign part ``part`` of ``parts``: ``symbols`` is the whole transcript, uint8
        (repetitions, n) in the order of ``participants`` (n,); the message holds its rows :func:`part_rows`
        and is valid for ``lifetime`` seconds.

        Raises:
            ValueError: a part outside ``0..parts-1``, more parts than rows; pydantic.ValidationError
                (a ValueError): a field out of its domain.
        """
        matrix = np.asarray(symbols)
        first, stop = part_rows(int(matrix.shape[0]), part, parts)
        draft = cls(session=session, round=int(round), repetitions=int(matrix.shape[0]),
                    participants=tuple(int(p) for p in participants), part=part, parts=parts,
                    symbols=pack_symbols(matrix[first:stop].ravel()), nonce=new_nonce(),
                    signature=PLACEHOLDER_SIGNATURE, **stamp(lifetime))
        return sign_message(draft, private_key)

    @classmethod
    def signed_parts(cls, private_key: bytes | PrivateKey, *, session: str, round: int,
                     participants: NDArray[np.integer[Any]], symbols: NDArray[np.uint8],
                     max_symbols: int = TRANSCRIPT_PART_SYMBOLS,
                     lifetime: float = DEFAULT_LIFETIME) -> tuple[TranscriptMessage, ...]:
        """The whole transcript as signed parts of at most ``max_symbols`` symbols each, or one row
        where a row is longer: with ``r = max(1, max_symbols // n)`` rows a part at most, ``ceil(repetitions
        / r)`` parts (then ``(parts - 1) * r < repetitions``: no part is empty).

        Raises:
            pydantic.ValidationError: a field out of its domain. ValueError: ``max_symbols < 1``.
        """
        if max_symbols < 1:
            raise ValueError(f"max_symbols={max_symbols}: need at least 1")
        matrix = np.asarray(symbols)
        repetitions = int(matrix.shape[0])
        most_rows = max(1, max_symbols // max(1, int(matrix.shape[1])))
        parts = max(1, -(-repetitions // most_rows))
        return tuple(cls.signed(private_key, session=session, round=round, participants=participants,
                                symbols=matrix, part=p, parts=parts, lifetime=lifetime) for p in range(parts))


class DecisionMessage(RoundSigned):
    """Party ``party``'s decision of f for each repetition of round ``round``.

    Fields:
        decisions: :func:`pack_decisions` of the int (repetitions,) decisions.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/party-decision/v1"

    party: Index
    decisions: Annotated[str, Field(max_length=3 * MAX_REPETITIONS)]

    @model_validator(mode="after")
    def _packed(self) -> Self:
        as_value_error(unpack_decisions, self.decisions, self.repetitions)
        return self

    def decision_array(self) -> NDArray[np.int64]:
        """The decisions: int64 (repetitions,)."""
        return unpack_decisions(self.decisions, self.repetitions)

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int, party: int,
               decisions: NDArray[np.integer[Any]]) -> DecisionMessage:
        """Build and sign a decision message (``decisions`` int (repetitions,)).

        Raises:
            pydantic.ValidationError: a field out of its domain. ProtocolViolation: a value > 65535.
        """
        values = np.asarray(decisions)
        draft = cls(session=session, round=int(round), party=int(party), repetitions=int(values.size),
                    decisions=pack_decisions(values), nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE)
        return sign_message(draft, private_key)
