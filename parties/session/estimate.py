"""An up-front estimate of a live run's time on the wire and peak memory, printed before a large run.

The model is linear in what a run does, with constants measured by ``benchmarks/bench_many_parties.py``
and ``benchmarks/bench_end_to_end.py`` on a 2-core x86_64 machine shared with other jobs (load 4-7),
2 workers, a mosquitto child, 2026-12-01:

* memory (the whole process tree: this process, the workers, the broker) = a base of
  :data:`BASE_BYTES` + a cost per party: its keys, its client, and with one connection per party the
  connection's buffers on both sides (:data:`PARTY_BYTES`);
* time = :data:`START_SECONDS` + a start-up cost per party (connect, subscribe) + for each round, one
  message per party at the steady rate (:data:`MESSAGES_PER_SECOND`), slower for long messages by
  :data:`REPETITION_SECONDS` per symbol, and a latency per round (:data:`ROUND_SECONDS`: announce, close,
  publish the result), which dominates runs of few parties and many rounds (``mpdp sweep --live``).

It is a rough guide (within about 2x on that machine; an idle or faster machine is quicker), so that a
user sees before starting that 10^5 parties x 100 rounds takes hours, not the exact figure.
"""

from __future__ import annotations

import math
import resource
from dataclasses import dataclass

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import noun

__all__ = ["AUTO_SETUP_SECONDS", "BASE_BYTES", "FD_HEADROOM", "LARGE_RUN", "choose_connections", "resolve_connections", "ROUND_SECONDS", "RunEstimate", "estimate_run", "ready_timeout_floor",
           "round_timeout_floor"]

#: Resident memory of a run with a handful of parties: this process with numpy/scipy, 2 workers, mosquitto.
BASE_BYTES = 430 * 2**20
#: Extra resident memory per party, by how parties connect (measured at k = 1,000 and 5,000; per worker, with
#: no task or queue per party, at k = 10^5: 1,191 MB for the whole tree).
PARTY_BYTES = {"per-party": 44_000, "per-worker": 8_000}
#: Broker start, worker spawn and imports.
START_SECONDS = 6.0
#: Seconds per party to connect and subscribe before the first round.
CONNECT_SECONDS = {"per-party": 3.2e-3, "per-worker": 0.7e-3}
#: Party messages per second through the observer in the steady state (1 repetition each).
MESSAGES_PER_SECOND = {"per-party": 380.0, "per-worker": 520.0}
#: Extra seconds per symbol of a message (signing, packing, parsing and deciding long messages).
REPETITION_SECONDS = 1.0e-6
#: Latency of one round besides its messages: measured with ``mpdp sweep --live --parties 5`` (10 against
#: 200 rounds of one repetition: 8.8 s and 30.2 s, load 7, 2026-12-01).
ROUND_SECONDS = 0.1
#: Runs of at least this many party-rounds get the estimate printed before they start.
LARGE_RUN = 10_000
#: ``auto`` keeps a connection per party while its estimated start-up (:data:`START_SECONDS` + the per-party
#: connect cost) stays within this, the default wait for the workers to be ready, seconds.
AUTO_SETUP_SECONDS = 60.0
#: File descriptors a process (the broker child inherits our limit) keeps besides one socket per party.
FD_HEADROOM = 256
#: A round's timeout is at least this many times the estimated time of its messages.
ROUND_MARGIN = 3.0


@dataclass(frozen=True)
class RunEstimate:
    """The estimate of one run.

    Attributes:
        seconds: time on the wire (broker start to the last round), seconds.
        peak_bytes: peak resident memory of the whole process tree, bytes.
    """

    seconds: float
    peak_bytes: int

    def describe(self) -> str:
        """One line for the terminal, e.g. ``estimate: about 4 min on the wire, 0.6 GB peak memory ...``."""
        minutes = self.seconds / 60
        when = f"{self.seconds:.0f} s" if self.seconds < 120 else (
            f"{minutes:.0f} min" if minutes < 120 else f"{minutes / 60:.1f} h")
        return (f"estimate: about {when} on the wire and {self.peak_bytes / 2**30:.1f} GB peak memory "
                "(rough: calibrated on a loaded 2-core machine)")


