"""An up-front estimate of a live run's time on the wire and peak memory, printed before a large run; the run's
own waits (the workers' readiness, a round's quiet time) come from the same model.

Time is CPU work divided by the CPU the run gets on this machine now:

* CPU seconds = :data:`START_CPU` (spawning the workers, their imports, the broker) + per party its set-up
  (:data:`SETUP_CPU`: key, spec, its loop in a worker, connect and subscribe, its signed "ready" and the
  observer's check of it) + per party and round its answer (:data:`ANSWER_CPU`: the draw, the signature, the
  publish, the observer's intake and record, the decision), longer by :data:`REPETITION_CPU` per symbol;
  these are CPU seconds of the whole process tree on the reference machine (``speed`` 1);
* the CPU the run gets (:meth:`Machine.share`): its processes busy at once (:data:`RUN_PARALLELISM`: its
  phases run mostly one after the other, the keys in this process, the parties built in the workers, their
  "ready" checked by the observer, the answers signed, then read) on the cores this process may use (:func:`os.sched_getaffinity`), shared with the other runnable processes
  (:func:`runnable_load`: those runnable now, weighted by their nice value as the scheduler weighs them):
  all of them while they fit, else their fair share ``cores x busy / (busy + load)`` (Linux's CFS gives
  equal-weight processes equal CPU);
* the machine's speed (:meth:`Machine.measure`): the CPU seconds of a short fixed calibration (Ed25519
  signatures and JSON, the run's own kind of work; ~10 ms) over the same on the reference machine: a slower
  core, or one slowed by its neighbours (shared caches, hyperthreads), stretches every CPU constant alike;
* plus :data:`ROUND_SECONDS` of latency per round (announce, close, publish the result).

Memory (the whole process tree: this process, the workers, the broker) = :data:`BASE_BYTES` + a cost per
party: its keys, its client, and with one connection per party the connection's buffers on both sides
(:data:`PARTY_BYTES`).

The CPU constants are from ``benchmarks/bench_simulate_scale.py`` (whole-tree CPU seconds of ``mpdp
simulate``) on the 2-core x86_64 reference machine, 2 workers, a mosquitto child (docs/benchmarks.md).
It is a guide within about 2x on a machine whose load holds during the run, so that a user sees before
starting that 10^5 parties x 100 rounds takes hours, not the exact figure.
"""

from __future__ import annotations

import json
import math
import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from mpdp.broker.signing import generate_key_pair, load_private_key, sign_bytes, verify_bytes
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import noun, usable_cores

__all__ = ["ANSWER_CPU", "AUTO_SETUP_CPU", "BASE_BYTES", "FD_HEADROOM", "LARGE_RUN",
           "REPETITION_CPU", "ROUND_MARGIN", "ROUND_SECONDS", "RUN_PARALLELISM", "SETUP_CPU", "START_CPU", "Machine", "RunEstimate", "calibration_cpu",
           "choose_connections", "estimate_run", "ready_timeout_floor", "resolve_connections",
           "round_timeout_floor", "runnable_load"]

#: Resident memory of a run with a handful of parties: this process with numpy/scipy, 2 workers, mosquitto.
BASE_BYTES = 430 * 2**20
#: Extra resident memory per party, by how parties connect (measured at k = 1,000 and 5,000; per worker, with
#: no task or queue per party, at k = 10^5: 1,191 MB for the whole tree).
PARTY_BYTES = {"per-party": 44_000, "per-worker": 8_000}
#: CPU seconds of a run's start: spawning the workers, their imports, the broker.
START_CPU = 4.0
#: CPU seconds per party before the first round (its key and spec, its loop in a worker, connect and subscribe,
#: its signed "ready" and the observer's check of it), by how parties connect. Per worker: with ANSWER_CPU, 10^5
#: parties, one round, 2 workers, one repetition took 34.6 CPU-s (speed 0.9), 200 repetitions 36.7 CPU-s
#: (2026-12-03, ``bench_simulate_scale.py``); per party: 4.6x per worker's set-up time (``bench_many_parties.py``
#: at k = 5,000, 2026-12-01).
SETUP_CPU = {"per-party": 2.4e-3, "per-worker": 0.25e-3}
#: CPU seconds per party and round of one repetition (draw, sign, publish; the observer's intake, record and
#: decision), by how parties connect (per party: 1.4x per worker's rate, ``bench_many_parties.py``).
ANSWER_CPU = {"per-party": 0.13e-3, "per-worker": 0.09e-3}
#: Extra CPU seconds per symbol of an answer (drawing, packing, parsing and deciding long messages): 10^5
#: parties at 200 repetitions against one, 2.1 CPU-s more.
REPETITION_CPU = 0.1e-6
#: Processes of a run busy at once, on average: 10^5 parties, one repetition, on 2 otherwise idle cores
#: (other jobs at nice 19) took 34.6 CPU-s in 50.1 s of wall time, 200 repetitions 36.7 in 40.8 s.
RUN_PARALLELISM = 1.0
#: Latency of one round besides its messages: measured with ``mpdp sweep --live --parties 5`` (10 against
#: 200 rounds of one repetition: 8.8 s and 30.2 s, load 7, 2026-12-01).
ROUND_SECONDS = 0.1
#: CPU seconds (:func:`time.process_time`) of :func:`calibration_cpu` on the reference machine.
REFERENCE_CALIBRATION_CPU = 0.0135
#: Signatures (each with its JSON and check) of one calibration pass.
CALIBRATION_SIGNATURES = 200
#: Seconds a measured :class:`Machine` is reused (one run's estimate, its waits and its printed line agree).
MACHINE_TTL = 60.0
#: Runs of at least this many party-rounds get the estimate printed before they start.
LARGE_RUN = 10_000
#: ``auto`` keeps a connection per party while the run's start and the parties' set-up are estimated at most this
#: many CPU seconds (on the reference machine: whatever this machine's load, the choice is the same).
AUTO_SETUP_CPU = 45.0
#: File descriptors a process (the broker child inherits our limit) keeps besides one socket per party.
FD_HEADROOM = 256
#: A round's quiet-time timeout and the wait for the workers' readiness are at least this many times their
#: estimates.
ROUND_MARGIN = 3.0


