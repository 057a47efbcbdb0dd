"""Wire messages of the curator protocol (the central model: a trusted curator, 001 §I).

* :class:`CuratorAnnouncement` — the curator opens round ``round`` and publishes the fresh X25519 public
  key of that round (``kind="round"``), or ends the session (``kind="end"``); signed by the curator's
  Ed25519 key, which the runner hands to every party, so a stranger cannot collect bits with its own key.
* :class:`SealedBallot` — a party's bit encrypted to the round's curator key
  (:mod:`mpdp.broker.sealed`: ephemeral-static X25519, HKDF-SHA256, ChaCha20-Poly1305), or a public
  abstention; signed by the party's Ed25519 key. The associated data is the header (session, round,
  party, repetitions, curator key), the HKDF context the slot (session, round, party).
* :class:`CuratorRelease` — the curator's only output for a round: ``repetitions`` independent draws of
  the optimal central mechanism (0/1, packed as symbols). The count never leaves the curator.

All three are pydantic v2, ``extra="forbid"``, frozen, strict, JSON on the wire, signed over
:func:`mpdp.broker.signing.canonical_bytes`; the announcement and the release carry the freshness fields
(:class:`mpdp.broker.messages.Fresh`: a monotonic sequence and an expiry).
"""

from __future__ import annotations

import base64
import binascii
import json
from functools import partial
from typing import Annotated, Any, ClassVar, Literal, Self

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from mpdp.broker.control import DEFAULT_LIFETIME, stamp
from mpdp.broker.messages import (
    MAX_REPETITIONS,
    AnnouncementKind,
    Answer,
    Fresh,
    Index,
    RoundAnnouncement,
    RoundSigned,
    as_value_error,
    new_nonce,
)
from mpdp.broker.packing import pack_symbols, unpack_symbols
from mpdp.broker.sealed import KEY_BYTES, TAG_BYTES, open_sealed, seal
from mpdp.broker.signing import PLACEHOLDER_SIGNATURE, PrivateKey, sign_message
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["CuratorAnnouncement", "CuratorRelease", "SealedBallot", "decode_key", "encode_key"]

Base64 = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]*={0,2}$", max_length=64)]
_BALLOT_BYTES = 1 + TAG_BYTES  # one plaintext byte (the bit) and the Poly1305 tag


def encode_key(raw: bytes) -> str:
    """Base64 (RFC 4648, padded) of raw key or ciphertext bytes."""
    return base64.b64encode(raw).decode("ascii")


def decode_key(text: str, size: int | None, what: str) -> bytes:
    """Inverse of :func:`encode_key`, checking the length (``size`` None: any length).

    Raises:
        ProtocolViolation: ``"schema"`` for text that is not canonical base64 of ``size`` bytes.
    """
    try:
        raw = base64.b64decode(text.encode("ascii"), validate=True)
    except (binascii.Error, UnicodeEncodeError, ValueError):
        raise ProtocolViolation("schema", f"{what}: not base64") from None
    if (size is not None and len(raw) != size) or encode_key(raw) != text:
        raise ProtocolViolation("schema", f"{what}: need canonical base64 of {size} bytes")
    return raw


