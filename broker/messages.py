"""Wire messages (pydantic v2, ``extra="forbid"``, frozen), JSON on the wire but for the party answer.

* :class:`PartyMessage` — a party's broadcast for one round: its privatized symbols (``repetitions``
  independent releases of the same bit, packed by :mod:`mpdp.broker.packing`) or an abstention with a
  reason (``did-not-vote``, ``budget-exhausted``, ...), a random nonce and an Ed25519 signature by the
  party's key. The raw bit is never a field. Version 2 (what :meth:`PartyMessage.signed` builds) travels in
  the binary layout of :mod:`mpdp.broker.wire` and its signature covers those bytes; version 1 (JSON,
  signature over the canonical JSON, :mod:`mpdp.broker.signing`) is still read, e.g. an answer a party
  recorded before an upgrade. :func:`decode_answer` reads either form without a pydantic model for the
  binary one (the observer's hot path).
* :class:`Announcement` — the coordinator opens round ``round`` (``kind="round"``) or ends the session
  (``kind="end"``); signed by the coordinator's key so a stranger cannot make parties spend privacy.
* :class:`WorkerStatus` — a worker process reports its parties ready (subscribed) or failed; signed by
  the key of every party it lists (one signature each, over the same bytes): a host can speak only for
  the parties whose keys it holds.

Control messages (announcements, status; in other modules transcripts and releases) also carry the
:class:`Fresh` fields (a monotonic ``sequence`` and ``expires_ms``, :mod:`mpdp.broker.control`), covered
by the signature: a receiver refuses an expired or replayed one.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import Callable, Mapping
from collections.abc import Sequence as Seq
from typing import Annotated, ClassVar, Literal, Self, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from mpdp.broker import wire
from mpdp.broker.control import DEFAULT_LIFETIME, ExpiresMs, Sequence, stamp
from mpdp.broker.packing import pack_symbols, unpack_symbols
from mpdp.broker.signing import (
    PLACEHOLDER_SIGNATURE,
    PrivateKey,
    canonical_bytes,
    sign_message,
    signature_of,
    signature_text,
    verify_signature,
)
from mpdp.broker.topics import SESSION_PATTERN
from mpdp.broker.wire import MAX_REPETITIONS, WireAnswer
from mpdp.protocols.errors import ProtocolViolation

__all__ = [
    "MAX_REPETITIONS",
    "Announcement",
    "AnnouncementKind",
    "Answer",
    "FAILED_END",
    "Fresh",
    "PartiesSigned",
    "PartyMessage",
    "RoundAnnouncement",
    "RoundSigned",
    "Wire",
    "WorkerStatus",
    "as_value_error",
    "decode_answer",
    "new_nonce",
]

T = TypeVar("T")
Session = Annotated[str, Field(pattern=SESSION_PATTERN)]
Nonce = Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
Signature = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{86}==$")]
Reason = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9-]{0,63}$")]
#: A raw 32-byte Ed25519 public key in canonical base64 (44 characters), or "" for none.
OptionalKey = Annotated[str, Field(pattern=r"^([A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=)?$")]
#: A raw 32-byte key (an X25519 public key) in canonical base64 (44 characters).
Key32 = Annotated[str, Field(pattern=r"^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$")]
Index = Annotated[int, Field(ge=0, le=2**31 - 1, strict=True)]
Repetitions = Annotated[int, Field(ge=1, le=MAX_REPETITIONS, strict=True)]
#: What an announcement says: a round opens, the session ends, or the coordinator is alive.
AnnouncementKind = Literal["round", "end", "heartbeat"]
#: How the ``name`` of an ``end`` announcement starts when the coordinator failed (then the first cause).
FAILED_END = "FAILED: "


def as_value_error(check: Callable[..., T], *args: object) -> T:
    """Call ``check(*args)`` inside a pydantic validator: a ProtocolViolation becomes the ValueError
    pydantic reports as a validation error (the observer then rejects the message as ``schema``)."""
    try:
        return check(*args)
    except ProtocolViolation as exc:
        raise ValueError(str(exc)) from None


def _schema_violation(exc: ValidationError) -> ProtocolViolation:
    """A pydantic validation error as the ``"schema"`` rejection, naming the first bad field."""
    first = exc.errors()[0]
    return ProtocolViolation("schema", f"{'.'.join(map(str, first['loc']))}: {first['msg']}")


def new_nonce() -> str:
    """128 random bits from the OS CSPRNG, as 32 hex digits."""
    return secrets.token_hex(16)


class Wire(BaseModel):
    """Base of every wire message: unknown fields rejected, frozen, strict types; JSON on the wire."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    #: What the signature covers besides the fields (each signed message names its own).
    SIGNING_DOMAIN: ClassVar[str]

    @classmethod
    def from_wire(cls, payload: bytes | str) -> Self:
        """Parse and validate the message as it came off the wire.

        Raises:
            ProtocolViolation: ``"schema"``, naming the first bad field.
        """
        try:
            return cls.model_validate_json(payload)
        except ValidationError as exc:
            raise _schema_violation(exc) from None

    def to_wire(self) -> bytes:
        """The bytes to publish (JSON)."""
        return self.model_dump_json().encode("utf-8")

    def signed_bytes(self) -> bytes:
        """What the signature covers: :func:`mpdp.broker.signing.canonical_bytes`."""
        return canonical_bytes(self)


