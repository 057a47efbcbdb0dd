"""An mpc party's answer as it goes on the wire: what the broker and one compute server receive does not
depend on the vote; T + 1 servers recover it (so the check could fail); abstentions and the repetition cap.

The shares come from the OS CSPRNG (they are secrets, never seeded), so the statistical test here is
unseeded and fails a correct implementation with probability at most its stated alpha.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from mpdp.analysis.privacy.accounting import Budget
from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.ballots.party import BallotParty
from mpdp.parties.mpc.party import SharedBallots
from mpdp.parties.mpc.sealed_shares import ShareOpener
from mpdp.parties.mpc.sharing import field_modulus, recombine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.session_files import ServerRoster
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

ALPHA = 1e-3
BUCKETS = 16
SAMPLES = 300
SESSION = "mpc-party"


def _party(bits: list[int], max_repetitions: int | None = None,
           servers: ServerRoster | None = None) -> tuple[BallotParty[MpcAnnouncement], bytes]:
    private, public = generate_key_pair()
    spec = PartySpec(0, np.array(bits, dtype=np.int8), RandomizedResponse(1.0), private,
                     max_repetitions=max_repetitions)
    party = BallotParty(spec, InMemoryBroker(), Topics(SESSION), generate_key_pair()[1], SharedBallots(servers),
                        idle_timeout=1.0)
    return party, public


def _announcement(round_index: int, server_keys: list[bytes], threshold: int, repetitions: int = 5) -> MpcAnnouncement:
    return MpcAnnouncement.signed(generate_key_pair()[0], session=SESSION, kind="round", round=round_index,
                                  repetitions=repetitions, server_keys=server_keys, threshold=threshold)


def _open(ballot: SharedBallot, keys: list[tuple[bytes, bytes]], server: int) -> int:
    opener = ShareOpener(keys[server][0], session=SESSION, server=server)
    return opener.open(ballot.sealed_pairs()[server], round_index=ballot.round, party=ballot.party)


def test_broker_and_one_servers_view_do_not_depend_on_the_vote() -> None:
    """m = 3, T = 1. A party voting 0 and one voting 1, SAMPLES ballots each. The broker's view: signed JSON
    of one length, equal headers. Server 0's view: its opened shares, bucketed, uniform (chi-square at
    alpha = 1e-3) and the same for both votes (chi-square homogeneity at alpha = 1e-3). Servers 0 and 2
    together recover the vote in every ballot."""
    keys = [generate_x25519_key_pair() for _ in range(3)]
    announcement = _announcement(0, [public for _, public in keys], 1)
    p = field_modulus()
    counts = np.zeros((2, BUCKETS), dtype=np.int64)
    lengths, headers = set(), []
    for vote in (0, 1):
        party, public = _party([vote])
        for _ in range(SAMPLES):
            ballot = party.respond(announcement)
            assert ballot.kind == "sealed" and verify_message(ballot, public)
            text = ballot.model_dump_json()
            lengths.add(len(text))
            share0 = _open(ballot, keys, 0)
            counts[vote, share0 * BUCKETS // p] += 1
            assert recombine({0: [share0], 2: [_open(ballot, keys, 2)]}) == [vote]
        fields = json.loads(text)
        for name in ("shares", "nonce", "signature"):
            fields.pop(name)
        headers.append(fields)
    assert len(lengths) == 1 and headers[0] == headers[1]
    for row in counts:
        assert stats.chisquare(row).pvalue >= ALPHA
    assert stats.chi2_contingency(counts).pvalue >= ALPHA


def test_abstentions_and_the_repetition_cap() -> None:
    keys = [generate_x25519_key_pair()[1] for _ in range(5)]
    party, _ = _party([-1, 1], max_repetitions=4)
    did_not_vote = party.respond(_announcement(0, keys, 2, repetitions=4))
    assert (did_not_vote.kind, did_not_vote.reason, did_not_vote.shares) == ("abstain", "did-not-vote", [])
    capped = party.respond(_announcement(1, keys, 2, repetitions=5))
    assert (capped.kind, capped.reason) == ("abstain", "policy")
    voted = party.respond(_announcement(1, keys, 2, repetitions=4))
    assert voted.kind == "sealed" and len(voted.shares) == 5


@pytest.mark.parametrize("changes", [{"threshold": 2}, {"server_keys": []}, {"kind": "end"}])
def test_announcements_need_keys_and_an_honest_majority(changes: dict[str, object]) -> None:
    """A round with 3 servers and T = 2 (2T >= m), no servers, or an end that lists keys is refused."""
    good = _announcement(0, [generate_x25519_key_pair()[1] for _ in range(3)], 1).model_dump()
    good.update(changes)
    with pytest.raises(ValueError):
        MpcAnnouncement.model_validate(good)


def test_a_ballot_with_ragged_or_missing_shares_is_refused() -> None:
    keys = [generate_x25519_key_pair() for _ in range(3)]
    party, _ = _party([1])
    fields = party.respond(_announcement(0, [public for _, public in keys], 1)).model_dump()
    for bad in ({"shares": []}, {"shares": fields["shares"][:2] + [(fields["shares"][2][0], "AAAA")]},
                {"reason": "policy"}):
        with pytest.raises(ValueError):
            SharedBallot.model_validate({**fields, **bad})


def test_a_deployed_party_seals_to_the_roster_servers_not_the_announced_ones() -> None:
    """A coordinator announcing keys of its own (and T = 0, so one share would be the bit) gets shares sealed
    to the roster's servers with the roster's T: its keys open nothing; the roster's servers 0 and 2 recover
    the vote, and server 0 alone sees a share that is not the vote in general."""
    roster_keys = [generate_x25519_key_pair() for _ in range(3)]
    servers = ServerRoster(1, ("127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"), tuple(k[1] for k in roster_keys),
                           tuple(generate_key_pair()[1] for _ in range(3)))
    rogue = [generate_x25519_key_pair() for _ in range(3)]
    party, _ = _party([1] * 40, servers=servers)
    shares0 = []
    for r in range(40):
        ballot = party.respond(_announcement(r, [public for _, public in rogue], 0, repetitions=1))
        assert ballot.kind == "sealed" and len(ballot.shares) == 3
        with pytest.raises(ProtocolViolation):
            _open(ballot, rogue, 0)
        shares0.append(_open(ballot, roster_keys, 0))
        assert recombine({0: [shares0[-1]], 2: [_open(ballot, roster_keys, 2)]}) == [1]
    assert len(set(shares0)) == 40  # degree-1 shares of 1: fresh uniform values, never the bit itself


def test_the_budget_and_the_ledger_of_an_mpc_party() -> None:
    """epsilon 1 per release; budget (2.5, 1e-3): rounds 0 and 1 (one release each) fit, round 2 would take
    the party past 2.5 (three releases: at most 3 by basic composition, and at least 2.9 by the exact
    optimum at delta_tilde 1e-6, whose first improvement over 3 needs far more delta), so it abstains
    budget-exhausted; answering round 1 again charges nothing new."""
    keys = [generate_x25519_key_pair()[1] for _ in range(3)]
    private, _ = generate_key_pair()
    spec = PartySpec(0, np.array([1, 0, 1], dtype=np.int8), RandomizedResponse(1.0), private,
                     budget=Budget(2.5, 1e-3))
    party = BallotParty(spec, InMemoryBroker(), Topics(SESSION), generate_key_pair()[1], SharedBallots(),
                        idle_timeout=1.0)
    kinds = [party.respond(_announcement(r, keys, 1, repetitions=1)).kind for r in (0, 1, 1)]
    assert kinds == ["sealed"] * 3 and party.ledger.rounds == (0, 1)
    refused = party.respond(_announcement(2, keys, 1, repetitions=1))
    assert (refused.kind, refused.reason) == ("abstain", "budget-exhausted") and party.ledger.rounds == (0, 1)
