"""Three MPyC compute servers as real processes: the released distribution is R'(s) at every count, one
MPyC session serves many rounds, and a missing server fails the round loudly with no process left behind.

The servers' random bits are secret (MPyC's pseudorandom secret sharing, keys from the OS CSPRNG; MPyC
offers no seed), so these statistical tests cannot be seeded: each fails a correct implementation with
probability at most its stated alpha.
"""

from __future__ import annotations

import contextlib
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.mpc_messages import SumRelease
from mpdp.parties.mpc.cluster import ServerCluster, secure_release, server_jobs
from mpdp.parties.mpc.sealed_shares import ShareSealer
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.randomization.threshold_release import geometric_table, release_table
from tests.frequencies import assert_counts_fit, assert_proportion_fits

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


def test_released_distribution_is_the_central_mechanisms_at_every_count() -> None:
    """k = 5, eps = 1, one server session, one round per count s = 0..5 with 150 secure releases each:
    R(2) = 0.269, R(3) = 0.731 (001's optimal mechanism), R(0) = 1 - R(5) small. Exact binomial test of
    each count against R'(s) = N(s)/2^40 at alpha = 1e-3 / 6 (Bonferroni: family-wise 1e-3); the releases
    at s = 2 and s = 3 must also differ (the test sees the count)."""
    table = release_table(central_majority_mechanism(VOTERS, 1.0, 0.0).release_one)
    before = _children()
    ones = []
    sealers = [ShareSealer() for _ in range(VOTERS)]  # the parties' session keys: one exchange each, round 0
    with ServerCluster(3, 1) as cluster:
        for count in range(VOTERS + 1):
            bits = np.array([1] * count + [0] * (VOTERS - count), dtype=np.uint8)
            released, signed = cluster.release(server_jobs(bits, table, 150, 1, cluster.public_keys,
                                                           round_index=count, sealers=sealers))
            assert released.shape == (150,) and set(np.unique(released)) <= {0, 1} and len(signed) == 3
            assert_proportion_fits(int(released.sum()), 150, float(table.released_probability[count]),
                                   ALPHA / (VOTERS + 1))
            ones.append(int(released.sum()))
    assert ones[3] > ones[2]
    assert _children() <= before


def test_the_secure_sum_draws_the_geometric_mechanism() -> None:
    """sum, eps = 1, L = 6 (thresholds 24, 9, 3, 1: the integer table is exact, so the test is too), n = 4,
    one server session, counts s = 1 and s = 2, 160 noisy counts each (every cell expects >= 5): chi-square
    goodness of fit to clamp(s + Z, 0, 4) as drawn (GeometricTable.release_pmf) at alpha = 1e-3 / 2
    (Bonferroni)."""
    table = geometric_table(1.0, 6)
    with ServerCluster(3, 1) as cluster:
        for count in (1, 2):
            bits = np.array([1] * count + [0] * (4 - count), dtype=np.uint8)
            released, signed = cluster.release(server_jobs(bits, table, 160, 1, cluster.public_keys,
                                                           round_index=count))
            assert released.shape == (160,) and released.min() >= 0 and released.max() <= 4
            assert SumRelease.model_validate_json(signed[0]).voters == 4
            assert_counts_fit(np.bincount(released, minlength=5), table.release_pmf(count, 4), ALPHA / 2)


def _listening(pids: set[int]) -> set[str]:
    """The local addresses (hex, as /proc/net/tcp{,6} writes them) of the TCP sockets in LISTEN state that
    the processes ``pids`` hold."""
    inodes = set()
    for pid in pids:
        for fd in Path(f"/proc/{pid}/fd").glob("*"):
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:
                found.add(fields[1].split(":")[0])
    return found


def test_a_missing_server_fails_the_round_and_leaves_no_process() -> None:
    """Server 2 never starts: server 1 keeps listening for the others meanwhile, on loopback only (its
    address, localhost), not on every interface (issue 23); the round fails and no process is left."""
    table = release_table(central_majority_mechanism(VOTERS, 1.0, 0.0).release_one)
    before = _children()
    loopback = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1, ::1
    seen: set[str] = set()
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(secure_release, np.ones(VOTERS, dtype=np.uint8), table, 1, deadline=8.0,
                          missing=frozenset({2}))
        while not run.done():
            seen |= _listening(_children() - before)
            time.sleep(0.1)
        with pytest.raises(WorkerError, match="did not finish"):
            run.result()
    assert seen and seen <= loopback, seen
    assert _children() <= before
