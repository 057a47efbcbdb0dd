"""The end-to-end simulation on an idle machine and beside CPU burners, in the same run (issue 20).

Each condition runs ``mpdp simulate --parties K --rounds R --repetitions 1 --seed 1`` against its own stock
mosquitto (``mosquitto -p PORT``: its default configuration) and prints: exit code, wall time, rounds
complete of R, parties absent, rounds inconsistent with theory, messages received, the simulation's CPU
(observer and workers, user + system) per message, and the load average at its end. Conditions:

* ``idle``: nothing beside it (the machine's other load is printed: a shared machine is never quite idle);
* ``burners``: ``--burners N`` CPU burners (``python3 -c 'while True: pass'``) on all cores;
* ``one-core``: the simulation and ``--burners N`` burners pinned to CPU 0 (``taskset -c 0``; the broker is not).

Run: python benchmarks/bench_contention.py [--parties K] [--rounds R] [--burners N]
[--conditions idle,burners,one-core] (default 1,000 parties, 20 rounds, 16 burners, idle and burners)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mpdp.broker.ports import LOOPBACK, free_loopback_port

CONDITIONS = ("idle", "burners", "one-core")


@dataclass(frozen=True)
class Outcome:
    """One condition's simulation: exit code, wall seconds, what its results say, CPU seconds, load."""

    code: int
    wall: float
    complete: int
    absent: int
    inconsistent: int
    messages: int
    cpu: float
    load: float


def _pin(one_core: bool) -> list[str]:
    return ["taskset", "-c", "0"] if one_core else []


@contextlib.contextmanager
def _burners(count: int, one_core: bool, limit: float) -> Iterator[None]:
    """``count`` CPU burners for the block (each ended at exit, at the latest after ``limit`` seconds)."""
    procs = [subprocess.Popen([*_pin(one_core), "timeout", str(int(limit)), sys.executable, "-c", "while True: pass"])
             for _ in range(count)]
    try:
        yield
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait()


@contextlib.contextmanager
def _stock_mosquitto() -> Iterator[int]:
    """A mosquitto in its default configuration on a free loopback port; the port."""
    port = free_loopback_port()
    proc = subprocess.Popen(["mosquitto", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:  # until it accepts connections
            with contextlib.suppress(OSError):
                socket.create_connection((LOOPBACK, port), timeout=1).close()
                break
            time.sleep(0.1)
        yield port
    finally:
        proc.terminate()
        proc.wait()


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_condition(condition: str, parties: int, rounds: int, burners: int, limit: float) -> Outcome:
    """Run the simulation under ``condition`` (module docstring); its outcome."""
    one_core = condition == "one-core"
    with tempfile.TemporaryDirectory(prefix="mpdp-contention-") as tmp, _stock_mosquitto() as port, \
            _burners(0 if condition == "idle" else burners, one_core, limit):
        result = Path(tmp) / "result.json"
        command = [*_pin(one_core), shutil.which("mpdp") or "mpdp", "simulate", "--parties", str(parties), "--rounds",
                   str(rounds), "--repetitions", "1", "--seed", "1", "--broker", f"mqtt://{LOOPBACK}:{port}",
                   "--json", str(result), "--quiet"]
        cpu, start = _children_cpu(), time.monotonic()
        with Path(tmp, "log").open("w") as log:
            try:
                code = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=log, timeout=limit,
                                      check=False).returncode
            except subprocess.TimeoutExpired:
                code = -1
        wall, cpu = time.monotonic() - start, _children_cpu() - cpu
        load = os.getloadavg()[0]
        if code != 0:
            sys.stderr.write(f"{condition}: exit {code}; the last lines of its log:\n"
                             + "".join(Path(tmp, "log").read_text().splitlines(keepends=True)[-8:]))
        document = json.loads(result.read_text()) if result.exists() else {"rounds": []}
    done = document["rounds"]
    return Outcome(code, wall, sum(r["status"] == "complete" for r in done), sum(r["absent"] for r in done),
                   sum(not r["consistent"] for r in done), sum(r["messages_received"] for r in done), cpu, load)


def main(parties: int, rounds: int, burners: int, conditions: list[str], limit: float) -> None:
    print(f"mpdp simulate --parties {parties} --rounds {rounds} --repetitions 1 on a stock mosquitto; "
          f"{os.cpu_count()} cores; load average at start {os.getloadavg()[0]:.1f} (a shared machine)")
    print(f"{'condition':<22} {'exit':>4} {'wall s':>7} {'complete':>8} {'absent':>6} {'incons.':>7} "
          f"{'messages':>8} {'CPU us/msg':>10} {'load':>5}")
    for condition in conditions:
        outcome = run_condition(condition, parties, rounds, burners, limit)
        label = condition if condition == "idle" else f"{condition} ({burners} burners)"
        print(f"{label:<22} {outcome.code:>4} {outcome.wall:>7.1f} {outcome.complete:>5}/{rounds:<2} "
              f"{outcome.absent:>6} {outcome.inconsistent:>7} {outcome.messages:>8} "
              f"{1e6 * outcome.cpu / max(outcome.messages, 1):>10.0f} {outcome.load:>5.1f}", flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parties", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--burners", type=int, default=16)
    parser.add_argument("--conditions", default="idle,burners",
                        type=lambda text: [c for c in text.split(",") if c],
                        help=f"comma-separated, of {', '.join(CONDITIONS)}")
    parser.add_argument("--limit", type=float, default=900.0, help="seconds a condition may take (default 900)")
    args = parser.parse_args()
    unknown = sorted(set(args.conditions) - set(CONDITIONS))
    if unknown:
        parser.error(f"--conditions: unknown {', '.join(unknown)} (one of {', '.join(CONDITIONS)})")
    main(args.parties, args.rounds, args.burners, args.conditions, args.limit)
