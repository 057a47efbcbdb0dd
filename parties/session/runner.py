"""Run a session end to end, for every protocol: broker, round engine, the parties' processes, rounds.

::

    open_broker(settings)                      mosquitto child / embedded amqtt / external URL
     └─ open_broker(party_broker)              only with --party-broker: the parties' (edge) broker
     └─ the protocol's store                   SQLite, resumable: recorded rounds are skipped
         └─ open_engine(protocol plug-in)      subscribed before any party exists
             (+ ValidatorPool with --validators N: processes that verify the party topics, validators.py)
             └─ WorkerPool(specs)              spawned processes, parties as asyncio tasks
                (DaskWorkerPool with --executor dask://HOST:PORT: tasks on a Dask cluster, dask_pool.py)
                  wait for every worker's "ready"
                  for each round: announce -> parties answer -> the engine closes, the protocol decides
                     or releases, the engine records and publishes
                  the protocol concludes (rr with party_rule: the parties' last decisions)
                  announce the end; workers exit (else terminated, then killed)

The protocol is ``config.protocol``: its :class:`mpdp.parties.rounds.registry.SessionProtocol`, found by name
(:func:`mpdp.parties.rounds.registry.session_protocol`: :mod:`mpdp.parties.rr.session`,
:mod:`mpdp.parties.curator.session`, :mod:`mpdp.parties.mpc.session`); a new protocol is one more entry there.
``mpdp observe`` (:mod:`mpdp.parties.session.observe`) drives its deployed session with the same
:func:`drive_rounds`.

Keys: the runner makes each party's Ed25519 key pair and hands the private key only to that party's
worker; the engine gets the roster of public keys, and the store keeps them (``roster_keys``: the transcript is
verifiable offline, ``mpdp verify RUN_DIR``, though no roster file was written). A coordinator key signs the
announcements.
Errors surface as one :class:`mpdp.protocols.errors.MpdpError` (never an ExceptionGroup). A worker that
reports "failed" (a party raised: the worker reports the cause at once), or whose process ends without a
word (killed: the event loop watches each process's sentinel), stops the run within a second, mid-round
too (:meth:`_Workers.watch` in the run's TaskGroup cancels the rounds; the pool terminates, then kills,
every worker), with a :class:`WorkerError` naming the worker, its parties, the cause or its exit code
(and the signal that killed it), and the round. A worker lost after its parties all answered the
session's last round (and no party decisions are to follow) cannot change the transcript: a warning
names it, and the run succeeds if the round completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager, nullcontext
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import open_broker
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.config import RunConfig, default_workers
from mpdp.parties.rounds.engine import RoundEngine
from mpdp.parties.rounds.outcome import RoundOutcome, RunOutcome
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.plan import PartyPlan
from mpdp.parties.rounds.registry import SessionProtocol, session_protocol
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.dask_pool import DaskWorkerPool
from mpdp.parties.session.estimate import resolve_connections
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.validators import open_validated_engine
from mpdp.parties.session.worker import WorkerSpec, WorkerSpecs
from mpdp.protocols.errors import MpdpError, WorkerError
from mpdp.protocols.numerics.cost import noun

T = TypeVar("T")
log = logging.getLogger("mpdp.run")

__all__ = [
    "PartyProcesses",
    "ProgressCallback",
    "RunConfig",
    "SessionProtocol",
    "bundled",
    "default_workers",
    "drive_rounds",
    "first_mpdp_error",
    "recorded_outcome",
    "run",
    "run_async",
    "surfacing_errors",
    "wait_for_status",
    "worker_specs",
]

#: Called as ``progress(rounds_done, messages_received)``, both counting what the store held at the start.
ProgressCallback = Callable[[int, int], None]
_TICK = 0.25
Engine = RoundEngine[Any, Any]


class PartyProcesses(Protocol):
    """The processes running the parties, as the round loop sees them."""

    async def ready(self, engine: Engine) -> None:
        """Return once every party is subscribed (WorkerError if a process failed or time ran out)."""
        ...

    def check(self, engine: Engine, outcome: RoundOutcome, when: str) -> None:
        """After round ``outcome``: raise WorkerError if a process died (``when`` says where the run stood),
        or report what the processes' absence means."""
        ...


async def wait_for_status(engine: Engine, ready: Callable[[], bool], timeout: float, poll: float) -> bool:
    """Wait until ``ready()`` holds, re-checking at each status report and every ``poll`` seconds.

    Returns:
        True once ready, False after ``timeout`` seconds (``ready`` may raise to stop earlier).
    """
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            return False
        engine.status_changed.clear()
        try:
            async with asyncio.timeout(poll):
                await engine.status_changed.wait()
        except TimeoutError:
            pass
    return True


