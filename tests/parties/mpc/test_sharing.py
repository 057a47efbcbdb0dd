"""Shamir shares of the bits, and what one server receives: independent of the votes; T + 1 reconstruct.

The shares come from the OS CSPRNG (they are secrets, never seeded), so the statistical tests here are
unseeded and fail a correct implementation with probability at most their stated alpha.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.parties.mpc.cluster import server_jobs
from mpdp.parties.mpc.sealed_shares import ShareOpener, ShareSealer, seal_shares
from mpdp.parties.mpc.server import ServerKeys, expect_keys, open_shares, share_opener
from mpdp.parties.mpc.sharing import field_modulus, recombine, share_bits
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.randomization.threshold_release import release_table

ALPHA = 1e-3
BUCKETS = 16


def _keys(pairs: list[tuple[bytes, bytes]], server: int) -> ServerKeys:
    """Server ``server``'s keys (its X25519 private key; no signing key needed here)."""
    return ServerKeys(field_modulus(), "local", server, pairs[server][0].hex(), "")


def _bucket(values: list[int]) -> np.ndarray:
    """Counts of share values in BUCKETS equal slices of 0..p-1 (a uniform share fills them evenly)."""
    p = field_modulus()
    return np.bincount([v * BUCKETS // p for v in values], minlength=BUCKETS)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(0, 1), min_size=1, max_size=20), st.sampled_from([(1, 0), (3, 1), (5, 2), (7, 3)]))
def test_any_threshold_plus_one_servers_reconstruct(bits: list[int], shape: tuple[int, int]) -> None:
    servers, threshold = shape
    shares = share_bits(np.array(bits, dtype=np.uint8), servers, threshold)
    for subset in itertools.combinations(range(servers), threshold + 1):
        assert recombine({i: shares[i] for i in subset}) == bits


def test_threshold_servers_do_not_reconstruct() -> None:
    """T = 2 of m = 5: interpolating 2 points at 0 gives a value spread over the field, not the bit."""
    shares = share_bits(np.ones(200, dtype=np.uint8), 5, 2)
    guesses = recombine({0: shares[0], 3: shares[3]})
    assert sum(g in (0, 1) for g in guesses) <= 1


def test_one_servers_view_does_not_depend_on_the_votes() -> None:
    """Server 0 of m = 3, T = 1, for k = 11 voters with 0 YES and with 11 YES (counts 0 and 11).

    Everything but the sealed shares is the same in both views; the shares server 0 opens with its key
    in 200 runs each, bucketed, are
    uniform (chi-square at alpha = 1e-3) and the two vote vectors give the same distribution (chi-square
    test of homogeneity at alpha = 1e-3). Server 0 and 1 together (T + 1) recover the votes: the check of
    the views could fail."""
    table = release_table(central_majority_mechanism(11, 1.0, 0.0).release_one)
    keys = [generate_x25519_key_pair() for _ in range(3)]
    publics = [public for _, public in keys]
    views: dict[int, list[int]] = {0: [], 1: []}
    for vote in (0, 1):
        bits = np.full(11, vote, dtype=np.uint8)
        for _ in range(200):
            jobs = server_jobs(bits, table, 5, 1, publics)
            views[vote].extend(open_shares(share_opener(_keys(keys, 0)), jobs[0]))
            assert recombine({i: open_shares(share_opener(_keys(keys, i)), jobs[i]) for i in (0, 1)}) == list(bits)
        assert replace(jobs[0], sealed=[]) == replace(server_jobs(1 - bits, table, 5, 1, publics)[0], sealed=[])
    counts = np.stack([_bucket(views[0]), _bucket(views[1])])
    for row in counts:
        assert stats.chisquare(row).pvalue >= ALPHA
    assert stats.chi2_contingency(counts).pvalue >= ALPHA


@pytest.mark.parametrize(("bits", "servers", "threshold"), [([2], 3, 1), ([1], 0, 0), ([1], 3, 2), ([1], 4, 2)])
def test_bad_sharing_input_is_refused(bits: list[int], servers: int, threshold: int) -> None:
    with pytest.raises(ParameterError):
        share_bits(np.array(bits), servers, threshold)


def test_jobs_need_a_table_of_k_plus_one_entries() -> None:
    keys = [generate_x25519_key_pair()[1] for _ in range(3)]
    with pytest.raises(ParameterError, match="n \\+ 1 = 4"):
        server_jobs(np.ones(3, dtype=np.uint8), release_table(np.array([0.0, 1.0])), 1, 1, keys)


def test_a_server_opens_only_its_own_share_in_its_own_slot() -> None:
    """Server 0's key opens its ciphertext; server 1's ciphertext (misdirected), another party's slot, another
    round's (replayed) or a flipped byte (forged) fail authentication."""
    keys = [generate_x25519_key_pair() for _ in range(3)]
    job0, job1, _ = server_jobs(np.array([1, 0], dtype=np.uint8), release_table(np.array([0.0, 0.5, 1.0])),
                                1, 1, [public for _, public in keys])
    opener = ShareOpener(keys[0][0], session="local", server=0)
    own = (bytes.fromhex(job0.sealed[0][0]), bytes.fromhex(job0.sealed[0][1]))
    other = (bytes.fromhex(job1.sealed[0][0]), bytes.fromhex(job1.sealed[0][1]))
    assert opener.open(own, round_index=0, party=0) == open_shares(share_opener(_keys(keys, 0)), job0)[0]
    tampered = (own[0], own[1][:-1] + bytes([own[1][-1] ^ 1]))
    as_server_1 = ShareOpener(keys[0][0], session="local", server=1)
    other_session = ShareOpener(keys[0][0], session="other", server=0)
    for who, sealed, round_index, party in ((opener, other, 0, 0), (as_server_1, other, 0, 0), (opener, own, 0, 1),
                                            (opener, own, 1, 0), (opener, tampered, 0, 0), (other_session, own, 0, 0)):
        with pytest.raises(ProtocolViolation, match="decrypt"):
            who.open(sealed, round_index=round_index, party=party)
    assert opener.open(own, round_index=0, party=0) == open_shares(share_opener(_keys(keys, 0)), job0)[0]


def test_session_keys_over_rounds_open_exactly_and_refuse_replays() -> None:
    """One sealer per party over 4 rounds, one opener per server: every round's shares open to the sealed
    values (T + 1 = 2 servers recombine the bits exactly), a round's ciphertext replayed as another round is
    refused, a round sealed again (fresh shares, fresh nonces) opens to its new shares, and a restarted party
    (a fresh sealer) opens too."""
    keys = [generate_x25519_key_pair() for _ in range(3)]
    publics = [public for _, public in keys]
    sealers = [ShareSealer() for _ in range(4)]
    openers = [share_opener(_keys(keys, i)) for i in range(3)]
    rng = np.random.default_rng(23)
    table = release_table(np.linspace(0.0, 1.0, 5))
    earlier = None
    for r in range(4):
        bits = rng.integers(0, 2, 4).astype(np.uint8)
        jobs = server_jobs(bits, table, 1, 1, publics, round_index=r, sealers=sealers)
        # one session key per party: the same in every server's job and every round, another for each party
        assert [[job.sealed[j][0] for j in range(4)] for job in jobs] == [[e for e, _ in (earlier or jobs[0]).sealed]] * 3
        assert len({e for e, _ in jobs[0].sealed}) == 4
        assert recombine({i: open_shares(openers[i], jobs[i]) for i in (0, 2)}) == bits.tolist()
        if earlier is not None:
            with pytest.raises(ProtocolViolation, match="decrypt"):
                open_shares(openers[0], replace(earlier, round=r))
        earlier = jobs[0]
    again = server_jobs(np.ones(4, dtype=np.uint8), table, 1, 1, publics, round_index=3, sealers=sealers)
    assert open_shares(openers[0], again[0]) != open_shares(openers[0], earlier)  # fresh shares and nonces
    assert recombine({i: open_shares(openers[i], again[i]) for i in (1, 2)}) == [1] * 4
    restarted = seal_shares(ShareSealer(), [5, 6, 7], publics, session="local", round_index=4, party=1)
    assert [openers[i].open(restarted[i], round_index=4, party=1) for i in range(3)] == [5, 6, 7]
    with pytest.raises(ParameterError, match="one sealer per participant"):
        server_jobs(np.ones(3, dtype=np.uint8), release_table(np.linspace(0.0, 1.0, 4)), 1, 1, publics,
                    sealers=sealers)


def test_keys_expected_ahead_open_every_round_and_any_two_servers_recombine(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The parties' session keys handed to each server ahead (expect_keys, a file as ServerCluster.expect writes
    it; one of them low-order, one malformed, one party's key forged): 6 of the 8 keys are cached (all but the low-order and the malformed one),
    each server then opens rounds 0 and 1 with one X25519 exchange per party whose ready key was not its real
    one (the forged party, the low-order one) and none for the others; every pair of the 3 servers recombines
    the bits exactly; a round-0 ciphertext replayed as round 1 fails."""
    from mpdp.broker import sealed as sealed_module

    keys = [generate_x25519_key_pair() for _ in range(3)]
    publics = [public for _, public in keys]
    sealers = [ShareSealer() for _ in range(6)]
    announced = [sealer.public_key.hex() for sealer in sealers]
    announced[3] = ShareSealer().public_key.hex()  # forged: not party 3's key
    announced[4] = bytes(32).hex()  # low-order
    table = {"parties": list(range(6)) + [9, 10], "keys": announced + [publics[0].hex(), "00" * 31]}
    path = tmp_path / "party-keys-0.json"
    path.write_text(json.dumps(table), encoding="utf-8")
    openers = [share_opener(_keys(keys, i)) for i in range(3)]
    assert [expect_keys(opener, path)["expected"] for opener in openers] == [6, 6, 6]  # 0-3, 5 and 9 (a valid key)
    exchanges = []
    real = sealed_module._exchange
    monkeypatch.setattr(sealed_module, "_exchange", lambda *a: exchanges.append(a[2]) or real(*a))
    rng = np.random.default_rng(5)
    earlier = None
    for r in range(2):
        bits = rng.integers(0, 2, 6).astype(np.uint8)
        jobs = server_jobs(bits, release_table(np.linspace(0.0, 1.0, 7)), 1, 1, publics, round_index=r,
                           sealers=sealers)
        exchanges.clear()
        opened = [open_shares(openers[i], jobs[i]) for i in range(3)]
        assert exchanges.count("sender key") == (2 * 3 if r == 0 else 0)  # parties 3 and 4, at each server, once
        for pair in itertools.combinations(range(3), 2):
            assert recombine({i: opened[i] for i in pair}) == bits.tolist()
        if earlier is not None:
            with pytest.raises(ProtocolViolation, match="decrypt"):
                open_shares(openers[0], replace(earlier, round=r))
        earlier = jobs[0]