@dataclass(frozen=True)
class Machine:
    """The CPU a run can use.

    Attributes:
        cores: CPUs this process may run on (:func:`os.sched_getaffinity`), >= 1.
        load: other runnable processes, weighted by their nice value (:func:`runnable_load`), >= 0.
        speed: CPU seconds of the calibration here over :data:`REFERENCE_CALIBRATION_CPU` (> 0; 2 = every
            CPU constant takes twice as long).

    Raises:
        ParameterError: a field out of its domain.
    """

    cores: int
    load: float
    speed: float = 1.0

    def __post_init__(self) -> None:
        if isinstance(self.cores, bool) or not isinstance(self.cores, int) or self.cores < 1:
            raise ParameterError("cores", self.cores, "an integer >= 1")
        if not 0 <= self.load < math.inf:
            raise ParameterError("load", self.load, "a finite number >= 0")
        if not 0 < self.speed < math.inf:
            raise ParameterError("speed", self.speed, "a finite number > 0")

    @classmethod
    def measure(cls) -> Machine:
        """This machine now: its cores, its load (:func:`runnable_load`, sampled between the passes of the
        calibration) and its speed (:func:`calibration_cpu`, ~40 ms of CPU)."""
        cores = usable_cores()
        loads: list[float] = []
        cpu = calibration_cpu(lambda: loads.append(runnable_load()))
        return cls(cores, sum(loads) / len(loads), cpu / REFERENCE_CALIBRATION_CPU)

    @classmethod
    def now(cls) -> Machine:
        """:meth:`measure`, reused for :data:`MACHINE_TTL` seconds (a run's estimate and its waits agree)."""
        global _measured
        if _measured is None or time.monotonic() - _measured[0] > MACHINE_TTL:
            _measured = (time.monotonic(), cls.measure())
        return _measured[1]

    def share(self, busy: float) -> float:
        """Cores that ``busy`` > 0 busy processes of a run get: ``min(busy, cores)`` while ``busy + load <=
        cores``, else their fair share ``cores x busy / (busy + load)`` (at most ``busy``)."""
        if busy + self.load <= self.cores:
            return float(min(busy, self.cores))
        return min(float(busy), self.cores * busy / (busy + self.load))

    def describe(self) -> str:
        """``2 cores, load 4.9, speed 1.0``."""
        return f"{self.cores} {noun(self.cores, 'core')}, load {self.load:.1f}, speed {self.speed:.1f}"


_measured: tuple[float, Machine] | None = None


def calibration_cpu(between: Callable[[], object] = lambda: None) -> float:
    """CPU seconds (:func:`time.process_time`) of :data:`CALIBRATION_SIGNATURES` small JSON messages, each
    signed and verified (Ed25519), the fastest of 3 passes; ``between()`` is called before each pass."""
    private, public = generate_key_pair()
    key = load_private_key(private)
    best = math.inf
    for _ in range(3):
        between()
        start = time.process_time()
        for i in range(CALIBRATION_SIGNATURES):
            data = json.dumps({"party": i, "round": 0, "symbols": "01" * 16}).encode()
            verify_bytes(data, sign_bytes(data, key), public)
        best = min(best, time.process_time() - start)
    return max(best, 1e-6)