class Fresh(Wire):
    """The freshness fields of a control message (:mod:`mpdp.broker.control`): the sender's monotonic
    ``sequence`` and ``expires_ms`` (unix milliseconds), both covered by its signature."""

    sequence: Sequence
    expires_ms: ExpiresMs


class RoundSigned(Wire):
    """The fields of every signed message about one round: who may read it (session), which round,
    how many repetitions, a fresh nonce and the Ed25519 signature of the canonical bytes."""

    version: Literal[1] = 1
    session: Session
    round: Index
    repetitions: Repetitions
    nonce: Nonce
    signature: Signature

    def signature_bytes(self) -> bytes:
        """The raw signature (64 bytes)."""
        return signature_of(self.signature)


class Answer(RoundSigned):
    """The fields every party's answer to a round carries (see :class:`PartyMessage`)."""

    party: Index
    reason: Reason | None = None


class PartyMessage(Answer):
    """One party's broadcast for one round.

    Fields:
        version: 2 (binary on the wire, :mod:`mpdp.broker.wire`; what :meth:`signed` builds) or 1 (JSON).
        session, round, party: where it belongs; ``party`` must match the topic it came on.
        kind: ``"symbols"`` (``symbols`` holds ``repetitions`` symbols) or ``"abstain"`` (``reason``
            says why; ``symbols`` is empty).
        repetitions: the number of independent releases of the party's bit in this round.
        symbols: :func:`mpdp.broker.packing.pack_symbols` of a uint8 array (repetitions,), or "".
        nonce: 32 hex digits, fresh per message.
        signature: base64 Ed25519 signature of :meth:`signed_bytes` (version 2: :data:`mpdp.broker.wire.DOMAIN`
            and the binary bytes before the signature; version 1: the canonical JSON bytes).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/party-message/v1"

    version: Literal[1, 2] = 2  # type: ignore[assignment]  # version 2 is this message's binary form
    kind: Literal["symbols", "abstain"]
    symbols: Annotated[str, Field(max_length=4 * MAX_REPETITIONS)] = ""

    @model_validator(mode="after")
    def _kind_matches_payload(self) -> Self:
        if self.kind == "abstain":
            if self.reason is None or self.symbols:
                raise ValueError("an abstention has a reason and no symbols")
        else:
            if self.reason is not None:
                raise ValueError("a 'symbols' message has no reason")
            as_value_error(unpack_symbols, self.symbols, self.repetitions)
        return self

    def symbol_array(self) -> NDArray[np.uint8]:
        """The symbols as uint8 of shape (repetitions,); empty (0,) for an abstention."""
        if self.kind == "abstain":
            return np.zeros(0, dtype=np.uint8)
        return unpack_symbols(self.symbols, self.repetitions)

    def _body(self) -> bytes:
        return wire.encode_body(self.session, self.round, self.party, self.repetitions, self.reason,
                                bytes.fromhex(self.nonce), base64.b64decode(self.symbols))

    def signed_bytes(self) -> bytes:
        """What the signature covers: version 2, the domain and the binary bytes before the signature;
        version 1, the canonical JSON bytes."""
        return canonical_bytes(self) if self.version == 1 else wire.DOMAIN + self._body()

    def to_wire(self) -> bytes:
        """The bytes to publish: the binary layout of :mod:`mpdp.broker.wire` (version 2) or JSON (version 1)."""
        return super().to_wire() if self.version == 1 else self._body() + self.signature_bytes()

    @classmethod
    def from_wire(cls, payload: bytes | str) -> Self:
        """Parse and validate either form (the first byte tells: 0x02 binary, ``{`` JSON); not verified.

        Raises:
            ProtocolViolation: ``"schema"``, naming the first bad field.
        """
        if isinstance(payload, (bytes, bytearray)) and payload[:1] and payload[0] < 0x09 and payload[0] != wire.FORMAT:
            raise ProtocolViolation("schema", f"binary party answer: format {payload[0]}; this version reads "
                                              f"format {wire.FORMAT} and JSON")
        if isinstance(payload, str) or payload[:1] != bytes((wire.FORMAT,)):
            return super().from_wire(payload)
        answer = wire.decode(payload)
        try:
            return cls(
                version=2, session=answer.session, round=answer.round, party=answer.party, kind=answer.kind,
                reason=answer.reason, repetitions=answer.repetitions,
                symbols=base64.b64encode(answer.packed).decode(), nonce=answer.nonce.hex(),
                signature=base64.b64encode(answer.signature).decode())
        except ValidationError as exc:
            raise _schema_violation(exc) from None

    def view(self) -> WireAnswer:
        """The message as :func:`decode_answer` returns it (what the observer reads)."""
        return WireAnswer(self.session, self.round, self.party, self.repetitions, self.kind, self.reason,
                          bytes.fromhex(self.nonce), base64.b64decode(self.symbols), self.signature_bytes(),
                          self.signed_bytes())

    @classmethod
    def signed(
        cls,
        private_key: bytes | PrivateKey,
        *,
        session: str,
        round: int,
        party: int,
        repetitions: int,
        symbols: NDArray[np.uint8] | None = None,
        reason: str | None = None,
    ) -> PartyMessage:
        """Build and sign a message: with ``symbols`` (uint8, shape (repetitions,)) or with ``reason``.

        Raises:
            pydantic.ValidationError: a field out of its domain.
            ProtocolViolation: symbols outside 0..3.
        """
        draft = cls(
            session=session, round=int(round), party=int(party),
            kind="abstain" if symbols is None else "symbols", reason=reason,
            repetitions=int(repetitions),
            symbols="" if symbols is None else pack_symbols(symbols),
            nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE,
        )
        return sign_message(draft, private_key)


class RoundAnnouncement(RoundSigned, Fresh):
    """What every protocol's coordinator announces: a round opens (``kind="round"``), the session ends
    (``kind="end"``), or the coordinator is alive (``kind="heartbeat"``, every few seconds: a party host
    whose coordinator falls silent leaves after its grace period).

    Fields:
        round: the round index (for ``end``: the number of rounds in the session; for ``heartbeat``: the
            round open or next).
        name: the round's name (a bill, a question), up to 200 characters; for ``end``: "" (the session is
            complete), or :data:`FAILED_END` and why the coordinator failed (the parties leave at once, saying so).
        repetitions: how many independent releases each party sends.
        sequence, expires_ms: freshness (:class:`Fresh`); a round's announcement lives as long as the round.
    """

    kind: AnnouncementKind
    name: Annotated[str, Field(max_length=200)] = ""


class Announcement(RoundAnnouncement):
    """The randomized-response coordinator's announcement (fields as :class:`RoundAnnouncement`)."""

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/announcement/v1"

    @classmethod
    def signed(
        cls, private_key: bytes | PrivateKey, *, session: str, kind: AnnouncementKind,
        round: int, repetitions: int, name: str = "", lifetime: float = DEFAULT_LIFETIME,
    ) -> Announcement:
        """Build and sign an announcement, valid for ``lifetime`` seconds (see :class:`PartyMessage.signed`)."""
        draft = cls(session=session, kind=kind, round=int(round), name=name,
                    repetitions=int(repetitions), nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE,
                    **stamp(lifetime))
        return sign_message(draft, private_key)