class _Workers:
    """The run's own worker processes (:class:`mpdp.parties.session.pool.WorkerPool`).

    Args:
        round_names: the session's rounds; ``decisions``: the parties decide f after each round
            (their decisions come after the round closes, so a worker lost then loses some).
    """

    def __init__(self, pool: WorkerPool | DaskWorkerPool, workers: int, timeout: float, round_names: Sequence[str],
                 decisions: bool) -> None:
        self._pool, self._workers, self._timeout = pool, workers, timeout
        self._names, self._decisions = tuple(round_names), decisions
        self._rounds_started = False

    async def ready(self, engine: Engine) -> None:
        def all_ready() -> bool:
            self._pool.check(engine.failed_workers, "before the first round")
            return len(engine.ready_workers) >= self._workers

        if not await wait_for_status(engine, all_ready, self._timeout, 0.2):
            missing = sorted(set(range(self._workers)) - set(engine.ready_workers))
            raise WorkerError(f"worker(s) {missing} did not report ready within {self._timeout:g} s")
        self._rounds_started = True

    def _done_with(self, index: int, engine: Engine) -> bool:
        """Whether a worker lost during the last round ``index`` (and no party decisions are to follow)
        cannot change the transcript: each worker whose process ended has had all its parties heard."""
        if index != len(self._names) - 1 or self._decisions:
            return False
        heard = engine.answered
        return all(set(self._pool.parties_of(w)) <= heard for w in self._pool.exited())

    def check(self, engine: Engine, outcome: RoundOutcome, when: str) -> None:
        """Raise WorkerError if a worker failed or its process exited (naming each, its exit code and cause),
        unless the round was the session's last and had every party's answer (and no party decisions are to
        follow): the transcript is complete, which a worker's end cannot change; a warning says what happened."""
        lines = self._pool.problems(engine.failed_workers)
        if not lines:
            return
        if outcome.index == len(self._names) - 1 and outcome.absent.size == 0 and not self._decisions:
            log.warning("%s after every party answered the last round (%d): the transcript is complete",
                        "; ".join(lines), outcome.index)
            return
        raise WorkerError("; ".join(lines) + f" {when}")

    async def watch(self, engine: Engine) -> None:
        """Raise WorkerError as soon as a worker reports failure (signed, with its cause) or its process ends
        (its sentinel wakes this loop: :meth:`WorkerPool.on_exit`) before the first round or while a round
        is open (run next to the rounds in a TaskGroup, which then cancels them: the run fails within a
        second). A failure while a round closes is found when the next round opens, or after the last
        (:meth:`check`)."""
        self._pool.on_exit(engine.status_changed.set)
        while True:
            index = engine.open_round
            if not self._rounds_started or index is not None:
                where = ("before the first round" if index is None
                         else f"during round {index} ({self._names[index]!r})")
                self._pool.check(engine.failed_workers, f"({where}; the run stopped)",
                                 processes=index is None or not self._done_with(index, engine))
            engine.status_changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(_TICK):
                    await engine.status_changed.wait()


async def drive_rounds(
    engine: Engine, store: TranscriptStore, round_names: Sequence[str], recorded: frozenset[int],
    parties: PartyProcesses | None, on_round: Callable[[RoundOutcome], None], pipelined: bool = False,
) -> list[RoundOutcome]:
    """The round loop of every protocol and role: wait for the parties, run each round not yet recorded
    (load the others with the protocol), call ``on_round`` with each outcome, then finish the session.

    Args:
        parties: the processes to wait for and check; None when every round is recorded.
        pipelined: announce each round (not recorded) as soon as the one before stops collecting, while that one
            is decided and recorded (:meth:`mpdp.parties.rounds.engine.RoundEngine.run_round`'s ``following``):
            for rounds whose announcements do not depend on the decisions before them. Each outcome is reported
            (``on_round``) once it is recorded, as without.

    Raises:
        TransportError: the broker failed.
        WorkerError: parties not ready, a party process died.
    """
    if parties is not None:
        await parties.ready(engine)
    outcomes: list[RoundOutcome] = []
    for index, name in enumerate(round_names):
        if index in recorded:
            outcome = engine.protocol.load(store, engine.topics.session, index)
        else:
            following = index + 1 if pipelined and index + 1 < len(round_names) else None
            outcome = await engine.run_round(index, name, None if following is None or following in recorded
                                             else (following, round_names[following]))
            if parties is not None:
                parties.check(engine, outcome, f"during round {index + 1} ({name!r}), recorded with "
                                      f"{outcome.absent.size} absent {noun(outcome.absent.size, 'party', 'parties')}"
                                      f"; rounds 1-{index + 1} are in {store.where}")
        outcomes.append(outcome)
        on_round(outcome)
    await engine.finish(len(round_names))
    # a double release caught after its round was recorded (a late second answer) is in the store only
    return [dataclasses.replace(o, double_released=store.double_releases(engine.topics.session, o.index))
            for o in outcomes]