class CuratorAnnouncement(RoundAnnouncement):
    """The curator opens a round with its fresh X25519 public key, or ends the session.

    Fields:
        kind: ``"round"`` (``curator_key`` is the base64 X25519 public key of this round) or ``"end"``
            (``round`` = the number of rounds, ``curator_key`` = "").
        name: the round's name (a bill), up to 200 characters.
        repetitions: independent releases the curator will publish (a simulation device).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/curator-announcement/v1"

    curator_key: Base64 = ""

    @model_validator(mode="after")
    def _key_matches_kind(self) -> Self:
        if self.kind == "round":
            as_value_error(decode_key, self.curator_key, KEY_BYTES, "curator_key")
        elif self.curator_key:
            raise ValueError("an end announcement carries no curator key")
        return self

    @property
    def key_bytes(self) -> bytes:
        """The raw 32-byte X25519 public key of the round."""
        return decode_key(self.curator_key, KEY_BYTES, "curator_key")

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, kind: AnnouncementKind,
               round: int, repetitions: int, name: str = "", curator_key: bytes = b"",
               lifetime: float = DEFAULT_LIFETIME) -> CuratorAnnouncement:
        """Build and sign an announcement (``curator_key``: raw X25519 public key, for ``round``), valid
        for ``lifetime`` seconds."""
        draft = cls(session=session, kind=kind, round=int(round), name=name, repetitions=int(repetitions),
                    curator_key=encode_key(curator_key) if curator_key else "", nonce=new_nonce(),
                    signature=PLACEHOLDER_SIGNATURE, **stamp(lifetime))
        return sign_message(draft, private_key)


class SealedBallot(Answer):
    """One party's bit for one round, sealed to the curator (or a public abstention).

    Fields:
        kind: ``"sealed"`` (``ephemeral_key`` and ``ciphertext`` set) or ``"abstain"`` (``reason``).
        curator_key: the X25519 key it was sealed to (base64; part of the associated data).
        ephemeral_key: base64 of the sender's one-time X25519 public key (32 bytes).
        ciphertext: base64 of ChaCha20-Poly1305(bit byte) with its tag (17 bytes: the same length
            for 0 and 1).
        nonce, signature: as :class:`mpdp.broker.messages.PartyMessage` (the party's Ed25519 key).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/sealed-ballot/v1"

    kind: Literal["sealed", "abstain"]
    curator_key: Base64
    ephemeral_key: Base64 = ""
    ciphertext: Base64 = ""

    @model_validator(mode="after")
    def _kind_matches_payload(self) -> Self:
        as_value_error(decode_key, self.curator_key, KEY_BYTES, "curator_key")
        if self.kind == "abstain":
            if self.reason is None or self.ephemeral_key or self.ciphertext:
                raise ValueError("an abstention has a reason and no ciphertext")
        else:
            if self.reason is not None:
                raise ValueError("a sealed ballot has no reason")
            as_value_error(decode_key, self.ephemeral_key, KEY_BYTES, "ephemeral_key")
            as_value_error(decode_key, self.ciphertext, _BALLOT_BYTES, "ciphertext")
        return self

    @property
    def key_bytes(self) -> bytes:
        """The raw 32-byte X25519 key the ballot was sealed to."""
        return decode_key(self.curator_key, KEY_BYTES, "curator_key")

    @staticmethod
    def context(session: str, round: int, party: int) -> bytes:
        """HKDF info of a slot: ``mpdp/sealed-ballot/v1/{session}/{round}/{party}``."""
        return f"{SealedBallot.SIGNING_DOMAIN}/{session}/{int(round)}/{int(party)}".encode("ascii")

    @staticmethod
    def associated_data(session: str, round: int, party: int, repetitions: int, curator_key: str) -> bytes:
        """The AEAD associated data: sorted compact JSON of the header fields (curator key in base64)."""
        fields = {"session": session, "round": int(round), "party": int(party),
                  "repetitions": int(repetitions), "curator_key": curator_key}
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode("ascii")

    def header(self) -> bytes:
        """This ballot's associated data (:meth:`associated_data`)."""
        return self.associated_data(self.session, self.round, self.party, self.repetitions, self.curator_key)

    def open(self, curator_private: bytes) -> int:
        """The party's bit, decrypted with the round's X25519 private key (curator only).

        Raises:
            ProtocolViolation: ``"decrypt"`` (authentication failed: tampered or not for this key),
                ``"plaintext"`` (authentic but not one byte 0 or 1), ``"schema"`` for an abstention.
        """
        if self.kind != "sealed":
            raise ProtocolViolation("schema", "an abstention holds no ballot")
        plain = open_sealed(
            curator_private, decode_key(self.ephemeral_key, KEY_BYTES, "ephemeral_key"),
            decode_key(self.ciphertext, _BALLOT_BYTES, "ciphertext"),
            context=self.context(self.session, self.round, self.party), associated_data=self.header(),
        )
        if plain not in (b"\x00", b"\x01"):
            raise ProtocolViolation("plaintext", f"party {self.party}: not a bit")
        return plain[0]

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, curator_key: bytes, session: str, round: int,
               party: int, repetitions: int, bit: int | None = None, reason: str | None = None) -> SealedBallot:
        """Seal ``bit`` (0 or 1) to ``curator_key`` (raw X25519) and sign; or abstain with ``reason``.

        Raises:
            ProtocolViolation: a bit other than 0/1, or a malformed curator key.
        """
        ballot_of = partial(cls, session=session, round=int(round), party=int(party), repetitions=int(repetitions),
                            curator_key=encode_key(curator_key), nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE)
        if bit is None:
            return sign_message(ballot_of(kind="abstain", reason=reason), private_key)
        if bit not in (0, 1):
            raise ProtocolViolation("plaintext", f"bit {bit!r}: need 0 or 1")
        ad = cls.associated_data(session, round, party, repetitions, encode_key(curator_key))
        ephemeral, ciphertext = seal(curator_key, bytes([bit]), context=cls.context(session, round, party),
                                     associated_data=ad)
        ballot = ballot_of(kind="sealed", ephemeral_key=encode_key(ephemeral), ciphertext=encode_key(ciphertext))
        return sign_message(ballot, private_key)


class CuratorRelease(RoundSigned, Fresh):
    """The curator's published output for one round: what everyone (and the transcript) sees.

    Fields:
        voters: n, the number of sealed ballots the release is computed from (public anyway: the
            ballots are on the wire).
        outputs: :func:`mpdp.broker.packing.pack_symbols` of ``repetitions`` outputs, each 0 or 1.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/curator-release/v1"

    voters: Index
    outputs: Annotated[str, Field(max_length=4 * MAX_REPETITIONS)]

    @model_validator(mode="after")
    def _outputs_are_bits(self) -> Self:
        values = as_value_error(unpack_symbols, self.outputs, self.repetitions)
        if values.size and values.max() > 1:
            raise ValueError("outputs are 0 or 1")
        return self

    def output_array(self) -> NDArray[np.int64]:
        """int64 (repetitions,) of 0/1 outputs."""
        return unpack_symbols(self.outputs, self.repetitions).astype(np.int64)

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int, voters: int,
               outputs: NDArray[np.integer[Any]], lifetime: float = DEFAULT_LIFETIME) -> CuratorRelease:
        """Build and sign a release of ``outputs`` (0/1, shape (repetitions,)), valid for ``lifetime`` seconds."""
        values = np.asarray(outputs, dtype=np.uint8)
        draft = cls(session=session, round=int(round), voters=int(voters), repetitions=int(values.size),
                    outputs=pack_symbols(values), nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE,
                    **stamp(lifetime))
        return sign_message(draft, private_key)
