"""Sealed ballots: the construction matches its spec (checked with the primitives directly), round
trips, and every tampering or wrong key fails authentication."""

from __future__ import annotations

import base64
import json

import numpy as np
import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric.x25519 import (
    X25519PrivateKey,
    X25519PublicKey,
)
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from mpdp.broker import sealed as sealed_module
from mpdp.broker.curator_messages import CuratorAnnouncement, CuratorRelease, SealedBallot
from mpdp.broker.sealed import SessionOpener, SessionSealer, generate_x25519_key_pair, open_sealed, seal
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.protocols.errors import ProtocolViolation

CURATOR_PRIVATE, CURATOR_PUBLIC = generate_x25519_key_pair()
SIGN_PRIVATE, SIGN_PUBLIC = generate_key_pair()


def _flip(data: bytes, index: int) -> bytes:
    return data[:index] + bytes([data[index] ^ 1]) + data[index + 1:]


def _ballot(bit: int, **changes: object) -> SealedBallot:
    fields: dict[str, object] = dict(curator_key=CURATOR_PUBLIC, session="s-1", round=2, party=5, repetitions=7)
    fields.update(changes)
    return SealedBallot.signed(SIGN_PRIVATE, bit=bit, **fields)  # type: ignore[arg-type]


def test_construction_matches_the_documented_derivation() -> None:
    """Decrypt with X25519 + HKDF-SHA256(salt = E || C, info = context) + ChaCha20-Poly1305 written out
    here, independently of broker.sealed."""
    ballot = _ballot(1)
    ephemeral = base64.b64decode(ballot.ephemeral_key)
    shared = X25519PrivateKey.from_private_bytes(CURATOR_PRIVATE).exchange(
        X25519PublicKey.from_public_bytes(ephemeral))
    okm = HKDF(algorithm=hashes.SHA256(), length=44, salt=ephemeral + CURATOR_PUBLIC,
               info=b"mpdp/sealed-ballot/v1/s-1/2/5").derive(shared)
    header = json.dumps({"curator_key": ballot.curator_key, "party": 5, "repetitions": 7, "round": 2,
                         "session": "s-1"}, sort_keys=True, separators=(",", ":")).encode()
    plain = ChaCha20Poly1305(okm[:32]).decrypt(okm[32:], base64.b64decode(ballot.ciphertext), header)
    assert plain == b"\x01"
    assert verify_message(ballot, SIGN_PUBLIC)


@settings(max_examples=25, deadline=None)
@given(plaintext=st.binary(max_size=64), context=st.binary(max_size=40), ad=st.binary(max_size=40))
def test_round_trip(plaintext: bytes, context: bytes, ad: bytes) -> None:
    ephemeral, ciphertext = seal(CURATOR_PUBLIC, plaintext, context=context, associated_data=ad)
    assert len(ciphertext) == len(plaintext) + 16
    assert open_sealed(CURATOR_PRIVATE, ephemeral, ciphertext, context=context, associated_data=ad) == plaintext


def test_every_tampering_and_a_wrong_key_fail() -> None:
    ephemeral, ciphertext = seal(CURATOR_PUBLIC, b"\x01", context=b"ctx", associated_data=b"ad")
    other_private, _ = generate_x25519_key_pair()
    attempts = [(CURATOR_PRIVATE, ephemeral, _flip(ciphertext, i), b"ctx", b"ad") for i in range(len(ciphertext))]
    attempts += [(CURATOR_PRIVATE, _flip(ephemeral, 0), ciphertext, b"ctx", b"ad"),
                 (CURATOR_PRIVATE, ephemeral, ciphertext, b"ctx", b"ae"),
                 (CURATOR_PRIVATE, ephemeral, ciphertext, b"cty", b"ad"),
                 (CURATOR_PRIVATE, ephemeral, ciphertext[:-1], b"ctx", b"ad"),
                 (CURATOR_PRIVATE, bytes(32), ciphertext, b"ctx", b"ad"),  # low-order point
                 (other_private, ephemeral, ciphertext, b"ctx", b"ad")]
    for key, eph, ct, ctx, ad in attempts:
        with pytest.raises(ProtocolViolation) as info:
            open_sealed(key, eph, ct, context=ctx, associated_data=ad)
        assert info.value.reason == "decrypt"


@pytest.mark.parametrize("bit", [0, 1])
def test_ballot_round_trip_and_no_bit_in_clear(bit: int) -> None:
    ballot = _ballot(bit)
    wire = ballot.model_dump_json()
    again = SealedBallot.model_validate_json(wire)
    assert again.open(CURATOR_PRIVATE) == bit and verify_message(again, SIGN_PUBLIC)
    other = _ballot(1 - bit)
    # the same fields and lengths whatever the bit; fresh ephemeral keys make ciphertexts differ
    assert len(wire) == len(other.model_dump_json())
    assert set(json.loads(wire)) == {"version", "session", "round", "party", "kind", "reason", "repetitions",
                                     "curator_key", "ephemeral_key", "ciphertext", "nonce", "signature"}
    assert _ballot(bit).ciphertext != ballot.ciphertext


