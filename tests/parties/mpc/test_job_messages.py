"""The errors of a malformed mpc round job, and of shares sealed to the wrong number of servers, say "1 party",
"1 entry", "1 sealed share", "1 server key" for a count of one (:func:`mpdp.protocols.numerics.cost.noun`), with
the numbers of what was refused."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.parties.mpc.cluster import round_jobs
from mpdp.parties.mpc.sealed_shares import ShareSealer, seal_shares
from mpdp.parties.mpc.server import RoundJob
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.randomization.threshold_release import release_table

_SHARES = (b"\x01" * 32, b"\x02" * 48)


def test_the_cluster_names_one_sealing_party_in_the_singular() -> None:
    """Two participants, a table of 3 entries, one participant's shares (3 servers): refused for the 1 party."""
    with pytest.raises(ParameterError) as refused:
        round_jobs(0, [4, 9], [[_SHARES] * 3], release_table(np.array([0.0, 0.5, 1.0])), 1)
    assert str(refused.value) == ("sealed='1 party, [3] shares each' is not allowed: one share per server for every "
                                  "participant")
    with pytest.raises(ParameterError, match=r"^sealed='3 parties, \[2\] shares each'"):
        round_jobs(0, [4, 9], [[_SHARES] * 2] * 3, release_table(np.array([0.0, 0.5, 1.0])), 1)


def test_the_cluster_names_a_table_of_one_entry_in_the_singular() -> None:
    """No participant: n + 1 = 1 entry; 3 participants: 4 entries."""
    with pytest.raises(ParameterError) as refused:
        round_jobs(0, [], [], release_table(np.array([0.0, 1.0])), 1)
    assert str(refused.value) == "table=0 is not allowed: a table of n + 1 = 1 entry for n >= 1 participants"
    with pytest.raises(ParameterError, match=r"n \+ 1 = 4 entries for"):
        round_jobs(0, [1, 2, 3], [[_SHARES]] * 3, release_table(np.array([0.0, 1.0])), 1)


def test_a_server_names_one_party_and_one_share_in_the_singular() -> None:
    """Party 0 alone, no sealed share: 1 party, 1 sealed share and a table of 2 entries were expected."""
    job = {"round": 2, "parties": [0], "sealed": [], "scaled": [0, 1 << 40], "random_bits": 40, "releases": 1}
    with pytest.raises(ValueError) as refused:
        RoundJob.from_fields(job)
    assert str(refused.value) == ("round 2: for 1 party, 1 sealed share, a table of 2 entries and releases >= 1 "
                                  "expected, got 0, 2, 1")
    summed = {**job, "parties": [0, 1], "sealed": [["00", "11"]], "scaled": [], "function": "sum"}
    with pytest.raises(ValueError, match="^round 2: for 2 parties, 2 sealed shares, a table of 0 entries and "
                                         "releases >= 1 expected, got 1, 0, 1$"):
        RoundJob.from_fields(summed)


@pytest.mark.parametrize(("shares", "keys", "text"), [([5], 3, "1 share for 3 server keys"),
                                                      ([5, 6], 1, "2 shares for 1 server key")])
def test_shares_for_another_number_of_servers_are_counted_in_words(shares: list[int], keys: int, text: str) -> None:
    publics = [generate_x25519_key_pair()[1] for _ in range(keys)]
    with pytest.raises(ProtocolViolation) as refused:
        seal_shares(ShareSealer(), shares, publics, session="s", round_index=0, party=0)
    assert str(refused.value) == f"plaintext: {text}"
