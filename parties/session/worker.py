"""A worker OS process: runs its share of the parties as asyncio tasks in one TaskGroup.

It reports ``ready`` on the status topic once every party has subscribed (the coordinator waits for
all workers before the first round) or ``failed`` with the first error, signed with each of its
parties' keys, in parts of at most :data:`STATUS_PARTIES` parties (:func:`status_reports`). It exits when the session
ends, when a party fails (exit code 1), or when its parent process dies (so no worker is orphaned).

Its parties share one :class:`mpdp.parties.rounds.liveness.ObserverClock`, fed by one connection of the
worker that reads the coordinator's heartbeats: one heartbeat message per worker and second, whatever the
number of its parties.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import PrivateKey, generate_key_pair, load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.plan import Decider, DeciderSpec, PartyStarter, RunningParty
from mpdp.parties.rounds.registry import party_starter
from mpdp.parties.rounds.secure_sampling import secure_sampler
from mpdp.parties.session.multiplex import BUNDLED_CONCURRENCY, serve_multiplexed
from mpdp.parties.session.processes import first_leaf, watch_parent
from mpdp.protocols.numerics.lazy import LazySequence

__all__ = ["STATUS_PARTIES", "WorkerSpec", "WorkerSpecs", "serve_parties", "status_reports", "worker_main"]

log = logging.getLogger("mpdp.worker")
_REPORT_TIMEOUT = 5.0  # seconds a "failed" report may take before the worker gives up on it


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """Everything a worker process needs (picklable; sent to a spawned process).

    Attributes:
        index: the worker number.
        endpoint: the broker: a :class:`mpdp.broker.endpoint.BrokerEndpoint` for a worker process
            (picklable); any :class:`mpdp.broker.transport.Connector` when run in this event loop.
        session: the session id.
        coordinator_key: raw Ed25519 public key of the announcements' signer.
        parties: the parties this worker runs, with their private bits and keys (not in the repr).
        secure: deployment mode (secure sampler) instead of simulation.
        idle_timeout: seconds a party waits for the first announcement.
        observer_grace: seconds of coordinator silence (no announcement, no heartbeat) before a party leaves.
        connect_concurrency: parties of this worker connecting at the same time, at most.
        start: builds each party of the protocol the parties speak (a
            :class:`mpdp.parties.rounds.plan.PartyStarter`, picklable by name): randomized response by
            default, :func:`mpdp.parties.curator.party.start_curator_party` for the curator protocol.
        decisions: the public parameters of the parties' own decisions of f (one rule cache per
            worker process); None = the parties do not decide.
        shared: serve the parties over one MQTT connection of this worker, in one task
            (:func:`mpdp.parties.session.multiplex.serve_multiplexed`) instead of one connection and task each.
        record: the host's durable answer record (:class:`mpdp.parties.rounds.answer_record.AnswerRecord`),
            opened by the worker; each party's ledger starts from its recorded charges. None = in memory.
        bundle: with ``shared``, send the parties' answers in bundles on the worker's bundle topic
            (:mod:`mpdp.broker.bundle`; the observer must subscribe to them: a simulation without validators),
            each answer unsigned (:attr:`mpdp.parties.rounds.party_spec.PartySpec.bundled`): the bundle's signature
            authenticates it.
    """

    index: int
    endpoint: Connector
    session: str
    coordinator_key: bytes
    parties: tuple[PartySpec, ...] = field(repr=False)
    secure: bool = False
    idle_timeout: float = 120.0
    observer_grace: float = OBSERVER_GRACE
    connect_concurrency: int = 32
    start: PartyStarter = field(default_factory=lambda: party_starter("rr"))
    decisions: DeciderSpec | None = None
    shared: bool = False
    record: Path | None = None
    bundle: bool = False


class WorkerSpecs(LazySequence[WorkerSpec]):
    """The specs of ``count`` workers, each built when it is taken (``build(index)``), not kept: a pool that
    spawns its workers one at a time holds one worker's parties at once (10^6 parties over 2 workers: the main
    process held both workers' 500,000 party specs, ~0.7 GB, and one's pickle, 2.4 GB at its peak).

    Args:
        count: the number of workers, >= 0.
        build: the spec of worker ``index`` (0 <= index < count), built afresh at each call.
    """

    def __init__(self, count: int, build: Callable[[int], WorkerSpec]) -> None:
        self._count, self._build = count, build

    def __len__(self) -> int:
        return self._count

    def _item(self, index: int) -> WorkerSpec:
        return self._build(index)


#: Parties one status report lists at most: each takes ~98 bytes (its id and base64 signature), so a report is
#: at most ~0.5 MB (0.73 MB with the mpc parties' sealing keys, 47 bytes more each, measured), the size
#: docs/deploy.md sizes brokers for; a worker of 500,000 parties (10^6 over 2
#: workers) sends 100 of them, where one report of 49 MB was over mosquitto's max_packet_size (16 MB): the broker
#: dropped the worker's connection at each try and the run waited for "ready" until its timeout.
STATUS_PARTIES = 5_000


def status_reports(spec: WorkerSpec, state: Literal["ready", "failed"], detail: str = "",
                   keys: Sequence[PrivateKey] | None = None, bundle_key: bytes = b"",
                   sealing_keys: Sequence[bytes] = ()) -> Iterator[WorkerStatus]:
    """The worker's status report in parts of at most :data:`STATUS_PARTIES` parties (in the order of
    ``spec.parties``), each stamped and signed as it is taken: a worker publishes one before it signs the next
    (500,000 parties' signatures took minutes on a loaded machine, and parts all stamped before the first went
    out reached the observer of a 10^6-party run after their lifetime: "expired", their parties' answers
    refused). Each part is signed with the private key of each party it lists (the observer
    checks each against the roster and joins the parts of one worker). ``keys``: the parties' keys loaded
    already (:func:`mpdp.broker.signing.load_private_key`, in the order of ``spec.parties``; a party host's
    beacon signs a report a second), else those of ``spec`` (loaded by :func:`serve_parties`). ``bundle_key``:
    the raw public key of the worker's answer bundles, named in every part (b"": it sends none). ``sealing_keys``:
    a ready report's per-party session sealing keys (:attr:`RunningParty.sealing_key`, in the order of
    ``spec.parties``; the mpc protocol), each part listing its parties' keys; () for none."""
    signers = [p.private_key for p in spec.parties] if keys is None else list(keys)
    for i in range(0, len(spec.parties), STATUS_PARTIES):
        yield WorkerStatus.signed(signers[i:i + STATUS_PARTIES], session=spec.session, worker=spec.index, state=state,
                                  parties=tuple(p.party for p in spec.parties[i:i + STATUS_PARTIES]), detail=detail,
                                  bundle_key=bundle_key, sealing_keys=sealing_keys[i:i + STATUS_PARTIES])


