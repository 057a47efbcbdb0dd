"""The errors of a malformed mpc round job say "1 party", "1 entry", "1 sealed share" for a count of one
(:func:`mpdp.protocols.numerics.cost.noun`), with the numbers of the job that was refused."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.parties.mpc.cluster import round_jobs
from mpdp.parties.mpc.server import RoundJob
from mpdp.protocols.errors import ParameterError
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
