"""Wire messages of the secure-computation protocol (``--protocol mpc``, issue 14): m compute servers
release the optimal central mechanism's output without any of them seeing a vote.

* :class:`MpcAnnouncement` — the coordinator opens round ``round`` and lists the m compute servers' X25519
  public keys and the collusion threshold T (``kind="round"``), or ends the session (``kind="end"``);
  signed by the coordinator's Ed25519 key, which every party holds.
* :class:`SharedBallot` — a party's bit as m Shamir shares (degree T over the servers' prime field), share
  i sealed to server i's key under the party's session key (:mod:`mpdp.broker.sealed`, session keys: the
  HKDF context binds session, party and server, the authenticated data the round), or a public abstention;
  signed by the party's Ed25519 key. Every ciphertext has the same length whatever the bit. The broker, the coordinator and any T servers see values independent of it.
* The release of the majority is the curator's message (:class:`mpdp.broker.curator_messages.CuratorRelease`),
  that of a count (``sum``, the geometric mechanism) a :class:`SumRelease`; each compute server signs its
  copy with its own Ed25519 key.
* Deployed servers (``mpdp mpc-server``): :class:`ServerJob` — the coordinator hands compute server i its
  round job (the participants' shares sealed to server i only, and the public table), signed by the
  coordinator; :class:`ServerReport` — a server says it is ready (its MPyC links are up) or returns its
  signed release with its cost of the round, signed by the server's Ed25519 key (pinned in the roster).

Every message here but the party's ballot carries the freshness fields (:class:`mpdp.broker.messages.Fresh`,
:mod:`mpdp.broker.control`) under its signature: its receiver (a party, a server, the coordinator) refuses
an expired or replayed one.

pydantic v2, ``extra="forbid"``, frozen, strict, JSON on the wire, signed over
:func:`mpdp.broker.signing.canonical_bytes`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Annotated, Any, ClassVar, Literal, Self

import numpy as np
from numpy.typing import NDArray
from pydantic import Field, model_validator

from mpdp.broker.control import DEFAULT_LIFETIME, stamp
from mpdp.broker.curator_messages import Base64, decode_key, encode_key
from mpdp.broker.messages import (
    MAX_REPETITIONS,
    Answer,
    Fresh,
    Index,
    RoundAnnouncement,
    RoundSigned,
    as_value_error,
    new_nonce,
)
from mpdp.broker.sealed import KEY_BYTES, TAG_BYTES
from mpdp.broker.signing import PLACEHOLDER_SIGNATURE, PrivateKey, sign_message

__all__ = ["MAX_JOB_CHARS", "MAX_SERVERS", "MpcAnnouncement", "ServerJob", "ServerReport", "SharedBallot", "SumRelease"]

#: The most compute servers a session may have.
MAX_SERVERS = 31

#: The longest job or release text a deployed server message carries (characters of JSON).
MAX_JOB_CHARS = 1 << 24

_Pair = tuple[Base64, Base64]


class MpcAnnouncement(RoundAnnouncement):
    """The coordinator opens a round with the compute servers' keys, or ends the session.

    Fields:
        server_keys: ``kind="round"``: the m >= 1 servers' X25519 public keys (base64, server order);
            ``kind="end"``: empty.
        threshold: T, the colluding servers the sharing tolerates, 2T < m (0 for ``end``).
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/mpc-announcement/v1"

    server_keys: Annotated[list[Base64], Field(max_length=MAX_SERVERS)] = []
    threshold: Annotated[int, Field(ge=0, le=MAX_SERVERS, strict=True)] = 0

    @model_validator(mode="after")
    def _keys_match_kind(self) -> Self:
        if self.kind == "round":
            if not self.server_keys or 2 * self.threshold >= len(self.server_keys):
                raise ValueError("a round lists m >= 1 server keys and a threshold T with 2T < m")
            for i, key in enumerate(self.server_keys):
                as_value_error(decode_key, key, KEY_BYTES, f"server_keys[{i}]")
        elif self.server_keys or self.threshold:
            raise ValueError("an end announcement or a heartbeat carries no server keys")
        return self

    @property
    def key_bytes(self) -> list[bytes]:
        """The servers' raw 32-byte X25519 public keys."""
        return [decode_key(key, KEY_BYTES, "server_keys") for key in self.server_keys]

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str,
               kind: Literal["round", "end", "heartbeat"], round: int, repetitions: int, name: str = "",
               server_keys: Sequence[bytes] = (), threshold: int = 0,
               lifetime: float = DEFAULT_LIFETIME) -> MpcAnnouncement:
        """Build and sign an announcement (``server_keys``: raw X25519 public keys, for ``round``), valid
        for ``lifetime`` seconds."""
        draft = cls(session=session, kind=kind, round=int(round), name=name, repetitions=int(repetitions),
                    server_keys=[encode_key(k) for k in server_keys], threshold=int(threshold), nonce=new_nonce(),
                    signature=PLACEHOLDER_SIGNATURE, **stamp(lifetime))
        return sign_message(draft, private_key)