@pytest.mark.parametrize("change", [dict(round=3), dict(party=6), dict(repetitions=8), dict(session="s-2")])
def test_a_ciphertext_moved_to_another_slot_or_header_fails(change: dict[str, object]) -> None:
    ballot = _ballot(1)
    moved = ballot.model_copy(update=change)  # same ciphertext under another header
    with pytest.raises(ProtocolViolation) as info:
        moved.open(CURATOR_PRIVATE)
    assert info.value.reason == "decrypt"
    assert not verify_message(moved, SIGN_PUBLIC)  # and the signature no longer covers it


def test_sealed_to_another_key_fails() -> None:
    _, other_public = generate_x25519_key_pair()
    ballot = _ballot(0, curator_key=other_public)
    with pytest.raises(ProtocolViolation) as info:
        ballot.open(CURATOR_PRIVATE)
    assert info.value.reason == "decrypt"


def test_schema_rejects_malformed_ballots() -> None:
    good = json.loads(_ballot(1).model_dump_json())
    for change in [dict(ciphertext="AAAA"), dict(ephemeral_key="!!"), dict(kind="abstain"),
                   dict(reason="x"), dict(bit=1), dict(curator_key="")]:
        with pytest.raises(ValidationError):
            SealedBallot.model_validate_json(json.dumps({**good, **change}))
    with pytest.raises(ProtocolViolation):
        _ballot(2)
    abstain = SealedBallot.signed(SIGN_PRIVATE, curator_key=CURATOR_PUBLIC, session="s", round=0, party=0,
                                  repetitions=1, reason="did-not-vote")
    assert abstain.kind == "abstain" and abstain.ciphertext == ""
    with pytest.raises(ProtocolViolation):
        abstain.open(CURATOR_PRIVATE)


def test_announcement_and_release() -> None:
    announcement = CuratorAnnouncement.signed(SIGN_PRIVATE, session="s", kind="round", round=1, repetitions=3,
                                              curator_key=CURATOR_PUBLIC)
    assert announcement.key_bytes == CURATOR_PUBLIC and verify_message(announcement, SIGN_PUBLIC)
    with pytest.raises(ValidationError):
        CuratorAnnouncement.model_validate_json(announcement.model_dump_json().replace(
            announcement.curator_key, ""))
    outputs = np.array([1, 0, 0, 1, 1], dtype=np.int64)
    release = CuratorRelease.signed(SIGN_PRIVATE, session="s", round=1, voters=4, outputs=outputs)
    assert np.array_equal(CuratorRelease.model_validate_json(release.model_dump_json()).output_array(), outputs)
    with pytest.raises(ValidationError):
        CuratorRelease.signed(SIGN_PRIVATE, session="s", round=1, voters=4, outputs=np.array([2]))


def test_session_keys_match_the_documented_derivation_and_exchange_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SessionSealer's ciphertexts decrypt with X25519 + HKDF-SHA256(salt = E || C, info = context, 32 bytes)
    + ChaCha20-Poly1305 (nonce in front) written out here; 5 messages of one context cost the sealer and the
    opener one X25519 exchange each; every message opens."""
    exchanges = []
    real = sealed_module._exchange
    monkeypatch.setattr(sealed_module, "_exchange", lambda *a: exchanges.append(a[2]) or real(*a))
    sealer, opener = SessionSealer(), SessionOpener(CURATOR_PRIVATE)
    messages = [sealer.seal(CURATOR_PUBLIC, bytes([r]) * 12, context=b"s|7|1", associated_data=f"r{r}".encode())
                for r in range(5)]
    assert len({e for e, _ in messages}) == 1 and len({c[:12] for _, c in messages}) == 5
    ephemeral = messages[0][0]
    shared = X25519PrivateKey.from_private_bytes(CURATOR_PRIVATE).exchange(X25519PublicKey.from_public_bytes(ephemeral))
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=ephemeral + CURATOR_PUBLIC, info=b"s|7|1").derive(shared)
    for r, (e, sealed) in enumerate(messages):
        assert len(sealed) == 12 + 12 + 16
        assert ChaCha20Poly1305(key).decrypt(sealed[:12], sealed[12:], f"r{r}".encode()) == bytes([r]) * 12
        assert opener.open(e, sealed, context=b"s|7|1", associated_data=f"r{r}".encode()) == bytes([r]) * 12
    assert exchanges == ["recipient key", "sender key"]


def test_session_messages_refuse_tampering_replay_and_other_keys() -> None:
    """A flipped byte anywhere (nonce, ciphertext, tag), another slot's associated data (a replay into another
    round), another context (another party or server), another recipient, a forged or low-order E: all fail
    authentication; none of them evicts the sender's cached key, so the genuine message still opens."""
    sealer, opener = SessionSealer(), SessionOpener(CURATOR_PRIVATE)
    ephemeral, sealed = sealer.seal(CURATOR_PUBLIC, b"share", context=b"ctx", associated_data=b"round 1")
    assert opener.open(ephemeral, sealed, context=b"ctx", associated_data=b"round 1") == b"share"
    other_private, _ = generate_x25519_key_pair()
    forged_e = generate_x25519_key_pair()[1]
    attempts = [(opener, ephemeral, _flip(sealed, i), b"ctx", b"round 1") for i in range(len(sealed))]
    attempts += [(opener, ephemeral, sealed, b"ctx", b"round 2"), (opener, ephemeral, sealed, b"ctz", b"round 1"),
                 (opener, ephemeral, sealed[:11], b"ctx", b"round 1"),
                 (SessionOpener(other_private), ephemeral, sealed, b"ctx", b"round 1"),
                 (opener, forged_e, sealed, b"ctx", b"round 1"), (opener, bytes(32), sealed, b"ctx", b"round 1"),
                 (opener, ephemeral[:31], sealed, b"ctx", b"round 1")]
    for who, e, data, ctx, ad in attempts:
        with pytest.raises(ProtocolViolation) as info:
            who.open(e, data, context=ctx, associated_data=ad)
        assert info.value.reason == "decrypt"
    assert opener.open(ephemeral, sealed, context=b"ctx", associated_data=b"round 1") == b"share"
    # a restarted sender (a new key) in the same context replaces the cached key
    again = SessionSealer().seal(CURATOR_PUBLIC, b"later", context=b"ctx", associated_data=b"round 3")
    assert opener.open(*again, context=b"ctx", associated_data=b"round 3") == b"later"


