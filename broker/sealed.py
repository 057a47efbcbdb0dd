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

Session keys (:class:`SessionSealer`, :class:`SessionOpener`; the mpc protocol's shares, issue 23): a sender
that seals many messages to the same recipients in one session keeps one X25519 key e for the session, so
each side does one exchange per (sender, recipient, context) and each message then costs one AEAD call:

    key = HKDF-SHA256(ikm=X25519(e, C), salt=E || C, info=context, length=32)    (once per context)
    nonce = 12 bytes from the OS CSPRNG (per message, sent in front of the ciphertext)
    ciphertext = ChaCha20Poly1305(key).encrypt(nonce, plaintext, associated_data)

``context`` binds what stays fixed over the session (session, sender, recipient), ``associated_data`` the
message's slot (its round): a ciphertext moved to another slot fails authentication. Random 96-bit nonces
under one key repeat with probability about q^2 / 2^97 after q messages (q is the number of rounds here).
The opener caches the key per context once a message authenticates under it, so a recipient pays one
exchange per sender and session; a sender that announced E ahead, authenticated by its signature (an mpc
party's signed "ready", :attr:`mpdp.broker.messages.WorkerStatus.sealing_keys`), lets the recipient derive that
key before the first message (:meth:`SessionOpener.expect`), so no exchange is left in the message path.
"""

from __future__ import annotations

import os

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from mpdp.protocols.errors import ProtocolViolation

__all__ = ["KEY_BYTES", "TAG_BYTES", "SessionOpener", "SessionSealer", "generate_x25519_key_pair", "open_sealed", "seal"]

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


def _exchange(private: X25519PrivateKey, public: bytes, what: str) -> bytes:
    """X25519(private, public) (RFC 7748 §6.1).

    Raises:
        ProtocolViolation: ``"decrypt"`` for a malformed or low-order ``public`` (all-zero shared secret).
    """
    try:
        return private.exchange(_public(public, what))
    except ValueError as exc:
        raise ProtocolViolation("decrypt", f"{what} rejected: {exc}") from None


def _public_bytes(private: X25519PrivateKey) -> bytes:
    return private.public_key().public_bytes(_RAW, serialization.PublicFormat.Raw)


def _session_aead(shared: bytes, sender_public: bytes, recipient_public: bytes, context: bytes) -> ChaCha20Poly1305:
    key = HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=sender_public + recipient_public,
               info=context).derive(shared)
    return ChaCha20Poly1305(key)


class SessionSealer:
    """A sender's X25519 key for one session (module docstring: session keys), made from the OS CSPRNG at
    the first message or when :attr:`public_key` is first read; the private key never leaves this object. One per sender: a party's process keeps it in memory, so
    a restarted party seals under a fresh key."""

    __slots__ = ("_aeads", "_key", "_public")

    def __init__(self) -> None:
        self._key: X25519PrivateKey | None = None
        self._public = b""
        self._aeads: dict[tuple[bytes, bytes], ChaCha20Poly1305] = {}

    def _private(self) -> X25519PrivateKey:
        if self._key is None:
            self._key = X25519PrivateKey.generate()
            self._public = _public_bytes(self._key)
        return self._key

    @property
    def public_key(self) -> bytes:
        """E, this sealer's raw 32-byte X25519 public key (the key is made now if no message made it yet):
        what the sender announces ahead, signed, so that recipients derive their keys before its first message."""
        self._private()
        return self._public

    def seal(self, recipient_public: bytes, plaintext: bytes, *, context: bytes,
             associated_data: bytes) -> tuple[bytes, bytes]:
        """Encrypt ``plaintext`` to ``recipient_public`` under the key of slot ``context``.

        Returns:
            (this sealer's public key E, 32 bytes; nonce || ciphertext, len(plaintext) + 28 bytes).

        Raises:
            ProtocolViolation: ``"decrypt"`` for a malformed or low-order recipient key.
        """
        key = self._private()
        aead = self._aeads.get((recipient_public, context))
        if aead is None:
            shared = _exchange(key, recipient_public, "recipient key")
            aead = self._aeads[recipient_public, context] = _session_aead(shared, self._public, recipient_public,
                                                                          context)
        nonce = os.urandom(_NONCE_BYTES)
        return self._public, nonce + aead.encrypt(nonce, plaintext, associated_data)


class SessionOpener:
    """A recipient's X25519 private key, loaded once, opening what :class:`SessionSealer` sealed; the key of
    each context is cached with its sender's E once a message authenticates under it (one entry per
    context: a sender that changes E, e.g. restarted, replaces it; a forged E replaces nothing)."""

    __slots__ = ("_aeads", "_key", "_public")

    def __init__(self, private_key: bytes | X25519PrivateKey) -> None:
        self._key = (private_key if isinstance(private_key, X25519PrivateKey)
                     else X25519PrivateKey.from_private_bytes(private_key))
        self._public = _public_bytes(self._key)
        self._aeads: dict[bytes, tuple[bytes, ChaCha20Poly1305]] = {}

    def expect(self, sender_public: bytes, *, context: bytes) -> bool:
        """Derive and cache the key of slot ``context`` for sender key ``sender_public`` ahead of its first
        message (one X25519 exchange now instead of at the first :meth:`open`). The caller vouches for
        ``sender_public``: the sender signed it (its newest announcement, e.g. after a restart, replaces the
        context's key). A message under another E still opens by its own exchange, as without this call.

        Returns:
            True when the key was cached; False when the context holds this E already, or for a malformed or
            low-order ``sender_public`` (nothing cached or evicted).
        """
        cached = self._aeads.get(context)
        if cached is not None and cached[0] == sender_public:
            return False
        try:
            shared = _exchange(self._key, sender_public, "sender key")
        except ProtocolViolation:
            return False
        self._aeads[context] = (sender_public, _session_aead(shared, sender_public, self._public, context))
        return True

    def open(self, sender_public: bytes, sealed: bytes, *, context: bytes, associated_data: bytes) -> bytes:
        """Decrypt and authenticate a message of slot ``context`` (``sealed``: nonce || ciphertext).

        Raises:
            ProtocolViolation: ``"decrypt"`` when authentication fails (tampered nonce, ciphertext, E or
                associated data, another context, sealed to another key), or a malformed or low-order E.
        """
        cached = self._aeads.get(context)
        if cached is not None and cached[0] == sender_public:
            aead, fresh = cached[1], False
        else:
            shared = _exchange(self._key, sender_public, "sender key")
            aead, fresh = _session_aead(shared, sender_public, self._public, context), True
        try:
            plain = aead.decrypt(sealed[:_NONCE_BYTES], sealed[_NONCE_BYTES:], associated_data)
        except (InvalidTag, ValueError):
            raise ProtocolViolation("decrypt", "authentication failed") from None
        if fresh:
            self._aeads[context] = (sender_public, aead)
        return plain


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
    ephemeral = X25519PrivateKey.generate()
    ephemeral_public = _public_bytes(ephemeral)
    shared = _exchange(ephemeral, recipient_public, "curator key")
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
    recipient_public = _public_bytes(private)
    try:
        shared = private.exchange(_public(ephemeral_public, "ephemeral key"))
        key, nonce = _key_and_nonce(shared, ephemeral_public, recipient_public, context)
        return ChaCha20Poly1305(key).decrypt(nonce, ciphertext, associated_data)
    except (InvalidTag, ValueError):
        raise ProtocolViolation("decrypt", "authentication failed") from None