class PartiesSigned(Fresh):
    """A control message a host or worker sends for several parties: signed by the key of every party it
    lists (one Ed25519 signature each, over the same bytes), so a sender speaks only for the parties whose
    private keys it holds.

    Fields:
        parties: the sender's parties, ascending, at least one.
        signatures: one Ed25519 signature per listed party, in the order of ``parties``, each by that
            party's key (the roster's) over the same canonical bytes (:mod:`mpdp.broker.signing`); a message
            counts only if every party it lists signed it (:meth:`unsigned`). Each signs the SHA-512
            digest of the canonical bytes (:meth:`digest`): Ed25519 hashes what it signs, and the bytes
            of a host of 5,000 parties (30 kB) hashed twice per signature made signing and checking one
            report quadratic (4.6 s for 5,000 parties here; 64 bytes per signature: linear).
        sequence, expires_ms: freshness (:class:`Fresh`).
    """

    parties: Annotated[tuple[Index, ...], Field(min_length=1)]
    signatures: Annotated[tuple[Signature, ...], Field(min_length=1)]

    @model_validator(mode="after")
    def _ascending(self) -> Self:
        if list(self.parties) != sorted(set(self.parties)):
            raise ValueError("parties must be ascending and distinct")
        if len(self.signatures) != len(self.parties):
            raise ValueError(f"{len(self.signatures)} signatures for {len(self.parties)} parties (one each)")
        return self

    def unsigned(self, public_keys: Seq[bytes] | Mapping[int, bytes], first: int | None = None) -> list[int]:
        """The listed parties whose signature does not verify under their own key ``public_keys[party]``
        (raw Ed25519; a roster's keys by party id, or a mapping party -> key), ascending; [] = a genuine
        report. A party with no key in ``public_keys`` counts as unsigned. ``first``: check only the first
        that many listed parties (None: all)."""
        digest = self.digest()
        keys = public_keys if isinstance(public_keys, Mapping) else dict(enumerate(public_keys))
        return [party for party, signature in zip(self.parties[:first], self.signatures[:first], strict=True)
                if party not in keys or not verify_signature(digest, signature, keys[party])]

    def digest(self) -> bytes:
        """What each listed party signs: the 64-byte SHA-512 digest of :func:`canonical_bytes` (which
        leave the signatures out)."""
        return hashlib.sha512(canonical_bytes(self)).digest()

    @classmethod
    def _sign(cls, private_keys: Seq[bytes | PrivateKey], lifetime: float, **fields: object) -> Self:
        """Build the message from ``fields`` (``parties`` among them), valid for ``lifetime`` seconds, signed
        with ``private_keys[j]`` for ``parties[j]``.

        Raises:
            pydantic.ValidationError: a field out of its domain.
        """
        draft = cls(**fields, signatures=(PLACEHOLDER_SIGNATURE,) * len(private_keys), **stamp(lifetime))  # type: ignore[arg-type]
        digest = draft.digest()
        return draft.model_copy(update={"signatures": tuple(signature_text(digest, key) for key in private_keys)})