@contextlib.contextmanager
def _built_without_gc(freeze: bool) -> Iterator[None]:
    """With ``freeze``, build the worker's long-lived objects (its parties' keys, specs and loops) with Python's
    cyclic garbage collector off, then freeze every object (:func:`gc.freeze`: no collection scans them again);
    else nothing. With it on, each full collection walked every party built so far: 10^5 parties in one
    process took 23.6 s to build (38.6 s with one round's answers), 7.3 s of it in collections; this way
    14.6 s (29.2 s), 0.2 s (load 15, 2026-12-02)."""
    if not freeze:
        yield
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()


async def _report(spec: WorkerSpec, topics: Topics, state: Literal["ready", "failed"], detail: str = "",
                  bundle_key: bytes = b"", sealing_keys: Sequence[bytes] = ()) -> None:
    client_id = f"mpdp-{spec.session}-worker-{spec.index}-{state}-{secrets.token_hex(4)}"
    async with spec.endpoint.connect(client_id) as transport:
        for status in status_reports(spec, state, detail, bundle_key=bundle_key, sealing_keys=sealing_keys):
            await transport.publish(topics.status, status.model_dump_json())


async def serve_parties(spec: WorkerSpec, parent: int | None = None, freeze: bool = False) -> None:
    """Run every party of ``spec`` until the session ends.

    Args:
        parent: pid to watch; the worker stops when it is gone (None: don't watch).
        freeze: build the parties with the garbage collector off, then freeze them (:func:`_built_without_gc`):
            for a process of its own, whose other objects it freezes as well.

    Raises:
        ExceptionGroup: of the parties' errors (``TransportError`` for a lost broker or timeout).
    """
    topics = Topics(spec.session)
    if spec.secure:
        secure_sampler()  # fail before any party connects
    # each key loaded once, for the party's answers and signed reports (10^6: 36 s of CPU)
    with _built_without_gc(freeze):
        spec = replace(spec, parties=tuple(replace(p, private_key=load_private_key(p.private_key), bundled=spec.bundle)
                                           for p in spec.parties))
    # per party: how many connect (and answer) at once; shared: the multiplexer bounds the answers itself
    gate = asyncio.Semaphore(BUNDLED_CONCURRENCY if spec.shared else spec.connect_concurrency)
    decider: Decider | None = (None if spec.decisions is None
                               else spec.decisions.decider(spec.session, spec.coordinator_key))
    # the key of this process's answer bundles, endorsed by every party in the signed "ready" (mpdp.broker.bundle)
    bundle_private, bundle_key = generate_key_pair() if spec.bundle else (b"", b"")
    bundle_signer = load_private_key(bundle_private) if spec.bundle else None
    waiting = len(spec.parties)
    all_ready = asyncio.Event()

    def one_ready() -> None:
        nonlocal waiting
        waiting -= 1
        if waiting == 0:
            all_ready.set()

    started: list[RunningParty] = []

    async def report_ready() -> None:
        await all_ready.wait()
        # the parties' session sealing keys (mpc), each signed in the ready by its party's own key
        sealing = [party.sealing_key for party in started]
        await _report(spec, topics, "ready", bundle_key=bundle_key, sealing_keys=sealing if all(sealing) else ())

    reporting: list[asyncio.Task[None]] = []  # the "failed" report, once started (at most one report)

    async def send_failure(detail: str) -> None:
        with contextlib.suppress(Exception):
            async with asyncio.timeout(_REPORT_TIMEOUT):
                await _report(spec, topics, "failed", detail)

    async def report_failure(detail: str) -> None:
        """Send the first failure's report, or wait for it: a task of its own, shielded (parties that fail
        at once, e.g. at a round beyond their bits: the task group cancels the first while it reports, when
        the second fails; its report was cancelled with it and none went out)."""
        if not reporting:
            reporting.append(asyncio.create_task(send_failure(detail), name="report-failed"))
        await asyncio.shield(reporting[0])

    async def report_party_failure(party_id: int, exc: Exception) -> None:
        text = f"{type(exc).__name__}: {exc}"
        await report_failure(text if f"party {party_id}" in str(exc) else f"{text} (party {party_id})")

    async def run_party(party: RunningParty, party_id: int) -> None:
        """Run one party; its error is reported "failed" at once, before the task group cancels the
        others (the coordinator learns the cause even if a cancellation is slow)."""
        try:
            await party.run(one_ready)
        except Exception as exc:
            await report_party_failure(party_id, exc)
            raise

    try:
        async with contextlib.AsyncExitStack() as stack:
            record = None if spec.record is None else stack.enter_context(AnswerRecord(spec.record))
            with _built_without_gc(freeze):
                for party_spec in spec.parties:
                    if record is not None:  # the ledger of what this party answered before a restart
                        party_spec = replace(party_spec, ledger=record.ledger(
                            spec.session, party_spec.party, party_spec.ledger.delta_slack))
                    started.append(spec.start(party_spec, spec.endpoint, topics, spec.coordinator_key,
                                              idle_timeout=spec.idle_timeout, connect_gate=gate, secure=spec.secure,
                                              observer_grace=spec.observer_grace, decider=decider, record=record))
                clock = started[0].loop.clock  # the process's one clock, fed by one connection
                for party in started:
                    party.loop.share_clock(clock)
            async with asyncio.TaskGroup() as tg:
                watcher = tg.create_task(watch_parent(parent), name="watch-parent") if parent else None
                listener = tg.create_task(clock.listen(
                    spec.endpoint, f"mpdp-{spec.session}-worker-{spec.index}-clock-{secrets.token_hex(4)}"),
                    name="observer-clock")
                async with asyncio.TaskGroup() as parties:
                    parties.create_task(report_ready(), name="report-ready")
                    if spec.shared:
                        parties.create_task(serve_multiplexed(
                            [party.loop for party in started], spec.endpoint,
                            f"mpdp-{spec.session}-worker-{spec.index}-{secrets.token_hex(4)}",
                            on_ready=one_ready, on_error=report_party_failure,
                            bundle=None if bundle_signer is None else (topics, spec.index, bundle_signer)),
                            name="parties")
                    else:
                        for party, party_spec in zip(started, spec.parties, strict=True):
                            parties.create_task(run_party(party, party_spec.party), name=f"party-{party_spec.party}")
                listener.cancel()
                if watcher is not None:
                    watcher.cancel()
    except Exception as exc:
        first = first_leaf(exc)
        await report_failure(f"{type(first).__name__}: {first}")
        raise


def worker_main(spec: WorkerSpec) -> None:
    """Process entry point (multiprocessing target). Exit code 0 on a normal end, 1 on error,
    130 on Ctrl-C."""
    logging.basicConfig(level=logging.WARNING, format=f"mpdp worker {spec.index}: %(message)s")
    try:
        asyncio.run(serve_parties(spec, parent=os.getppid(), freeze=True))
    except KeyboardInterrupt:
        sys.exit(130)
    except BaseException as exc:  # noqa: BLE001 - report one line, the runner names the worker
        first = first_leaf(exc)
        log.error("%s: %s", type(first).__name__, first)
        sys.exit(1)