class SharedBallot(Answer):
    """One party's bit for one round as sealed Shamir shares, one per server (or a public abstention).

    Fields:
        kind: ``"sealed"`` (``shares`` set) or ``"abstain"`` (``reason`` set, no shares).
        shares: per server i, (base64 X25519 public key of the party's session key, base64 nonce,
            ciphertext and tag of the share); every ciphertext of one ballot has the same length.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/shared-ballot/v1"

    kind: Literal["sealed", "abstain"]
    shares: Annotated[list[_Pair], Field(max_length=MAX_SERVERS)] = []

    @model_validator(mode="after")
    def _kind_matches_payload(self) -> Self:
        if self.kind == "abstain":
            if self.reason is None or self.shares:
                raise ValueError("an abstention has a reason and no shares")
            return self
        if self.reason is not None or not self.shares:
            raise ValueError("a sealed ballot has shares and no reason")
        for i, (ephemeral, _) in enumerate(self.shares):
            as_value_error(decode_key, ephemeral, KEY_BYTES, f"shares[{i}] key")
        sizes = {len(as_value_error(decode_key, c, None, f"shares[{i}] ciphertext")) for i, (_, c) in enumerate(self.shares)}
        if len(sizes) != 1 or sizes.pop() <= TAG_BYTES:
            raise ValueError("every share's ciphertext is longer than its tag, all of one length")
        return self

    def sealed_pairs(self) -> list[tuple[bytes, bytes]]:
        """Per server, the raw (ephemeral public key, ciphertext) (empty for an abstention)."""
        return [(decode_key(e, KEY_BYTES, "shares"), decode_key(c, None, "shares")) for e, c in self.shares]

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int, party: int,
               repetitions: int, shares: Sequence[tuple[bytes, bytes]] = (),
               reason: str | None = None) -> SharedBallot:
        """Sign a ballot of sealed ``shares`` (raw pairs, server order), or an abstention with ``reason``."""
        ballot_of = partial(cls, session=session, round=int(round), party=int(party), repetitions=int(repetitions),
                            nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE)
        if reason is not None:
            return sign_message(ballot_of(kind="abstain", reason=reason), private_key)
        pairs = [(encode_key(e), encode_key(c)) for e, c in shares]
        return sign_message(ballot_of(kind="sealed", shares=pairs), private_key)


class SumRelease(RoundSigned, Fresh):
    """A compute server's signed release of a count (``sum``): ``repetitions`` independent noisy counts.

    Fields:
        voters: n, the participants the count is over.
        outputs: the released counts, each in 0..n (the geometric mechanism of 000, clamped).
        sequence, expires_ms: freshness (:class:`mpdp.broker.messages.Fresh`), under the signature.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/sum-release/v1"

    voters: Index
    outputs: Annotated[list[Annotated[int, Field(ge=0, strict=True)]], Field(max_length=MAX_REPETITIONS)]

    @model_validator(mode="after")
    def _outputs_match(self) -> Self:
        if len(self.outputs) != self.repetitions or any(y > self.voters for y in self.outputs):
            raise ValueError("outputs: one count in 0..voters per repetition")
        return self

    def output_array(self) -> NDArray[np.int64]:
        """int64 (repetitions,) of released counts."""
        return np.array(self.outputs, dtype=np.int64)

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int, voters: int,
               outputs: Sequence[int] | NDArray[np.integer[Any]], lifetime: float = DEFAULT_LIFETIME) -> SumRelease:
        """Build and sign a release of ``outputs`` (counts in 0..voters), valid for ``lifetime`` seconds."""
        draft = cls(session=session, round=int(round), voters=int(voters), repetitions=len(outputs),
                    outputs=[int(y) for y in outputs], nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE,
                    **stamp(lifetime))
        return sign_message(draft, private_key)