def runnable_load(proc: Path = Path("/proc")) -> float:
    """The other processes runnable now, each weighted as Linux's scheduler weighs its nice value against
    a nice-0 process (``1.25 ** -nice``: a ``nice -n 19`` job counts 0.014; the kernel's ``sched_prio_to_weight``
    table, kernel/sched/core.c); this process is left out. The 1-minute load average (which weighs every
    process alike, and lags by a minute) where ``proc`` cannot be read.

    Args:
        proc: the proc file system (tests pass a directory of their own).
    """
    me, total, read = os.getpid(), 0.0, False
    try:
        entries = list(proc.iterdir())
    except OSError:
        entries = []
    for entry in entries:
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        read = True
        if fields[0] == "R":
            total += 1.25 ** -int(fields[16])
    return total if read else os.getloadavg()[0]


@dataclass(frozen=True)
class RunEstimate:
    """The estimate of one run.

    Attributes:
        seconds: time on the wire (broker start to the last round), seconds.
        peak_bytes: peak resident memory of the whole process tree, bytes.
        cpu_seconds: CPU seconds of the whole process tree on this machine (its speed applied).
        machine: the machine it was estimated for.
    """

    seconds: float
    peak_bytes: int
    cpu_seconds: float
    machine: Machine

    def describe(self) -> str:
        """One line for the terminal, e.g. ``estimate: about 4 min on the wire (...) and 0.6 GB peak memory``."""
        minutes = self.seconds / 60
        when = f"{self.seconds:.0f} s" if self.seconds < 120 else (
            f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h")
        return (f"estimate: about {when} on the wire ({self.cpu_seconds:.0f} CPU-s; {self.machine.describe()}) "
                f"and {self.peak_bytes / 2**30:.1f} GB peak memory (rough: the load may change)")


def estimate_run(parties: int, rounds: int, repetitions: int, connections: str = "per-party", *,
                 machine: Machine | None = None) -> RunEstimate:
    """Estimate a live run of ``parties`` parties over ``rounds`` rounds of ``repetitions`` symbols each
    (module docstring) on ``machine`` (None: :meth:`Machine.now`).

    Raises:
        ParameterError: a count below 1, or ``connections`` not ``per-party``/``per-worker``.
    """
    _check(parties, rounds, repetitions, connections)
    machine = Machine.now() if machine is None else machine
    cpu = START_CPU + parties * SETUP_CPU[connections] + rounds * parties * _answer_cpu(repetitions, connections)
    seconds = (_startup_seconds(parties, connections, machine)
               + rounds * _round_seconds(parties, repetitions, connections, machine))
    return RunEstimate(seconds, BASE_BYTES + parties * PARTY_BYTES[connections], cpu * machine.speed, machine)


def choose_connections(parties: int, nofile: int | None = None) -> tuple[str, str]:
    """Resolve ``--connections auto``: ``per-party`` (each party its own MQTT connection, the deployed shape)
    while that is cheap, else ``per-worker``.

    Per-party is kept while both hold: the broker (a child of this process, with its file-descriptor limit)
    can hold a socket per party, ``parties + FD_HEADROOM <= nofile``; and the start-up's CPU with a
    connection per party, ``START_CPU + parties x SETUP_CPU["per-party"]``, is at most :data:`AUTO_SETUP_CPU`
    (about 17,000 parties with the constants above), whatever the moment's load.

    Args:
        parties: the number of parties k >= 1.
        nofile: the soft file-descriptor limit; None reads ``resource.getrlimit(RLIMIT_NOFILE)``.

    Returns:
        (``"per-party"`` or ``"per-worker"``, the reason in a few words, for the run's estimate line).

    Raises:
        ParameterError: ``parties`` not an integer >= 1.
    """
    _check(parties, 1, 1, "per-party")
    setup = START_CPU + parties * SETUP_CPU["per-party"]
    too_many = _sockets_exceed_fd_limit(parties, nofile)
    if too_many is not None:
        return "per-worker", too_many
    if setup > AUTO_SETUP_CPU:
        return "per-worker", (f"{parties} per-party {noun(parties, 'connection')} would take about {setup:.0f} CPU-s "
                              f"to set up (> {AUTO_SETUP_CPU:.0f})")
    most = math.floor((AUTO_SETUP_CPU - START_CPU) / SETUP_CPU["per-party"])
    return "per-party", (f"{parties:,} {noun(parties, 'party', 'parties')}: per-party up to {most:,} (their set-up "
                         f"estimated within {AUTO_SETUP_CPU:.0f} CPU-s)")


def resolve_connections(requested: str, parties: int, nofile: int | None = None) -> tuple[str, str]:
    """``requested`` itself when it is ``per-party``/``per-worker``, else (``auto``) :func:`choose_connections`.

    Args:
        requested: ``auto``, ``per-party`` or ``per-worker``.
        parties: the number of parties k >= 1.
        nofile: the soft file-descriptor limit; None reads ``resource.getrlimit(RLIMIT_NOFILE)``.

    Returns:
        (the connections used, why: ``"asked for"`` or the rule's reason).

    Raises:
        ParameterError: ``requested`` not ``auto``/``per-party``/``per-worker``; ``parties`` below 1;
            ``per-party`` whose sockets exceed the file-descriptor limit (``auto``'s bound,
            ``parties + FD_HEADROOM > nofile``: the broker could not accept them, and the run would wait for
            the workers' readiness and fail), naming both remedies.
    """
    if requested != "auto" and requested not in PARTY_BYTES:
        raise ParameterError("connections", requested, "auto, per-party or per-worker")
    if requested == "auto":
        return choose_connections(parties, nofile)
    _check(parties, 1, 1, requested)
    too_many = _sockets_exceed_fd_limit(parties, nofile) if requested == "per-party" else None
    if too_many is not None:
        raise ParameterError("connections", requested, "per-worker, or per-party within the file-descriptor limit",
                             message=f"cannot run with connections per-party: {too_many} (it needs about "
                             f"{parties + FD_HEADROOM}); use --connections per-worker (connections='per-worker'), "
                             f"or raise the limit (ulimit -n {parties + FD_HEADROOM}) and run again")
    return requested, "asked for"


def _sockets_exceed_fd_limit(parties: int, nofile: int | None) -> str | None:
    """Why a socket per party does not fit the soft file-descriptor limit ``nofile`` (None: this process's,
    which the broker child inherits): ``parties + FD_HEADROOM > nofile``; None when it fits."""
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0] if nofile is None else nofile
    if limit != resource.RLIM_INFINITY and parties + FD_HEADROOM > limit:
        return f"a socket for each of {parties} {noun(parties, 'party', 'parties')} would exceed the file-descriptor limit {limit}"
    return None


