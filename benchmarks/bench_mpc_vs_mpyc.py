"""mpdp's secure majority round against a plain MPyC program doing the same computation (issue 23, item 5).

Same run, same votes, same k, m = 3 servers, T = 1, same field, one release per round: mpdp's
:class:`ServerCluster` (sealed shares opened by each server, a signed release; :mod:`mpdp.parties.mpc.server`)
and ``mpyc_plain_majority.py`` (party 0 secret-shares the bits with ``mpc.input``), each a warm-up round then
ROUNDS timed rounds, alternating PAIRS times (paired: the machine's load hits both). mpdp's parties seal under
session keys (:mod:`mpdp.parties.mpc.sealed_shares`) whose public halves they sign in their "ready": as in a
session, the servers derive their key with each party (one X25519 exchange each) from those before the first
round (:meth:`ServerCluster.expect`, untimed here, its CPU printed apart), and every round then costs one AEAD
call per share. mpdp's first round of a session and its steady-state rounds are reported apart (after mpdp's
own warm-up round). Prints the median seconds per round of each and their ratio to plain MPyC's (target:
within 1.3x), and the median CPU seconds per round of one server (mpdp: server 0's; MPyC: party 0's, which
also secret-shares the inputs) and their ratio.
Usage: python benchmarks/bench_mpc_vs_mpyc.py [k ...]   (default 1000)
"""

from __future__ import annotations

import json
import os
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

import numpy as np  # noqa: E402

from mpdp.parties.mpc.cluster import ServerCluster, free_port_block, server_jobs  # noqa: E402
from mpdp.parties.mpc.sealed_shares import ShareSealer  # noqa: E402
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism  # noqa: E402
from mpdp.protocols.randomization.threshold_release import release_table  # noqa: E402

EPSILON, SERVERS, THRESHOLD, ROUNDS, PAIRS = 1.0, 3, 1, 4, 3
PLAIN = pathlib.Path(__file__).with_name("mpyc_plain_majority.py")


def _mpdp(bits: np.ndarray, table: object) -> tuple[list[float], ...]:
    """mpdp's cluster, one session: a warm-up round (process start, MPyC links), then the first round of the
    session's parties (fresh session keys, handed to the servers ahead as their "ready" does), then ROUNDS
    steady-state rounds (one AEAD call per share). Seconds per round (job in, signed releases out) and server
    0's CPU seconds (its :attr:`ServerCost.cpu`: opening the shares, MPyC, signing): (first-round seconds,
    first-round CPU, steady seconds, steady CPU, server 0's CPU deriving the parties' keys ahead)."""
    first: list[float] = []
    first_cpu: list[float] = []
    seconds: list[float] = []
    cpu: list[float] = []
    ahead: list[float] = []
    with ServerCluster(SERVERS, THRESHOLD) as cluster:
        for r in range(ROUNDS + 2):
            if r < 2:  # round 0: warm-up parties; round 1: the session's parties, new to the servers
                sealers = [ShareSealer() for _ in range(len(bits))]
                cluster.expect({j: sealer.public_key for j, sealer in enumerate(sealers)})
                ahead.append(cluster.wait_expected()[0])
            jobs = server_jobs(bits, table, 1, THRESHOLD, cluster.public_keys, round_index=r,  # type: ignore[arg-type]
                               sealers=sealers)
            begin = time.perf_counter()
            cluster.release(jobs)
            (first if r == 1 else seconds).append(time.perf_counter() - begin)
            (first_cpu if r == 1 else cpu).append(cluster.last_costs[0].cpu)
    return first, first_cpu, seconds[1:], cpu[1:], ahead[1:]


def _plain(bits: np.ndarray, table: object, folder: pathlib.Path) -> tuple[list[float], list[float]]:
    """Seconds per round of the plain MPyC program (party 0's clock, rounds start at a barrier) and party 0's
    CPU seconds per round (it also secret-shares the inputs)."""
    spec = folder / "table.json"
    spec.write_text(json.dumps({"bits": bits.tolist(), "random_bits": table.random_bits,  # type: ignore[attr-defined]
                                "scaled": table.scaled.tolist()}))  # type: ignore[attr-defined]
    base = free_port_block(SERVERS)
    root = str(pathlib.Path(__file__).resolve().parents[1])
    procs = [subprocess.Popen([sys.executable, str(PLAIN), "-M", str(SERVERS), "-I", str(i), "-T", str(THRESHOLD),
                               "-B", str(base), "--no-log", str(spec), str(ROUNDS)], stdout=subprocess.PIPE,
                              env={"PYTHONPATH": root, "PATH": ""}) for i in range(SERVERS)]
    out = [p.communicate(timeout=600)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(f"plain MPyC exited with {[p.returncode for p in procs]}")
    report = json.loads(out[0])
    return list(report["seconds"]), list(report["cpu"])


def main() -> None:
    ks = [int(a) for a in sys.argv[1:]] or [1000]
    print(f"{platform.processor() or platform.machine()}, python {platform.python_version()}; m = {SERVERS}, "
          f"T = {THRESHOLD}, {PAIRS} pairs, medians; load {os.getloadavg()[0]:.1f}")
    print("mpdp first: the first round of a session (the servers derived their keys with the parties ahead, from "
          f"the keys of their ready); mpdp steady: {ROUNDS} later rounds per pair; both one AEAD call per share; "
          f"MPyC: {ROUNDS} rounds per pair")
    print(f"{'k':>6} {'mpdp round':<12}{'mpdp s':>9}{'MPyC s':>9}{'ratio':>7}{'mpdp CPU s':>12}{'MPyC CPU s':>12}"
          f"{'ratio':>7}")
    with tempfile.TemporaryDirectory() as folder:
        for k in ks:
            bits = (np.arange(k) % 2).astype(np.uint8)
            table = release_table(central_majority_mechanism(k, EPSILON, 0.0).release_one)
            samples: list[list[float]] = [[] for _ in range(7)]  # mpdp first, CPU, steady, CPU, ahead; MPyC, CPU
            for _ in range(PAIRS):
                for kept, new in zip(samples, (*_mpdp(bits, table), *_plain(bits, table, pathlib.Path(folder)))):
                    kept.extend(new)
            median = [float(np.median(kept)) for kept in samples]
            plain, plain_cpu = median[5:]
            for label, wall, used in (("first", median[0], median[1]), ("steady", median[2], median[3])):
                print(f"{k:>6} {label:<12}{wall:>9.3f}{plain:>9.3f}{wall / plain:>7.2f}{used:>12.3f}"
                      f"{plain_cpu:>12.3f}{used / plain_cpu:>7.2f}", flush=True)
            print(f"{k:>6} ahead of the first round (at the parties' ready): server 0 derived its {k} keys in "
                  f"{median[4]:.3f} CPU-s", flush=True)
    print(f"load after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