class ServerJob(RoundSigned, Fresh):
    """The coordinator's job for one deployed compute server and round.

    Fields:
        server: i, the server the job is for (published on its job topic only).
        job: the :class:`mpdp.parties.mpc.server.RoundJob` as one JSON line: the participants' ids, their
            shares sealed to server i, the public release table; nothing another server could open.
        sequence, expires_ms: freshness (:class:`mpdp.broker.messages.Fresh`): the server refuses a
            replayed or expired job.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/mpc-server-job/v1"

    server: Annotated[int, Field(ge=0, lt=MAX_SERVERS, strict=True)]
    job: Annotated[str, Field(max_length=MAX_JOB_CHARS)]

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, round: int, repetitions: int,
               server: int, job: str, lifetime: float = DEFAULT_LIFETIME) -> ServerJob:
        """Build and sign server ``server``'s job of round ``round``, valid for ``lifetime`` seconds."""
        draft = cls(session=session, round=int(round), repetitions=int(repetitions), server=int(server), job=job,
                    nonce=new_nonce(), signature=PLACEHOLDER_SIGNATURE, **stamp(lifetime))
        return sign_message(draft, private_key)


class ServerReport(RoundSigned, Fresh):
    """A deployed compute server's report: ``ready`` (its MPyC links to every other server are up; round 0,
    one repetition), ``release`` (its signed release of round ``round``) or ``failed`` (its MPyC links to the
    servers ``gone`` closed: it stops, MPyC has no dropout tolerance).

    Fields:
        server: i; kind: ``"ready"``, ``"release"`` or ``"failed"``.
        gone: ``failed``: the servers whose links closed, ascending, at least one; otherwise empty.
        release: the release message's JSON (:class:`mpdp.broker.curator_messages.CuratorRelease` or
            :class:`SumRelease`, itself signed by the server); empty when ready.
        sent: bytes the server sent to the other servers over MPyC's links in the round.
        cpu: the server's CPU seconds in the round.
        sequence, expires_ms: freshness (:class:`mpdp.broker.messages.Fresh`): the coordinator refuses a
            replayed or expired report.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/mpc-server-report/v1"

    server: Annotated[int, Field(ge=0, lt=MAX_SERVERS, strict=True)]
    kind: Literal["ready", "release", "failed"]
    release: Annotated[str, Field(max_length=MAX_JOB_CHARS)] = ""
    gone: Annotated[tuple[Annotated[int, Field(ge=0, lt=MAX_SERVERS, strict=True)], ...], Field(max_length=MAX_SERVERS)] = ()
    sent: Annotated[int, Field(ge=0, strict=True)] = 0
    cpu: Annotated[float, Field(ge=0)] = 0.0

    @model_validator(mode="after")
    def _release_matches_kind(self) -> Self:
        if (self.kind == "release") != bool(self.release):
            raise ValueError("a release report carries the release; a ready or failed report none")
        if (self.kind == "failed") != bool(self.gone) or list(self.gone) != sorted(set(self.gone)):
            raise ValueError("a failed report names the servers gone (ascending, distinct); the others none")
        return self

    @classmethod
    def signed(cls, private_key: bytes | PrivateKey, *, session: str, server: int,
               kind: Literal["ready", "release", "failed"], round: int = 0, repetitions: int = 1, release: str = "",
               sent: int = 0, cpu: float = 0.0, gone: tuple[int, ...] = (),
               lifetime: float = DEFAULT_LIFETIME) -> ServerReport:
        """Build and sign a report of server ``server``, valid for ``lifetime`` seconds."""
        draft = cls(session=session, round=int(round), repetitions=int(repetitions), server=int(server), kind=kind,
                    release=release, sent=int(sent), cpu=float(cpu), gone=tuple(int(g) for g in gone), nonce=new_nonce(),
                    signature=PLACEHOLDER_SIGNATURE, **stamp(lifetime))
        return sign_message(draft, private_key)
