"""Ed25519 signatures over the canonical bytes of a wire message (RFC 8032, via ``cryptography``).

Canonical bytes of a message = its signing domain (a class constant, e.g. ``mpdp/party-message/v1``),
a newline, then the JSON of every field except the signatures (``signature``, or ``signatures`` of a
message signed by several keys, :data:`SIGNATURE_FIELDS`) with sorted keys, no whitespace and ASCII only.
Pydantic validated the fields first, so equal messages have equal bytes.
"""

from __future__ import annotations

import base64
import json
from typing import Any, ClassVar, Protocol, TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import (
    Ed25519PrivateKey,
    Ed25519PublicKey,
)

__all__ = [
    "PLACEHOLDER_SIGNATURE",
    "SIGNATURE_FIELDS",
    "Signable",
    "SignedMessage",
    "canonical_bytes",
    "generate_key_pair",
    "load_private_key",
    "load_public_key",
    "public_key_of",
    "sign_message",
    "signature_of",
    "verify_message",
    "verify_signature",
]

#: A well-formed signature (64 zero bytes) used while a message is built, before it is signed.
PLACEHOLDER_SIGNATURE = base64.b64encode(bytes(64)).decode("ascii")
#: The fields a signature does not cover: the signatures themselves.
SIGNATURE_FIELDS = frozenset({"signature", "signatures"})
_RAW = serialization.Encoding.Raw


class Signable(Protocol):
    """A pydantic wire message with a signing domain (its signatures in :data:`SIGNATURE_FIELDS`)."""

    SIGNING_DOMAIN: ClassVar[str]

    def model_dump(self, *, mode: str, exclude: set[str]) -> dict[str, Any]: ...


class SignedMessage(Signable, Protocol):
    """A pydantic wire message with one ``signature`` field and a signing domain."""

    @property
    def signature(self) -> str: ...  # read-only: wire messages are frozen

    def model_copy(self, *, update: dict[str, Any]) -> Any: ...


M = TypeVar("M", bound=SignedMessage)


def generate_key_pair() -> tuple[bytes, bytes]:
    """A fresh Ed25519 key pair as raw bytes: (private 32 bytes, public 32 bytes)."""
    key = Ed25519PrivateKey.generate()
    return (
        key.private_bytes(_RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()),
        key.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw),
    )


def load_private_key(private_key: bytes | Ed25519PrivateKey) -> Ed25519PrivateKey:
    """A private key object from 32 raw bytes (objects pass through)."""
    if isinstance(private_key, Ed25519PrivateKey):
        return private_key
    return Ed25519PrivateKey.from_private_bytes(private_key)


def load_public_key(public_key: bytes | Ed25519PublicKey) -> Ed25519PublicKey:
    """A public key object from 32 raw bytes (objects pass through)."""
    if isinstance(public_key, Ed25519PublicKey):
        return public_key
    return Ed25519PublicKey.from_public_bytes(public_key)


def public_key_of(private_key: bytes | Ed25519PrivateKey) -> bytes:
    """The raw 32-byte public key of a private key."""
    return load_private_key(private_key).public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)


def canonical_bytes(message: Signable) -> bytes:
    """The bytes a signature covers: domain, newline, sorted compact JSON of all fields but the signatures."""
    fields = message.model_dump(mode="json", exclude=set(SIGNATURE_FIELDS))
    body = json.dumps(fields, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return f"{message.SIGNING_DOMAIN}\n{body}".encode("ascii")


def signature_of(data: bytes, private_key: bytes | Ed25519PrivateKey) -> str:
    """The base64 Ed25519 signature of ``data`` (a message's :func:`canonical_bytes`, or a digest of them)
    under ``private_key``."""
    return base64.b64encode(load_private_key(private_key).sign(data)).decode("ascii")


def sign_message(message: M, private_key: bytes | Ed25519PrivateKey) -> M:
    """A copy of ``message`` whose ``signature`` is the base64 Ed25519 signature of its canonical bytes."""
    return message.model_copy(update={"signature": signature_of(canonical_bytes(message), private_key)})


def verify_signature(data: bytes, signature: str, public_key: bytes | Ed25519PublicKey) -> bool:
    """True iff ``signature`` (base64) is a valid signature of ``data`` (as :func:`signature_of` signed it)
    under ``public_key`` (raw 32 bytes or a key object; a malformed one is False)."""
    try:
        load_public_key(public_key).verify(base64.b64decode(signature, validate=True), data)
    except (InvalidSignature, ValueError):
        return False
    return True


def verify_message(message: SignedMessage, public_key: bytes | Ed25519PublicKey) -> bool:
    """True iff ``message.signature`` is a valid signature of its canonical bytes under ``public_key``."""
    return verify_signature(canonical_bytes(message), message.signature, public_key)
