"""mpdp's secure majority round against a plain MPyC program doing the same computation (issue 23, item 5).

Same run, same votes, same k, m = 3 servers, T = 1, same field, one release per round: mpdp's
:class:`ServerCluster` (sealed shares opened by each server, a signed release; :mod:`mpdp.parties.mpc.server`)
and ``mpyc_plain_majority.py`` (party 0 secret-shares the bits with ``mpc.input``), each a warm-up round then
ROUNDS timed rounds, alternating PAIRS times (paired: the machine's load hits both). Prints the median seconds
per round of each and their ratio (target: mpdp within 1.3x of plain MPyC), and the median CPU seconds per
round of one server (mpdp: server 0's; MPyC: party 0's, which also secret-shares the inputs) and their ratio.
Usage: python benchmarks/bench_mpc_vs_mpyc.py [k ...]   (default 1000)
"""

from __future__ import annotations

import json
import pathlib
import platform
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # run from a checkout

import numpy as np  # noqa: E402

from mpdp.parties.mpc.cluster import ServerCluster, free_port_block, server_jobs  # noqa: E402
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism  # noqa: E402
from mpdp.protocols.randomization.threshold_release import release_table  # noqa: E402

EPSILON, SERVERS, THRESHOLD, ROUNDS, PAIRS = 1.0, 3, 1, 3, 3
PLAIN = pathlib.Path(__file__).with_name("mpyc_plain_majority.py")


def _mpdp(bits: np.ndarray, table: object) -> tuple[list[float], list[float]]:
    """Seconds per round of mpdp's cluster (after a warm-up round): job in, signed releases out; and the
    CPU seconds per round of server 0 (its :attr:`ServerCost.cpu`: opening the shares, MPyC, signing)."""
    seconds, cpu = [], []
    with ServerCluster(SERVERS, THRESHOLD) as cluster:
        for r in range(ROUNDS + 1):
            jobs = server_jobs(bits, table, 1, THRESHOLD, cluster.public_keys, round_index=r)  # type: ignore[arg-type]
            begin = time.perf_counter()
            cluster.release(jobs)
            if r:
                seconds.append(time.perf_counter() - begin)
                cpu.append(cluster.last_costs[0].cpu)
    return seconds, cpu


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
          f"T = {THRESHOLD}, {PAIRS} pairs x {ROUNDS} rounds, medians")
    print(f"{'k':>6}{'mpdp s/round':>14}{'MPyC s/round':>14}{'ratio':>8}{'mpdp CPU s':>12}{'MPyC CPU s':>12}"
          f"{'ratio':>8}")
    with tempfile.TemporaryDirectory() as folder:
        for k in ks:
            bits = (np.arange(k) % 2).astype(np.uint8)
            table = release_table(central_majority_mechanism(k, EPSILON, 0.0).release_one)
            ours, theirs, our_cpu, their_cpu = [], [], [], []
            for _ in range(PAIRS):
                seconds, cpu = _mpdp(bits, table)
                ours, our_cpu = ours + seconds, our_cpu + cpu
                seconds, cpu = _plain(bits, table, pathlib.Path(folder))
                theirs, their_cpu = theirs + seconds, their_cpu + cpu
            a, b = float(np.median(ours)), float(np.median(theirs))
            c, d = float(np.median(our_cpu)), float(np.median(their_cpu))
            print(f"{k:>6}{a:>14.3f}{b:>14.3f}{a / b:>8.2f}{c:>12.3f}{d:>12.3f}{c / d:>8.2f}", flush=True)


if __name__ == "__main__":
    main()
