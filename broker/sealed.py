"""Sealed ballots: public-key encryption of a party's bit to the curator (via ``cryptography``).

Ephemeral-static X25519 (RFC 7748), HKDF-SHA256 (RFC 5869), ChaCha20-Poly1305 (RFC 8439), in the
manner of HPKE's base mode (RFC 9180) with one message per key:

    e, E = fresh X25519 key pair (per message)      C = the curator's X25519 public key
    shared = X25519(e, C)
    key || nonce = HKDF-SHA256(ikm=shared, salt=E || C, info=context, length=32 + 12)
    ciphertext = ChaCha20Poly1305(key).encrypt(nonce, plaintext, associated_data)

The salt binds both public keys, ``context`` binds the session, round and party (so a ciphertext
cannot be replayed into another slot), and ``associated_data`` authenticates the message header.
Each ephemeral key encrypts one message, so the derived nonce is never reused under a key.
The curator opens with X25519(c, E) and the same derivation; any change to E, the ciphertext, the
context or the associated data, or a different curator key, fails authentication.
"""

from __future__ import annotations

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mpdp.protocols.errors import ProtocolViolation

__all__ = ["KEY_BYTES", "TAG_BYTES", "generate_x25519_key_pair", "open_sealed", "seal"]

#: Raw X25519 key length; ChaCha20-Poly1305 tag length (a ciphertext is plaintext + 16 bytes).
KEY_BYTES, TAG_BYTES = 32, 16
_NONCE_BYTES = 12
_RAW = serialization.Encoding.Raw


def generate_x25519_key_pair() -> tuple[bytes, bytes]:
    """A fresh X25519 key pair from the OS CSPRNG as raw bytes: (private 32 bytes, public 32 bytes)."""
    key = X25519PrivateKey.generate()
    return (
        key.private_bytes(_RAW, serialization.PrivateFormat.Raw, serialization.NoEncryption()),
        key.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw),
    )


def _key_and_nonce(shared: bytes, ephemeral_public: bytes, recipient_public: bytes,
                   context: bytes) -> tuple[bytes, bytes]:
    okm = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES + _NONCE_BYTES,
               salt=ephemeral_public + recipient_public, info=context).derive(shared)
    return okm[:KEY_BYTES], okm[KEY_BYTES:]


def _public(key: bytes, what: str) -> X25519PublicKey:
    if not isinstance(key, bytes) or len(key) != KEY_BYTES:
        raise ProtocolViolation("decrypt", f"{what}: need {KEY_BYTES} raw bytes")
    return X25519PublicKey.from_public_bytes(key)


def seal(recipient_public: bytes, plaintext: bytes, *, context: bytes,
         associated_data: bytes) -> tuple[bytes, bytes]:
    """Encrypt ``plaintext`` to ``recipient_public`` with a fresh ephemeral key.

    Args:
        recipient_public: the curator's raw 32-byte X25519 public key.
        plaintext: the message (a party's bit: one byte).
        context: HKDF info binding the slot (session, round, party).
        associated_data: authenticated, not encrypted (the message header).

    Returns:
        (ephemeral public key, 32 bytes; ciphertext, len(plaintext) + 16 bytes).

    Raises:
        ProtocolViolation: ``"decrypt"`` for a malformed or low-order recipient key.
    """
    recipient = _public(recipient_public, "curator key")
    ephemeral = X25519PrivateKey.generate()
    ephemeral_public = ephemeral.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)
    try:
        shared = ephemeral.exchange(recipient)
    except ValueError as exc:  # an all-zero shared secret (low-order point)
        raise ProtocolViolation("decrypt", f"curator key rejected: {exc}") from None
    key, nonce = _key_and_nonce(shared, ephemeral_public, recipient_public, context)
    return ephemeral_public, ChaCha20Poly1305(key).encrypt(nonce, plaintext, associated_data)


def open_sealed(recipient_private: bytes | X25519PrivateKey, ephemeral_public: bytes, ciphertext: bytes, *,
                context: bytes, associated_data: bytes) -> bytes:
    """Decrypt and authenticate what :func:`seal` produced.

    Args:
        recipient_private: the curator's raw 32-byte X25519 private key, or that key loaded once
            (``X25519PrivateKey.from_private_bytes``: a server opening 1,000 shares saves ~50 us each).
        ephemeral_public, ciphertext: as returned by :func:`seal`.
        context, associated_data: must equal the sender's.

    Returns:
        The plaintext.

    Raises:
        ProtocolViolation: ``"decrypt"`` when authentication fails (tampered ciphertext, header or
            ephemeral key, another slot's context, or a ciphertext sealed to another key).
    """
    private = (recipient_private if isinstance(recipient_private, X25519PrivateKey)
               else X25519PrivateKey.from_private_bytes(recipient_private))
    recipient_public = private.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)
    try:
        shared = private.exchange(_public(ephemeral_public, "ephemeral key"))
        key, nonce = _key_and_nonce(shared, ephemeral_public, recipient_public, context)
        return ChaCha20Poly1305(key).decrypt(nonce, ciphertext, associated_data)
    except (InvalidTag, ValueError):
        raise ProtocolViolation("decrypt", "authentication failed") from None
