"""Ed25519 signatures (RFC 8032) through PyNaCl (libsodium), over the bytes a wire message covers.

Keys are raw 32 bytes (the private key is the RFC 8032 seed), as before: key files and rosters written
with ``cryptography`` load unchanged, and a signature made by either library verifies with the other (the
same deterministic Ed25519). libsodium verifies about twice as fast as ``cryptography`` here (see
``benchmarks/bench_observer.py``).

What a signature covers is the message's :meth:`signed_bytes`: for the JSON messages the canonical bytes
= the message's signing domain (a class constant, e.g. ``mpdp/announcement/v1``), a newline, then the JSON
of every field except the signatures (``signature``, or ``signatures`` of a message signed by several
keys, :data:`SIGNATURE_FIELDS`) with sorted keys, no whitespace and ASCII only (pydantic validated the
fields first, so equal messages have equal bytes); the binary party answer covers its own bytes
(:mod:`mpdp.broker.wire`).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any, ClassVar, Protocol, TypeVar

from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

__all__ = [
    "PLACEHOLDER_SIGNATURE",
    "SIGNATURE_FIELDS",
    "PrivateKey",
    "PublicKey",
    "SignedMessage",
    "Verifiable",
    "canonical_bytes",
    "generate_key_pair",
    "load_private_key",
    "load_public_key",
    "public_key_of",
    "sign_bytes",
    "sign_message",
    "signature_of",
    "signature_text",
    "verify_bytes",
    "verify_message",
    "verify_signature",
]

#: A well-formed signature (64 zero bytes) used while a message is built, before it is signed.
PLACEHOLDER_SIGNATURE = base64.b64encode(bytes(64)).decode("ascii")
#: The fields a signature does not cover: the signatures themselves.
SIGNATURE_FIELDS = frozenset({"signature", "signatures"})
#: A loaded Ed25519 private key (libsodium), what signers hold between messages.
PrivateKey = SigningKey
#: A loaded Ed25519 public key (libsodium), what verifiers hold per party (once per roster).
PublicKey = VerifyKey


class Verifiable(Protocol):
    """Anything whose signature can be checked: the bytes it covers and the raw 64-byte signature."""

    def signed_bytes(self) -> bytes:
        """The bytes the signature covers (signing domain included)."""
        ...

    def signature_bytes(self) -> bytes:
        """The raw signature (64 bytes when well-formed).

        Raises:
            ValueError: the signature is not decodable.
        """
        ...


class Canonical(Protocol):
    """A pydantic message with a signing domain (what :func:`canonical_bytes` reads)."""

    SIGNING_DOMAIN: ClassVar[str]

    def model_dump(self, *, mode: str, exclude: set[str]) -> dict[str, Any]: ...


class SignedMessage(Verifiable, Canonical, Protocol):
    """A pydantic wire message with a base64 ``signature`` field and a signing domain."""

    @property
    def signature(self) -> str: ...  # read-only: wire messages are frozen

    def model_copy(self, *, update: dict[str, Any]) -> Any: ...


M = TypeVar("M", bound=SignedMessage)


def generate_key_pair() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as raw bytes: (private 32 bytes, public 32 bytes), from the OS CSPRNG."""
    key = SigningKey.generate()
    return bytes(key), bytes(key.verify_key)


def load_private_key(private_key: bytes | PrivateKey) -> PrivateKey:
    """A private key object from 32 raw bytes (objects pass through).

    Raises:
        ValueError: not 32 bytes.
    """
    if isinstance(private_key, SigningKey):
        return private_key
    if not isinstance(private_key, bytes) or len(private_key) != 32:
        raise ValueError(f"an Ed25519 private key is 32 raw bytes, got {type(private_key).__name__}"
                         f"{'' if not isinstance(private_key, bytes) else f' of {len(private_key)} bytes'}")
    return SigningKey(private_key)


def load_public_key(public_key: bytes | PublicKey) -> PublicKey:
    """A public key object from 32 raw bytes (objects pass through).

    Raises:
        ValueError: not 32 bytes.
    """
    if isinstance(public_key, VerifyKey):
        return public_key
    if not isinstance(public_key, bytes) or len(public_key) != 32:
        raise ValueError(f"an Ed25519 public key is 32 raw bytes, got {type(public_key).__name__}"
                         f"{'' if not isinstance(public_key, bytes) else f' of {len(public_key)} bytes'}")
    return VerifyKey(public_key)


def public_key_of(private_key: bytes | PrivateKey) -> bytes:
    """The raw 32-byte public key of a private key."""
    return bytes(load_private_key(private_key).verify_key)


def canonical_bytes(message: Canonical) -> bytes:
    """The bytes a JSON message's signature covers: domain, newline, sorted compact JSON of all fields but
    the signatures (:data:`SIGNATURE_FIELDS`)."""
    fields = message.model_dump(mode="json", exclude=set(SIGNATURE_FIELDS))
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{message.SIGNING_DOMAIN}\n{body}".encode("ascii")


def signature_of(text: str) -> bytes:
    """The raw bytes of a base64 signature field.

    Raises:
        ValueError: not base64.
    """
    try:
        return base64.b64decode(text, validate=True)
    except binascii.Error as exc:
        raise ValueError(f"signature: not base64 ({exc})") from None


def sign_bytes(data: bytes, private_key: bytes | PrivateKey) -> bytes:
    """The 64-byte Ed25519 signature of ``data``."""
    return load_private_key(private_key).sign(data).signature


def signature_text(data: bytes, private_key: bytes | PrivateKey) -> str:
    """The base64 Ed25519 signature of ``data`` (what a message's ``signature`` field holds)."""
    return base64.b64encode(sign_bytes(data, private_key)).decode("ascii")


def verify_bytes(data: bytes, signature: bytes, public_key: bytes | PublicKey) -> bool:
    """True iff ``signature`` (64 bytes) is a valid Ed25519 signature of ``data`` under ``public_key``."""
    if len(signature) != 64:
        return False
    try:  # VerifyKey.verify's own check, without its wrapper (the observer's check per answer: ~7% less)
        crypto_sign_open(signature + data, bytes(load_public_key(public_key)))
    except (BadSignatureError, ValueError):
        return False
    return True


def verify_signature(data: bytes, signature: str, public_key: bytes | PublicKey) -> bool:
    """True iff ``signature`` (base64) is a valid Ed25519 signature of ``data`` under ``public_key`` (a
    malformed signature is False)."""
    try:
        return verify_bytes(data, signature_of(signature), public_key)
    except ValueError:
        return False


def sign_message(message: M, private_key: bytes | PrivateKey) -> M:
    """A copy of ``message`` whose ``signature`` is the base64 Ed25519 signature of its :meth:`signed_bytes`."""
    return message.model_copy(update={"signature": signature_text(message.signed_bytes(), private_key)})


def verify_message(message: Verifiable, public_key: bytes | PublicKey) -> bool:
    """True iff the message's signature is valid over its :meth:`signed_bytes` under ``public_key``."""
    try:
        signature = message.signature_bytes()
    except ValueError:
        return False
    return verify_bytes(message.signed_bytes(), signature, public_key)
