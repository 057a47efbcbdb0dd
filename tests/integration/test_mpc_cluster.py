"""Three MPyC compute servers as real processes: the released distribution is R'(s), and a missing server
fails the round loudly with no process left behind.

The servers' random bits are secret (MPyC's pseudorandom secret sharing, keys from the OS CSPRNG), so these
statistical tests are unseeded: each fails a correct implementation with probability at most ALPHA.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from mpdp.parties.mpc.cluster import secure_release
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.majority_mechanism import central_majority_mechanism
from mpdp.protocols.threshold_release import release_table
from tests.frequencies import assert_proportion_fits

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ALPHA = 1e-3
VOTERS = 5


def _children() -> set[int]:
    """Process ids whose parent is this test process (from /proc)."""
    me = str(os.getpid())
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me:
            found.add(int(stat.parent.name))
    return found


@pytest.mark.parametrize("count", [2, 3])
def test_released_distribution_is_the_central_mechanisms(count: int) -> None:
    """k = 5, eps = 1: R(2) = 0.269, R(3) = 0.731 (001's optimal mechanism); 150 secure releases each,
    exact binomial test against R'(s) = N(s)/2^40 at alpha = 1e-3."""
    table = release_table(central_majority_mechanism(VOTERS, 1.0, 0.0).release_one)
    bits = np.array([1] * count + [0] * (VOTERS - count), dtype=np.uint8)
    before = _children()
    released = secure_release(bits, table, 150)
    assert released.shape == (150,) and set(np.unique(released)) <= {0, 1}
    assert_proportion_fits(int(released.sum()), 150, float(table.released_probability[count]), ALPHA)
    assert _children() <= before


def test_a_missing_server_fails_the_round_and_leaves_no_process() -> None:
    table = release_table(central_majority_mechanism(VOTERS, 1.0, 0.0).release_one)
    before = _children()
    with pytest.raises(WorkerError, match="did not finish"):
        secure_release(np.ones(VOTERS, dtype=np.uint8), table, 1, deadline=8.0, missing=frozenset({2}))
    assert _children() <= before