def _shared(config: RunConfig) -> bool:
    """Whether each worker serves its parties on one connection (``--connections per-worker``, or auto's choice)."""
    return resolve_connections(config.connections, config.k)[0] == "per-worker"


def bundled(config: RunConfig) -> bool:
    """Whether the workers send their parties' answers in bundles (:mod:`mpdp.broker.bundle`): one connection
    per worker and the observer reading the answers itself (no validator processes, which read party topics)."""
    return _shared(config) and not config.validators


def worker_specs(
    config: RunConfig, endpoint: BrokerEndpoint, private_keys: Sequence[bytes], coordinator_public: bytes,
    plan: PartyPlan,
) -> WorkerSpecs:
    """Split the k parties over ``min(config.workers, k)`` workers in contiguous id ranges, running
    ``plan.start`` with ``plan.seeds`` (None in deployment mode), ``plan.ledgers`` (None: fresh
    ledgers at ``config.delta_slack``) and ``plan.decisions``; each worker's spec is built when it is taken
    (:class:`WorkerSpecs`: the pool spawns one worker at a time)."""
    seeds, ledgers = plan.seeds, plan.ledgers
    fresh = PrivacyLedger(delta_slack=config.delta_slack)
    assert config.workers is not None  # RunConfig.__post_init__ resolves None to default_workers()
    workers = min(config.workers, config.k)
    bounds = np.linspace(0, config.k, workers + 1).round().astype(int)
    idle = config.ready_timeout + 2 * config.round_timeout + 30.0
    shared, bundle = _shared(config), bundled(config)

    def build(w: int) -> WorkerSpec:
        return WorkerSpec(
            index=w, endpoint=endpoint, session=config.session, coordinator_key=coordinator_public,
            parties=tuple(
                PartySpec(i, config.bits[i].copy(), config.mechanisms[i], private_keys[i],
                          None if seeds is None else seeds[i], config.budget, fresh if ledgers is None else ledgers[i],
                          max_repetitions=config.repetitions)  # a simulation's cap: its own repetitions
                for i in range(bounds[w], bounds[w + 1])
            ),
            secure=config.secure, idle_timeout=idle, connect_concurrency=config.connect_concurrency,
            decisions=plan.decisions, start=plan.start, shared=shared, bundle=bundle,
        )

    return WorkerSpecs(workers, build)


async def run_async(config: RunConfig, progress: ProgressCallback | None = None) -> RunOutcome:
    """Run the session of ``config`` in its protocol; see the module docstring for the sequence.

    Args:
        config: the run.
        progress: called as ``progress(rounds_done, messages_received)`` about 4 times a second
            and after every round; both count the rounds recorded before (a resumed run) from the start.

    Returns:
        The :class:`RunOutcome` (every round, also in the store at ``config.store_path``).

    Raises:
        TransportError: the broker is unreachable (before any process starts) or went away.
        WorkerError: a worker process died or failed (named, with its parties).
        ParameterError: secure mode without :mod:`mpdp.protocols.randomization.secure`, what the protocol refuses
            (e.g. the curator's function), a session stored with other parameters, an unwritable store.
    """
    return await surfacing_errors(_run(config, progress or (lambda rounds, messages: None)))


async def _run(config: RunConfig, progress: ProgressCallback) -> RunOutcome:
    start = time.perf_counter()
    plug = session_protocol(config.protocol)
    plug.check(config)
    seeds = None if config.secure else SeedTree.from_seed(config.seed)
    roster, private_keys = Roster.generate(config.mechanisms)
    coordinator_private, coordinator_public = generate_key_pair()
    topics = Topics(config.session)
    async with open_broker(config.broker) as endpoint, _party_broker(config, endpoint) as party_endpoint:
        with plug.open_store(config) as (store, recorded):
            store.record_roster(config.session, roster.public_keys)  # this run's keys, for mpdp verify
            protocol = plug.round_protocol(config, topics, roster, store, seeds)
            async with open_validated_engine(endpoint, topics, roster, store, coordinator_private, protocol,
                                             repetitions=config.repetitions, round_timeout=config.round_timeout,
                                             validators=config.validators, ready_timeout=config.ready_timeout,
                                             bundles=bundled(config)) as engine:
                done: list[RoundOutcome] = []
                loaded = sum(protocol.load(store, config.session, i).messages_received for i in recorded)

                def report(outcome: RoundOutcome | None = None) -> None:  # recorded rounds count from the start
                    done.extend([] if outcome is None or outcome.index in recorded else [outcome])
                    progress(len(recorded) + len(done), loaded + engine.messages_received)

                async with asyncio.TaskGroup() as tg:
                    ticker = tg.create_task(_tick(report), name="progress")
                    if len(recorded) == len(config.round_names):
                        outcomes = await drive_rounds(engine, store, config.round_names, recorded, None, report)
                    else:
                        earlier = [protocol.load(store, config.session, i) for i in sorted(recorded)]
                        pool, count = _party_pool(config, plug.party_plan(config, seeds, earlier), party_endpoint,
                                                  private_keys, coordinator_public)
                        async with pool:
                            workers = _Workers(pool, count, config.ready_timeout, config.round_names,
                                               config.party_rule is not None)
                            watchdog = tg.create_task(workers.watch(engine), name="watch-workers")
                            outcomes = await drive_rounds(engine, store, config.round_names, recorded, workers,
                                                          report, pipelined=plug.pipelined(config))
                            watchdog.cancel()
                    ticker.cancel()
            rounds, spent = plug.finish(config, store, outcomes)
            wall = time.perf_counter() - start
    return RunOutcome(
        broker_kind=endpoint.kind, broker_url=endpoint.url, wall_time=wall, rounds=rounds,
        protocol=config.protocol, session=config.session, store_path=config.store_path,
        seed_entropy=None if seeds is None else seeds.seed,
        spent=spent, delta_slack=config.delta_slack,
    )


