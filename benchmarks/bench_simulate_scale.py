"""``mpdp simulate`` at scale, as a user runs it: 10^5 parties at the defaults against the same run at one
repetition, and 10^6 parties one round one repetition (issue 23, Build item 3).

Each run is the CLI in a child process (``python -m mpdp simulate --parties K --rounds 1 --seed S --quiet
--json FILE``, plus the run's flags), one after the other. Printed per run: its CPU seconds (user + system of
the command and every process it waited for: the workers, the broker; ``resource.getrusage(RUSAGE_CHILDREN)``
around it), its wall time, the peak summed RSS of its whole process tree (psutil, every 0.1 s: this script's
own ~40 MB included), the largest single process's peak RSS (``ru_maxrss`` of the children, what
``/usr/bin/time -v`` reports), the exit code, and the up-front estimate (the one the CLI prints before a large
run: :func:`mpdp.parties.session.estimate.estimate_run` with the connections ``auto`` picks, on the machine
measured just before the run: cores, load average, calibrated speed) with actual/estimate for wall time, CPU
and memory. With both runs: the defaults' CPU and memory over the one-repetition run's (target CPU <= 2x).

With ``--party-decisions`` (and ``--workers W``, passed on) the parties decide f too: printed besides are the
CLI's own estimate line (the session's and the party decisions'), and per round the parties whose decisions did
not all arrive (``party_decisions_missing``, to be 0).

Run:
    python benchmarks/bench_simulate_scale.py                       # 10^5: --repetitions 1, then defaults
    python benchmarks/bench_simulate_scale.py 1000000 --connections per-worker --repetitions 1
    python benchmarks/bench_simulate_scale.py 100000 --party-decisions --workers 1
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from session_timing import TreeMemory

from mpdp.parties.session.estimate import Machine, RunEstimate, estimate_run, resolve_connections

#: What ``mpdp simulate`` runs when --repetitions is not given.
DEFAULT_REPETITIONS = 200


@dataclass(frozen=True)
class Measured:
    """One CLI run: CPU seconds of its process tree, wall seconds, peak summed RSS bytes, exit code, peak RSS
    bytes of its largest process."""

    cpu: float
    wall: float
    peak: int
    code: int
    largest: int


def children_cpu() -> float:
    """User + system CPU seconds of every waited-for descendant so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_cli(parties: int, repetitions: int | None, connections: str | None, seed: int, folder: Path,
            time_limit: float | None = None, extra: tuple[str, ...] = ()) -> Measured:
    """Run ``mpdp simulate`` once in a child process (``extra``: more of its flags); its stderr goes to
    ``folder``/stderr-R.txt."""
    label = "default" if repetitions is None else str(repetitions)
    args = [sys.executable, "-m", "mpdp", "simulate", "--parties", str(parties), "--rounds", "1",
            "--seed", str(seed), "--quiet", "--json", str(folder / f"result-{label}.json"),
            "--out", str(folder / f"run-{label}")]
    args += [] if repetitions is None else ["--repetitions", str(repetitions)]
    args += [] if connections is None else ["--connections", connections]
    args += [] if time_limit is None else ["--time-limit", f"{time_limit:g}"]
    args += list(extra)
    before, start = children_cpu(), time.perf_counter()
    with TreeMemory() as memory, open(folder / f"stderr-{label}.txt", "w") as err:
        code = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=err, check=False).returncode
    largest = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # kB on Linux
    return Measured(children_cpu() - before, time.perf_counter() - start, memory.peak, code, largest)


def report(name: str, measured: Measured, estimate: RunEstimate) -> None:
    """One row: the run's figures and actual/estimate of wall time, CPU and memory."""
    print(f"{name:<22} {measured.code:>4} {measured.cpu:>8.1f} {measured.wall:>8.1f} {measured.peak / 2**20:>8.0f} "
          f"{measured.largest / 2**20:>8.0f} {estimate.seconds:>7.0f} {estimate.cpu_seconds:>7.0f} "
          f"{estimate.peak_bytes / 2**20:>7.0f} {measured.wall / estimate.seconds:>6.2f} "
          f"{measured.cpu / estimate.cpu_seconds:>6.2f} {measured.peak / estimate.peak_bytes:>6.2f}", flush=True)
    print(f"  estimated for {estimate.machine.describe()}; load average now {os.getloadavg()[0]:.1f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parties", nargs="?", type=int, default=100_000)
    parser.add_argument("--connections", choices=("per-party", "per-worker"), default=None,
                        help="pass --connections (default: not given, the CLI's auto)")
    parser.add_argument("--repetitions", type=int, default=None,
                        help="run only this many repetitions (default: 1, then the defaults)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--time-limit", type=float, default=None,
                        help="pass --time-limit SECONDS (a run estimated over the CLI's 1800 s is refused)")
    parser.add_argument("--party-decisions", action="store_true", help="pass --party-decisions")
    parser.add_argument("--workers", type=int, default=None, help="pass --workers W")
    args = parser.parse_args()
    extra = (("--party-decisions",) if args.party_decisions else ()) + (
        () if args.workers is None else ("--workers", str(args.workers)))
    used = args.connections or resolve_connections("auto", args.parties)[0]
    plan = [1, None] if args.repetitions is None else [args.repetitions]
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine); "
          f"{args.parties:,} parties, 1 round, connections {used}")
    print(f"{'run':<22} {'exit':>4} {'CPU s':>8} {'wall s':>8} {'peak MB':>8} {'max1 MB':>8} {'est s':>7} "
          f"{'est CPU':>7} {'est MB':>7} {'wall/e':>6} {'CPU/e':>6} {'mem/e':>6}")
    runs: dict[str, Measured] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for repetitions in plan:
            name = f"--repetitions {repetitions}" if repetitions is not None else "defaults (200)"
            estimate = estimate_run(args.parties, 1, repetitions or DEFAULT_REPETITIONS, used,
                                    machine=Machine.measure())  # the machine as the run starts
            runs[name] = run_cli(args.parties, repetitions, args.connections, args.seed, Path(tmp), args.time_limit,
                                 extra)
            report(name, runs[name], estimate)
            label = "default" if repetitions is None else str(repetitions)
            said = [line for line in Path(tmp, f"stderr-{label}.txt").read_text().splitlines()
                    if line.startswith("estimate:")]
            if said:
                print(f"  the CLI's estimate: {said[0]}")
            result = Path(tmp, f"result-{label}.json")
            if result.exists():
                document = json.loads(result.read_text())
                print(f"  run status: {document.get('run', {}).get('status')}")
                if args.party_decisions:
                    print(f"  party decisions missing per round: "
                          f"{[r.get('party_decisions_missing') for r in document.get('rounds', [])]}")
            else:
                print(f"  no result; stderr tail: {Path(tmp, 'stderr-' + str(repetitions or 'default') + '.txt').read_text()[-400:]}")
    if len(runs) == 2:
        one, full = runs.values()
        print(f"defaults / one repetition: CPU {full.cpu / one.cpu:.2f}x (target <= 2), "
              f"peak memory {full.peak / one.peak:.2f}x, wall {full.wall / one.wall:.2f}x")
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