def test_a_key_expected_ahead_opens_every_message_with_no_exchange_in_the_message_path(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SessionOpener.expect(E) does the one X25519 exchange of a context ahead: the messages then open with
    none, tampering and another round's message still fail; the same key expected again changes nothing (False);
    a low-order key expected evicts nothing; a newer key (a restarted sender's) replaces the context's key."""
    exchanges = []
    real = sealed_module._exchange
    monkeypatch.setattr(sealed_module, "_exchange", lambda *a: exchanges.append(a[2]) or real(*a))
    sealer, opener = SessionSealer(), SessionOpener(CURATOR_PRIVATE)
    assert opener.expect(sealer.public_key, context=b"ctx") is True
    assert exchanges == ["sender key"]
    messages = [sealer.seal(CURATOR_PUBLIC, bytes([r]) * 4, context=b"ctx", associated_data=f"r{r}".encode())
                for r in range(3)]
    assert {e for e, _ in messages} == {sealer.public_key}
    exchanges.clear()
    for r, (e, sealed) in enumerate(messages):
        assert opener.open(e, sealed, context=b"ctx", associated_data=f"r{r}".encode()) == bytes([r]) * 4
    assert exchanges == []  # every message opened under the key derived ahead
    e, sealed = messages[0]
    for data, ad in [(_flip(sealed, 0), b"r0"), (_flip(sealed, 20), b"r0"), (_flip(sealed, len(sealed) - 1), b"r0"),
                     (sealed, b"r1")]:
        with pytest.raises(ProtocolViolation, match="authentication failed"):
            opener.open(e, data, context=b"ctx", associated_data=ad)
    assert opener.expect(e, context=b"ctx") is False and opener.expect(bytes(32), context=b"ctx") is False
    assert exchanges == ["sender key"]  # the low-order key's exchange, refused
    exchanges.clear()
    assert opener.open(e, sealed, context=b"ctx", associated_data=b"r0") == b"\x00" * 4
    assert exchanges == []
    restarted = SessionSealer()
    assert opener.expect(restarted.public_key, context=b"ctx") is True
    exchanges.clear()
    message = restarted.seal(CURATOR_PUBLIC, b"later", context=b"ctx", associated_data=b"r5")
    assert opener.open(*message, context=b"ctx", associated_data=b"r5") == b"later" and exchanges == ["recipient key"]


def test_a_forged_or_low_order_expected_key_caches_nothing_or_evicts_nothing() -> None:
    """A low-order (all-zero) or malformed key expected ahead is not cached (False); a forged key expected
    ahead (not the sender's) only costs the sender's first message its own exchange: it opens, and its key
    replaces the forged one; a message under the forged key fails."""
    sealer, opener = SessionSealer(), SessionOpener(CURATOR_PRIVATE)
    assert opener.expect(bytes(32), context=b"a") is False and opener.expect(b"short", context=b"a") is False
    e, sealed = sealer.seal(CURATOR_PUBLIC, b"share", context=b"a", associated_data=b"r0")
    assert opener.open(e, sealed, context=b"a", associated_data=b"r0") == b"share"
    forger = SessionSealer()
    assert opener.expect(forger.public_key, context=b"b") is True
    e, sealed = sealer.seal(CURATOR_PUBLIC, b"share", context=b"b", associated_data=b"r0")
    assert opener.open(e, sealed, context=b"b", associated_data=b"r0") == b"share"
    with pytest.raises(ProtocolViolation, match="authentication failed"):  # sealed by the forger, not the sender
        opener.open(forger.public_key, sealed, context=b"b", associated_data=b"r0")
    assert opener.open(e, sealed, context=b"b", associated_data=b"r0") == b"share"