def estimate_run(parties: int, rounds: int, repetitions: int, connections: str = "per-party") -> RunEstimate:
    """Estimate a live run of ``parties`` parties over ``rounds`` rounds of ``repetitions`` symbols each.

    Raises:
        ParameterError: a count below 1, or ``connections`` not ``per-party``/``per-worker``.
    """
    for name, value in (("parties", parties), ("rounds", rounds), ("repetitions", repetitions)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ParameterError(name, value, "an integer >= 1")
    if connections not in PARTY_BYTES:
        raise ParameterError("connections", connections, "per-party or per-worker")
    seconds = START_SECONDS + parties * CONNECT_SECONDS[connections] + rounds * _round_seconds(
        parties, repetitions, connections)
    return RunEstimate(seconds, BASE_BYTES + parties * PARTY_BYTES[connections])


def choose_connections(parties: int, nofile: int | None = None) -> tuple[str, str]:
    """Resolve ``--connections auto``: ``per-party`` (each party its own MQTT connection, the deployed shape)
    while that is cheap, else ``per-worker``.

    Per-party is kept while both hold: the broker (a child of this process, with its file-descriptor limit)
    can hold a socket per party, ``parties + FD_HEADROOM <= nofile``; and the estimated per-party start-up,
    :data:`START_SECONDS` + ``parties`` x the per-party connect cost, is at most :data:`AUTO_SETUP_SECONDS`
    (about 16,900 parties with the constants above).

    Args:
        parties: the number of parties k >= 1.
        nofile: the soft file-descriptor limit; None reads ``resource.getrlimit(RLIMIT_NOFILE)``.

    Returns:
        (``"per-party"`` or ``"per-worker"``, the reason in a few words, for the run's estimate line).

    Raises:
        ParameterError: ``parties`` not an integer >= 1.
    """
    estimate_run(parties, 1, 1)  # the same checks
    setup = START_SECONDS + parties * CONNECT_SECONDS["per-party"]
    too_many = _sockets_exceed_fd_limit(parties, nofile)
    if too_many is not None:
        return "per-worker", too_many
    if setup > AUTO_SETUP_SECONDS:
        return "per-worker", (f"{parties} per-party {noun(parties, 'connection')} would take about {setup:.0f} s to set up "
                              f"(> {AUTO_SETUP_SECONDS:.0f} s)")
    most = math.floor((AUTO_SETUP_SECONDS - START_SECONDS) / CONNECT_SECONDS["per-party"])
    return "per-party", (f"{parties:,} {noun(parties, 'party', 'parties')}: per-party up to {most:,} (their set-up estimated within "
                         f"{AUTO_SETUP_SECONDS:.0f} s)")


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
    estimate_run(parties, 1, 1)  # the same checks
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


def round_timeout_floor(parties: int, repetitions: int, connections: str = "per-party") -> float:
    """The shortest round timeout (seconds) that does not cut a round off while its messages still arrive:
    :data:`ROUND_MARGIN` times the estimated time of a round (its latency and one message from every party) (10^5 parties over 2
    workers answer a round in minutes, longer than the default 60 s).

    Raises:
        ParameterError: as :func:`estimate_run`.
    """
    estimate_run(parties, 1, repetitions, connections)  # the same checks
    return ROUND_MARGIN * _round_seconds(parties, repetitions, connections)


def ready_timeout_floor(parties: int, connections: str = "per-party") -> float:
    """How long the runner waits for every worker to have its parties connected and subscribed: 60 s, or
    :data:`ROUND_MARGIN` times the estimated start-up (:data:`START_SECONDS` + the per-party connect cost)
    when that is longer (10^5 parties with a connection each: ~11 min, where a fixed 60 s failed with
    "worker(s) [0, 1] did not report ready").

    Raises:
        ParameterError: as :func:`estimate_run`.
    """
    estimate_run(parties, 1, 1, connections)  # the same checks
    return max(60.0, ROUND_MARGIN * (START_SECONDS + parties * CONNECT_SECONDS[connections]))


def _round_seconds(parties: int, repetitions: int, connections: str) -> float:
    return ROUND_SECONDS + parties * (1.0 / MESSAGES_PER_SECOND[connections] + repetitions * REPETITION_SECONDS)
