"""Timing and memory of one simulated session, for the throughput benchmarks.

:func:`timed_session` runs :func:`mpdp.parties.session.runner.run_async` on a mosquitto child with k random
parties and reports the steady-state rate (rounds after the first; broker start, worker spawn and the
parties' connections are excluded), the CPU time per steady-state message of each kind of process (this
process = the observer, the parties' workers, the broker; psutil, read when round 1 and the last round
close), and the peak resident memory of the whole process tree (this process, the workers, the broker),
sampled every 0.1 s with psutil.
"""

from __future__ import annotations

import tempfile
import threading
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psutil

from mpdp.broker.settings import BrokerSettings
from mpdp.parties.session.runner import RunConfig, run
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["SessionTiming", "TreeMemory", "timed_session", "tree_cpu"]

#: The kinds of process of a session, as :func:`tree_cpu` counts them.
ROLES = ("observer", "workers", "broker")


def tree_cpu(exclude_thread: int | None = None) -> dict[str, float]:
    """CPU seconds (user + system) used so far by this process (the observer; without the thread whose
    native id is ``exclude_thread``, e.g. :class:`TreeMemory`'s sampler, about 15% of this process's
    samples at k = 1,000), its mosquitto children (the broker) and its other descendants (the parties'
    workers, validators)."""
    root = psutil.Process()
    used = dict.fromkeys(ROLES, 0.0)
    used["observer"] -= sum(t.user_time + t.system_time for t in root.threads() if t.id == exclude_thread)
    for proc in [root, *root.children(recursive=True)]:
        try:
            times, name = proc.cpu_times(), proc.name()
        except psutil.Error:
            continue
        role = "observer" if proc.pid == root.pid else "broker" if "mosquitto" in name else "workers"
        used[role] += times.user + times.system
    return used


class TreeMemory:
    """Peak of the summed RSS (bytes) of this process and all its descendants, sampled in a thread every
    ``interval`` seconds (the descendants listed again every ``relist`` seconds)."""

    def __init__(self, interval: float = 0.1, relist: float = 2.0) -> None:
        self.peak = 0
        self._relist = relist  # seconds between listings of the process tree
        self.thread_id: int | None = None  #: the sampler thread's native id, once it runs
        self._interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        self.thread_id = threading.get_native_id()
        root = psutil.Process()
        tree: list[psutil.Process] = []
        listed = 0.0
        while not self._stop.is_set():
            if time.monotonic() - listed > self._relist:
                # children() reads every process's /proc entry (ppid_map): on a busy machine that cost this
                # process (the observer) 0.5-1 ms of GIL every 0.1 s; the tree changes rarely
                tree, listed = [root, *root.children(recursive=True)], time.monotonic()
            total = 0
            for proc in tree:
                try:
                    total += proc.memory_info().rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self._interval)

    def __enter__(self) -> TreeMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@dataclass(frozen=True)
class SessionTiming:
    """One session's figures: steady-state rounds (all but the first) and the whole run."""

    parties: int
    repetitions: int
    steady_rounds: int
    steady_messages: int
    steady_seconds: float
    wall_seconds: float
    peak_bytes: int
    steady_cpu: dict[str, float]  #: CPU seconds of each role (:data:`ROLES`) over the steady-state rounds

    @property
    def rounds_per_s(self) -> float:
        return self.steady_rounds / self.steady_seconds

    @property
    def messages_per_s(self) -> float:
        return self.steady_messages / self.steady_seconds

    @property
    def run_messages_per_s(self) -> float:
        """Answers per second over the whole run (every round's k answers over the run's wall time: broker
        start, worker spawn, connections and the first round included)."""
        return self.parties * (self.steady_rounds + 1) / self.wall_seconds

    @property
    def bits_per_s(self) -> float:
        """Privatized bits (party-repetitions) per second."""
        return self.messages_per_s * self.repetitions

    def cpu_us_per_message(self, role: str) -> float:
        """Microseconds of CPU of ``role`` (observer, workers, broker) per steady-state message."""
        return 1e6 * self.steady_cpu[role] / self.steady_messages


def timed_session(parties: int, rounds: int, repetitions: int, workers: int = 2, seed: int = 0,
                  connections: str = "per-party", round_timeout: float = 300.0, validators: int = 0) -> SessionTiming:
    """Run k = ``parties`` random parties (majority, epsilon 1) for ``rounds`` rounds on a mosquitto child
    (``validators``: the observer's validator processes, 0 = the observer verifies alone).

    Raises:
        MpdpError: the run failed (as :func:`mpdp.parties.session.runner.run`).
        ValueError: fewer than 2 rounds (the first is not timed).
    """
    if rounds < 2:
        raise ValueError(f"rounds must be >= 2 (the first is not timed), got {rounds}")
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2, size=(parties, rounds), dtype=np.int8)
    stamps: dict[int, tuple[float, int]] = {}
    cpu: dict[int, dict[str, float]] = {}

    def progress(done: int, messages: int) -> None:
        if done not in stamps:
            stamps[done] = (time.perf_counter(), messages)
            if done in (1, rounds):
                cpu[done] = tree_cpu(memory.thread_id)

    with tempfile.TemporaryDirectory() as tmp, TreeMemory() as memory:
        config = RunConfig(
            session=f"bench-{uuid.uuid4().hex[:8]}", round_names=tuple(f"r{r}" for r in range(rounds)), bits=bits,
            mechanisms=(RandomizedResponse(1.0),) * parties, repetitions=repetitions, seed=seed,
            function=parse_function("majority"), measure=accuracy_measure("zero-one", 2),
            broker=BrokerSettings.from_url("mosquitto", environ={}), workers=workers,
            store_path=Path(tmp, "t.sqlite"), round_timeout=round_timeout, validators=validators,
            **_connections(connections),
        )
        outcome = run(config, progress)
    (t1, m1), (tn, mn) = stamps[1], stamps[rounds]
    steady = {role: cpu[rounds][role] - cpu[1][role] for role in ROLES}
    return SessionTiming(parties, repetitions, rounds - 1, mn - m1, tn - t1, outcome.wall_time, memory.peak, steady)


def _connections(connections: str) -> dict[str, str]:
    return {} if connections == "per-party" else {"connections": connections}
