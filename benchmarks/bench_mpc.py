"""Secure multi-party release of the optimal central majority mechanism (issue 14): cost per round and accuracy.

Part 1 (cost): one :class:`ServerCluster` (m MPyC server processes, one MPyC session) per (k, m), a warm-up
round, then ROUNDS timed rounds of one release each (a deployment releases once per round) for k = 100, 435,
1,000 participants and m = 3, 5 servers (T = (m - 1) // 2): wall seconds per round, bytes per round (each
party's signed SharedBallot JSON; each server's job in and its MPyC messages out), CPU seconds per server.
Baseline, same run, same votes: the trusted curator's per-round work (open k sealed ballots, one release).
Part 2 (``--house``): the House at epsilon = 1, 3 servers, 50 secure releases per bill in one session:
measured accuracy against the curator's exact theory R(s) (001), with the exact binomial test's p-value.
Usage: python benchmarks/bench_mpc.py [--house]
"""

from __future__ import annotations

import pathlib
import platform
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

import numpy as np  # noqa: E402
from scipy import stats  # noqa: E402

from mpdp.analysis.theory.central_vs_distributed import curator_accuracy_on_input, curator_release_probability  # noqa: E402
from mpdp.broker.curator_messages import SealedBallot  # noqa: E402
from mpdp.broker.mpc_messages import SharedBallot  # noqa: E402
from mpdp.broker.sealed import generate_x25519_key_pair  # noqa: E402
from mpdp.broker.signing import generate_key_pair  # noqa: E402
from mpdp.parties.mpc.cluster import ServerCluster, server_jobs  # noqa: E402
from mpdp.parties.mpc.sealed_shares import ShareSealer, seal_shares  # noqa: E402
from mpdp.parties.mpc.sharing import share_bits  # noqa: E402
from mpdp.parties.session.datasets import load_dataset  # noqa: E402
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism  # noqa: E402
from mpdp.protocols.randomization.secure import secure_bernoulli  # noqa: E402
from mpdp.protocols.randomization.threshold_release import release_table  # noqa: E402

EPSILON = 1.0
REPETITIONS = 50
ROUNDS = 3


def _party_bytes(servers: int, threshold: int, keys: list[bytes]) -> int:
    """Bytes of one party's signed SharedBallot JSON (the same for 0 and 1)."""
    shares = share_bits(np.array([1], dtype=np.uint8), servers, threshold)
    sealed = seal_shares(ShareSealer(), [row[0] for row in shares], keys, session="bench", round_index=0, party=0)
    return len(SharedBallot.signed(generate_key_pair()[0], session="bench", round=0, party=0, repetitions=1,
                                   shares=sealed).model_dump_json())


def _curator_seconds(bits: np.ndarray) -> float:
    """The curator's work of one round on the same votes: open k sealed ballots, draw one release."""
    private, public = generate_x25519_key_pair()
    signer = generate_key_pair()[0]
    ballots = [SealedBallot.signed(signer, curator_key=public, session="bench", round=0, party=j, repetitions=1,
                                   bit=int(b)) for j, b in enumerate(bits)]
    start = time.perf_counter()
    ones = sum(ballot.open(private) for ballot in ballots)
    secure_bernoulli(curator_release_probability(ones, len(bits), EPSILON, 0.0))
    return time.perf_counter() - start


def _cost() -> None:
    print(f"{ROUNDS} rounds of 1 release after a warm-up round; baseline: the curator's work per round")
    print(f"{'k':>6}{'m':>3}{'T':>3}{'s/round':>9}{'curator s':>10}{'B/party':>9}{'B in/server':>12}"
          f"{'B out/server':>13}{'CPU s/server':>13}{'start s':>9}")
    for k in (100, 435, 1000):
        table = release_table(central_majority_mechanism(k, EPSILON, 0.0).release_one)
        bits = (np.arange(k) % 2).astype(np.uint8)
        curator = _curator_seconds(bits)
        for m in (3, 5):
            t = (m - 1) // 2
            start = time.perf_counter()
            with ServerCluster(m, t) as cluster:
                cluster.release(server_jobs(bits, table, 1, t, cluster.public_keys, round_index=0))
                warm = time.perf_counter() - start
                seconds, sent, got, cpu = [], [], [], []
                for r in range(1, ROUNDS + 1):
                    jobs = server_jobs(bits, table, 1, t, cluster.public_keys, round_index=r)
                    begin = time.perf_counter()
                    cluster.release(jobs)
                    seconds.append(time.perf_counter() - begin)
                    got.append(np.mean([c.received for c in cluster.last_costs]))
                    sent.append(np.mean([c.sent for c in cluster.last_costs]))
                    cpu.append(np.mean([c.cpu for c in cluster.last_costs]))
                party = _party_bytes(m, t, cluster.public_keys)
            print(f"{k:>6}{m:>3}{t:>3}{np.median(seconds):>9.2f}{curator:>10.3f}{party:>9}{np.mean(got):>12.0f}"
                  f"{np.mean(sent):>13.0f}{np.mean(cpu):>13.3f}{warm:>9.2f}")


def _house() -> None:
    data = load_dataset("house-votes-84")
    print(f"House, epsilon = {EPSILON}, {REPETITIONS} secure releases per bill, 3 servers, one session")
    print(f"{'bill':<40}{'n':>5}{'s':>5}{'theory':>9}{'measured':>10}{'p-value':>9}{'time [s]':>10}")
    with ServerCluster(3, 1) as cluster:
        for r, name in enumerate(data.round_names):
            votes = data.bits[data.participants(r), r].astype(np.uint8)
            theory = curator_accuracy_on_input(votes, EPSILON, 0.0).value
            table = release_table(central_majority_mechanism(votes.size, EPSILON, 0.0).release_one)
            start = time.perf_counter()
            released, _ = cluster.release(server_jobs(votes, table, REPETITIONS, 1, cluster.public_keys,
                                                      round_index=r))
            seconds = time.perf_counter() - start
            correct = int(np.count_nonzero(released == int(2 * votes.sum() > votes.size)))
            p_value = stats.binomtest(correct, REPETITIONS, theory).pvalue
            print(f"{name[:39]:<40}{votes.size:>5}{int(votes.sum()):>5}{theory:>9.3f}"
                  f"{correct / REPETITIONS:>10.3f}{p_value:>9.3f}{seconds:>10.2f}")


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, python {platform.python_version()}")
    if "--house" in sys.argv[1:]:
        _house()
    else:
        _cost()


if __name__ == "__main__":
    main()
