"""Shares sealed to one compute server: the curator's sealed-ballot construction (:mod:`mpdp.broker.sealed`),
one ciphertext per (party, server).

A party's share for server i is the field element as ``SHARE_BYTES`` big-endian bytes (fixed length: the
ciphertext length says nothing), sealed to server i's X25519 public key with a fresh ephemeral key. The
HKDF context binds session, round, party and server, so a ciphertext cannot be replayed into another slot
or opened by another server; the associated data is the same slot label, authenticated.
"""

from __future__ import annotations

from collections.abc import Sequence

from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from mpdp.broker.sealed import open_sealed, seal
from mpdp.parties.mpc.sharing import field_modulus
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["SHARE_BYTES", "open_share", "seal_shares"]

#: Bytes of one share: the byte length of the field's prime p.
SHARE_BYTES = (field_modulus().bit_length() + 7) // 8


def _slot(session: str, round_index: int, party: int, server: int) -> bytes:
    return f"mpdp-mpc-share|{session}|{round_index}|{party}|{server}".encode()


def seal_shares(shares: Sequence[int], server_keys: Sequence[bytes], *, session: str, round_index: int,
                party: int) -> list[tuple[bytes, bytes]]:
    """Seal one party's share for each server to that server's key.

    Args:
        shares: the party's m shares, ints in 0..p-1 (``share_bits(...)[i][j]`` over i for party j).
        server_keys: the m servers' raw 32-byte X25519 public keys, in server order.
        session, round_index, party: the slot the ciphertexts are bound to.

    Returns:
        m pairs (ephemeral public key 32 bytes, ciphertext SHARE_BYTES + 16 bytes).

    Raises:
        ProtocolViolation: ``"decrypt"`` for a malformed server key; ``"plaintext"`` for m shares and a
            different number of keys or a share outside 0..p-1.
    """
    if len(shares) != len(server_keys):
        raise ProtocolViolation("plaintext", f"{len(shares)} shares for {len(server_keys)} server keys")
    if any(not 0 <= s < field_modulus() for s in shares):
        raise ProtocolViolation("plaintext", "a share outside 0..p-1")
    return [seal(key, share.to_bytes(SHARE_BYTES, "big"), context=_slot(session, round_index, party, i),
                 associated_data=_slot(session, round_index, party, i))
            for i, (share, key) in enumerate(zip(shares, server_keys))]


def open_share(private_key: bytes | X25519PrivateKey, sealed: tuple[bytes, bytes], *, session: str, round_index: int, party: int,
               server: int) -> int:
    """Server ``server``'s share from party ``party``, opened with its X25519 private key (raw bytes, or
    loaded once for many shares).

    Raises:
        ProtocolViolation: ``"decrypt"`` (tampered, another slot, another server's key) or ``"plaintext"``
            (not SHARE_BYTES bytes of a field element).
    """
    slot = _slot(session, round_index, party, server)
    plain = open_sealed(private_key, *sealed, context=slot, associated_data=slot)
    value = int.from_bytes(plain, "big")
    if len(plain) != SHARE_BYTES or value >= field_modulus():
        raise ProtocolViolation("plaintext", f"party {party}: not a share of {SHARE_BYTES} bytes below p")
    return value