class WorkerStatus(PartiesSigned):
    """A worker process's state: ``ready`` (all its parties subscribed) or ``failed`` (``detail``).

    Fields:
        session, worker: whose report. parties, signatures: :class:`PartiesSigned` (a party host holds
            the private keys of its parties, a simulation worker those it runs).
        state, detail: ``ready``, or ``failed`` with the first error (up to 500 characters).
        bundle_key: the base64 raw Ed25519 public key with which the worker signs its answer bundles
            (:mod:`mpdp.broker.bundle`), or "" (it sends none): every listed party signs the report, so each
            endorses this key with its own; the parts of one worker's report name the same key.
        sealing_keys: ``ready`` of mpc parties: per listed party, in the order of ``parties``, the base64 raw
            X25519 public key of its session sealing key (:class:`mpdp.broker.sealed.SessionSealer`), signed
            with the report by that party's own key, so the compute servers derive each party's share keys
            before the first round (:meth:`mpdp.parties.mpc.sealed_shares.ShareOpener.expect`); empty
            otherwise.
        sequence, expires_ms: freshness (:class:`Fresh`).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/worker-status/v1"

    version: Literal[1] = 1
    session: Session
    worker: Index
    state: Literal["ready", "failed"]
    detail: Annotated[str, Field(max_length=500)] = ""
    bundle_key: OptionalKey = ""
    sealing_keys: tuple[Key32, ...] = ()

    @model_validator(mode="after")
    def _one_sealing_key_per_party(self) -> Self:
        if self.sealing_keys and (self.state != "ready" or len(self.sealing_keys) != len(self.parties)):
            raise ValueError(f"{len(self.sealing_keys)} sealing keys in a {self.state!r} report of "
                             f"{len(self.parties)} parties: none, or one per party in a ready report")
        return self

    @classmethod
    def signed(cls, private_keys: Seq[bytes | PrivateKey], *, session: str, worker: int,
               state: Literal["ready", "failed"], parties: tuple[int, ...], detail: str = "",
               lifetime: float = DEFAULT_LIFETIME, bundle_key: bytes = b"",
               sealing_keys: Seq[bytes] = ()) -> WorkerStatus:
        """Build a report valid for ``lifetime`` seconds, signed with ``private_keys[j]`` for ``parties[j]``
        (``bundle_key``: the raw public key of the worker's bundles, or b""; ``sealing_keys``: raw 32-byte
        X25519 public keys, one per party, or none).

        Raises:
            pydantic.ValidationError: a field out of its domain (no parties, not ascending, not one key
                per party, sealing keys not one per party of a ready report or not 32 bytes).
        """
        return cls._sign(private_keys, lifetime, session=session, worker=int(worker), state=state,
                         parties=tuple(int(p) for p in parties), detail=detail[:500],
                         bundle_key=base64.b64encode(bundle_key).decode("ascii"),
                         sealing_keys=tuple(base64.b64encode(k).decode("ascii") for k in sealing_keys))

    def sealing_key_map(self) -> dict[int, bytes]:
        """Party id -> its raw 32-byte X25519 session public key (:attr:`sealing_keys`); empty when none."""
        if not self.sealing_keys:
            return {}
        return {party: base64.b64decode(key) for party, key in zip(self.parties, self.sealing_keys, strict=True)}

    def bundle_public_key(self) -> bytes | None:
        """The raw 32-byte public key of the worker's answer bundles, or None (it named none)."""
        return base64.b64decode(self.bundle_key) if self.bundle_key else None


def decode_answer(payload: bytes) -> WireAnswer:
    """A party answer off the wire, in either form, parsed and checked but not verified: the binary form
    (:func:`mpdp.broker.wire.decode`, no pydantic; signed, or the unsigned entry of an answer bundle) or JSON
    (:class:`PartyMessage`, version 1 or 2).

    Raises:
        ProtocolViolation: ``"schema"``, naming the first bad field.
    """
    if payload[:1] in (bytes((wire.FORMAT,)), bytes((wire.UNSIGNED_FORMAT,))):
        return wire.decode(payload)
    return PartyMessage.from_wire(payload).view()