def round_timeout_floor(parties: int, repetitions: int, connections: str = "per-party", *,
                        machine: Machine | None = None) -> float:
    """The shortest quiet time (seconds) after which a round is closed without every answer, so that it is not
    cut off while its messages still arrive: :data:`ROUND_MARGIN` times the estimated time of a round (its
    latency and one answer from every party, on ``machine``: the estimate's model and machine).

    Raises:
        ParameterError: as :func:`estimate_run`.
    """
    _check(parties, 1, repetitions, connections)
    return ROUND_MARGIN * _round_seconds(parties, repetitions, connections, Machine.now() if machine is None else machine)


def ready_timeout_floor(parties: int, connections: str = "per-party", *, machine: Machine | None = None) -> float:
    """How long the runner waits for every worker to have its parties connected and subscribed: 60 s, or
    :data:`ROUND_MARGIN` times the estimated start-up (:data:`START_CPU` + the parties' set-up, on ``machine``)
    when that is longer (10^5 parties with a connection each took minutes, where a fixed 60 s failed with
    "worker(s) [0, 1] did not report ready").

    Raises:
        ParameterError: as :func:`estimate_run`.
    """
    _check(parties, 1, 1, connections)
    machine = Machine.now() if machine is None else machine
    return max(60.0, ROUND_MARGIN * _startup_seconds(parties, connections, machine))


def _check(parties: int, rounds: int, repetitions: int, connections: str) -> None:
    for name, value in (("parties", parties), ("rounds", rounds), ("repetitions", repetitions)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(name, value, "an integer >= 1")
    if connections not in PARTY_BYTES:
        raise ParameterError("connections", connections, "per-party or per-worker")


def _seconds(cpu: float, machine: Machine) -> float:
    """Wall seconds of ``cpu`` reference CPU seconds of a run on ``machine``."""
    return cpu * machine.speed / machine.share(RUN_PARALLELISM)


def _startup_seconds(parties: int, connections: str, machine: Machine) -> float:
    return _seconds(START_CPU + parties * SETUP_CPU[connections], machine)


def _answer_cpu(repetitions: int, connections: str) -> float:
    return ANSWER_CPU[connections] + repetitions * REPETITION_CPU


def _round_seconds(parties: int, repetitions: int, connections: str, machine: Machine) -> float:
    return ROUND_SECONDS + _seconds(parties * _answer_cpu(repetitions, connections), machine)
