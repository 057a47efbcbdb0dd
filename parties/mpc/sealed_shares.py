"""Shares sealed to one compute server under the party's session key (:mod:`mpdp.broker.sealed`, session
keys), one ciphertext per (party, server, round).

A party's share for server i is the field element as ``SHARE_BYTES`` big-endian bytes (fixed length: the
ciphertext length says nothing), sealed with the party's :class:`ShareSealer` (one X25519 key for the
session) to server i's X25519 public key. The HKDF context binds session, party and server (one key per
party and server for the session), each share has a fresh random nonce, and the associated data is the full
slot label (session, round, party, server), authenticated: a ciphertext cannot be replayed into another round
or slot, or opened by another server. A server's :class:`ShareOpener` does one X25519 exchange per party
and session and then one AEAD call per share (issue 23: opening 1,000 shares no longer costs 1,000
exchanges per round), and none in the round at all for a party whose session key it derived ahead
(:meth:`ShareOpener.expect`, from the key the party signed in its "ready").
"""

from __future__ import annotations

from collections.abc import Sequence

from mpdp.broker.sealed import SessionOpener, SessionSealer
from mpdp.parties.mpc.sharing import field_modulus
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.numerics.cost import noun

__all__ = ["SHARE_BYTES", "ShareOpener", "ShareSealer", "seal_shares"]

#: Bytes of one share: the byte length of the field's prime p.
SHARE_BYTES = (field_modulus().bit_length() + 7) // 8

#: One party's sealing key for a session (keep one per party for all its rounds).
ShareSealer = SessionSealer


def _context(session: str, party: int, server: int) -> bytes:
    return f"mpdp-mpc-share/v2|{session}|{party}|{server}".encode()


def _slot(session: str, round_index: int, party: int, server: int) -> bytes:
    return f"mpdp-mpc-share|{session}|{round_index}|{party}|{server}".encode()


def seal_shares(sealer: ShareSealer, shares: Sequence[int], server_keys: Sequence[bytes], *, session: str,
                round_index: int, party: int) -> list[tuple[bytes, bytes]]:
    """Seal one party's share for each server to that server's key, under the party's session key.

    Args:
        sealer: the party's sealer for the session (the same one every round).
        shares: the party's m shares, ints in 0..p-1 (``share_bits(...)[i][j]`` over i for party j).
        server_keys: the m servers' raw 32-byte X25519 public keys, in server order.
        session, round_index, party: the slot the ciphertexts are bound to.

    Returns:
        m pairs (the party's session public key 32 bytes, nonce and ciphertext SHARE_BYTES + 28 bytes).

    Raises:
        ProtocolViolation: ``"decrypt"`` for a malformed server key; ``"plaintext"`` for m shares and a
            different number of keys or a share outside 0..p-1.
    """
    if len(shares) != len(server_keys):
        raise ProtocolViolation("plaintext", f"{len(shares)} {noun(len(shares), 'share')} for {len(server_keys)} server "
                                             f"{noun(len(server_keys), 'key')}")
    if any(not 0 <= s < field_modulus() for s in shares):
        raise ProtocolViolation("plaintext", "a share outside 0..p-1")
    return [sealer.seal(key, share.to_bytes(SHARE_BYTES, "big"), context=_context(session, party, i),
                        associated_data=_slot(session, round_index, party, i))
            for i, (share, key) in enumerate(zip(shares, server_keys))]


class ShareOpener:
    """Server ``server``'s opener of the shares sealed to it in ``session``: its X25519 private key loaded
    once, one exchange per party for the session (cached), then one AEAD call per share.

    Args:
        private_key: the server's raw 32-byte X25519 private key.
        session, server: the slot the shares must be bound to.
    """

    def __init__(self, private_key: bytes, *, session: str, server: int) -> None:
        self._opener = SessionOpener(private_key)
        self.session, self.server = session, server

    def expect(self, party: int, sender_public: bytes) -> bool:
        """Derive party ``party``'s key for this server and session from its session public key
        ``sender_public`` before its first share (:meth:`mpdp.broker.sealed.SessionOpener.expect`: one X25519
        exchange now, replacing the party's cached key). The caller vouches for the key: the party signed it
        in its "ready" (:attr:`mpdp.broker.messages.WorkerStatus.sealing_keys`).

        Returns:
            True when cached; False for the key cached already, or a malformed or low-order key.
        """
        return self._opener.expect(sender_public, context=_context(self.session, party, self.server))

    def open(self, sealed: tuple[bytes, bytes], *, round_index: int, party: int) -> int:
        """The share of party ``party`` in round ``round_index``.

        Raises:
            ProtocolViolation: ``"decrypt"`` (tampered, another round or slot, another server's key) or
                ``"plaintext"`` (not SHARE_BYTES bytes of a field element).
        """
        plain = self._opener.open(*sealed, context=_context(self.session, party, self.server),
                                  associated_data=_slot(self.session, round_index, party, self.server))
        value = int.from_bytes(plain, "big")
        if len(plain) != SHARE_BYTES or value >= field_modulus():
            raise ProtocolViolation("plaintext", f"party {party}: not a share of {SHARE_BYTES} bytes below p")
        return value