def recorded_outcome(config: RunConfig, broker_kind: Literal["mosquitto", "embedded", "external"], broker_url: str,
                     wall_time: float) -> RunOutcome | None:
    """The run of ``config`` as its store holds it, when every round is recorded there: what :func:`run_async`
    returned when it ran them, read without starting anything (no broker, no process; the store is only read).
    A complete run resumed (``mpdp simulate --resume`` of a finished run) returns this; the broker and wall time
    are those the run recorded.

    Returns:
        The :class:`RunOutcome`, or None when a round of ``config.round_names`` is not recorded (the run has
        rounds to run).

    Raises:
        ParameterError: the store holds the session with other parameters, or cannot be opened.
    """
    plug = session_protocol(config.protocol)
    with plug.open_store(config) as (store, recorded):
        if len(recorded) < len(config.round_names):
            return None
        outcomes = [plug.load(store, config.session, i) for i in range(len(config.round_names))]
        rounds, spent = plug.finish(config, store, outcomes)
    return RunOutcome(
        broker_kind=broker_kind, broker_url=broker_url, wall_time=wall_time, rounds=rounds,
        protocol=config.protocol, session=config.session, store_path=config.store_path,
        seed_entropy=None if config.secure else SeedTree.from_seed(config.seed).seed, spent=spent, delta_slack=config.delta_slack,
    )


def _party_pool(config: RunConfig, plan: PartyPlan, endpoint: BrokerEndpoint, private_keys: Sequence[bytes],
                coordinator_public: bytes) -> tuple[WorkerPool | DaskWorkerPool, int]:
    """The pool of the parties' workers (not started) and their number. The specs are built one worker at a
    time as the pool spawns it, and not kept (the pool keeps each worker's party ids): at 10^6 parties their
    seeds, keys and bits are most of this process's memory."""
    specs = worker_specs(config, endpoint, private_keys, coordinator_public, plan)
    return (WorkerPool(specs) if config.executor is None else DaskWorkerPool(specs, config.executor)), len(specs)


def _party_broker(config: RunConfig, endpoint: BrokerEndpoint) -> AbstractAsyncContextManager[BrokerEndpoint]:
    """The parties' broker: ``config.party_broker`` (checked with one connection), else the observer's."""
    return nullcontext(endpoint) if config.party_broker is None else open_broker(config.party_broker)


async def _tick(report: Callable[[], None]) -> None:
    while True:
        await asyncio.sleep(_TICK)
        report()


async def surfacing_errors(run: Awaitable[T]) -> T:
    """Await ``run``; an ExceptionGroup from its TaskGroups surfaces as its first MpdpError
    (or KeyboardInterrupt), so callers see one error, never a group."""
    try:
        return await run
    except BaseExceptionGroup as group:
        raise first_mpdp_error(group) from group


def first_mpdp_error(group: BaseExceptionGroup) -> BaseException:
    """The first MpdpError (depth first) in a group from a TaskGroup, else the group itself."""
    for exc in group.exceptions:
        if isinstance(exc, BaseExceptionGroup):
            found = first_mpdp_error(exc)
            if found is not exc:
                return found
        elif isinstance(exc, MpdpError | KeyboardInterrupt):
            return exc
    return group


def run(config: RunConfig, progress: ProgressCallback | None = None) -> RunOutcome:
    """Synchronous :func:`run_async` (calls ``asyncio.run``; for the CLI edge)."""
    return asyncio.run(run_async(config, progress))
