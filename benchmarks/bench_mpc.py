"""Secure multi-party release of the optimal central majority mechanism (issue 14): cost and accuracy.

Part 1 (cost): wall seconds of one secure release (m MPyC server processes on this machine: start, share
input, count, unit vector, L = 40 random bits, one comparison, open, exit) and of a round with 50 releases,
for k = 100, 435, 1,000 participants and m = 3, 5 servers (T = (m - 1) // 2); bytes each party sends: its m
Shamir shares (field elements of p's byte length, before sealing).
Part 2 (``--house``): the House at epsilon = 1, 3 servers, 50 secure releases per bill: measured accuracy
against the curator's exact theory R(s) (001), with the exact binomial test's p-value per bill.
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

from mpdp.analysis.central_vs_distributed import curator_accuracy_on_input  # noqa: E402
from mpdp.parties.mpc.cluster import secure_release  # noqa: E402
from mpdp.parties.mpc.sharing import field_modulus  # noqa: E402
from mpdp.parties.session.datasets import load_dataset  # noqa: E402
from mpdp.protocols.majority_mechanism import central_majority_mechanism  # noqa: E402
from mpdp.protocols.threshold_release import release_table  # noqa: E402

EPSILON = 1.0
REPETITIONS = 50


def _cost() -> None:
    share_bytes = (field_modulus().bit_length() + 7) // 8
    print(f"{'k':>6}{'m':>4}{'T':>4}{'1 release [s]':>16}{'50 releases [s]':>18}{'bytes/party':>14}")
    for k in (100, 435, 1000):
        table = release_table(central_majority_mechanism(k, EPSILON, 0.0).release_one)
        bits = (np.arange(k) % 2).astype(np.uint8)
        for m in (3, 5):
            times = []
            for releases in (1, REPETITIONS):
                start = time.perf_counter()
                secure_release(bits, table, releases, servers=m, threshold=(m - 1) // 2)
                times.append(time.perf_counter() - start)
            print(f"{k:>6}{m:>4}{(m - 1) // 2:>4}{times[0]:>16.2f}{times[1]:>18.2f}{m * share_bytes:>14}")


def _house() -> None:
    data = load_dataset("house-votes-84")
    print(f"House, epsilon = {EPSILON}, {REPETITIONS} secure releases per bill, 3 servers")
    print(f"{'bill':<40}{'n':>5}{'s':>5}{'theory':>9}{'measured':>10}{'p-value':>9}{'time [s]':>10}")
    for r, name in enumerate(data.round_names):
        votes = data.bits[data.participants(r), r].astype(np.uint8)
        theory = curator_accuracy_on_input(votes, EPSILON, 0.0).value
        table = release_table(central_majority_mechanism(votes.size, EPSILON, 0.0).release_one)
        start = time.perf_counter()
        released = secure_release(votes, table, REPETITIONS)
        seconds = time.perf_counter() - start
        correct = int(np.count_nonzero(released == int(2 * votes.sum() > votes.size)))
        p_value = stats.binomtest(correct, REPETITIONS, theory).pvalue
        print(f"{name[:39]:<40}{votes.size:>5}{int(votes.sum()):>5}{theory:>9.3f}{correct / REPETITIONS:>10.3f}"
              f"{p_value:>9.3f}{seconds:>10.2f}")


def main() -> None:
    print(f"{platform.processor() or platform.machine()}, python {platform.python_version()}")
    if "--house" in sys.argv[1:]:
        _house()
    else:
        _cost()


if __name__ == "__main__":
    main()
