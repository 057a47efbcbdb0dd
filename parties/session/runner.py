"""Run a session end to end: broker, central observer, worker processes running the parties.

::

    open_broker(settings)                      mosquitto child / embedded amqtt / external URL
     └─ TranscriptStore(store_path)            SQLite, resumable: recorded rounds are skipped
         └─ open_observer(...)                 subscribed before any party exists
             └─ WorkerPool(specs)              spawned processes, parties as asyncio tasks
                  wait for every worker's "ready"
                  for each round: announce -> parties answer -> observer closes, decides, records
                     [party_rule: observer publishes the transcript -> each participant decides f itself]
                  [party_rule: wait for the parties' decisions (at most round_timeout)]
                  announce the end; workers exit (else terminated, then killed)

Privacy: each party keeps its own ledger and, with ``budget``, abstains (``budget-exhausted``) from a
round that would take it past the budget. The runner recomputes every party's ledger from the recorded
transcript (:func:`mpdp.parties.rounds.privacy.ledgers_from_rounds`): to hand it to the party when a stored session
is resumed, and for :attr:`RunOutcome.spent` at the end.

Keys: the runner makes each party's Ed25519 key pair and hands the private key only to that party's
worker; the observer gets the roster of public keys. A coordinator key signs the announcements.
Errors surface as one :class:`mpdp.protocols.errors.MpdpError` (never an ExceptionGroup); a worker that
dies makes its parties absent from the round in progress, which closes at its timeout, then the run
stops with a :class:`WorkerError` naming the worker, its parties and the round.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import math
import os
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import numpy as np

from mpdp.analysis.accounting import Budget, PrivacyLedger
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import open_broker
from mpdp.broker.messages import MAX_REPETITIONS
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics, check_session
from mpdp.parties.rr.decisions import PartyDecisionSpec
from mpdp.parties.rr.observer import Observer, open_observer
from mpdp.parties.rounds.outcome import RoundOutcome, RunOutcome
from mpdp.parties.rr.party import PartySpec, secure_sampler
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.seeds import SeedTree
from mpdp.parties.rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    ledgers_from_rounds,
)
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.worker import WorkerSpec
from mpdp.protocols.errors import MpdpError, ParameterError, WorkerError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.mechanisms import RandomizedResponse
from mpdp.protocols.rule_factory import decision_rule
from mpdp.protocols.rules import RULE_KINDS, RuleFactory

T = TypeVar("T")

__all__ = [
    "ProgressCallback",
    "RunConfig",
    "default_workers",
    "first_mpdp_error",
    "run",
    "run_async",
    "surfacing_errors",
    "wait_ready",
    "worker_specs",
]

#: Called as ``progress(rounds_done, messages_received)``.
ProgressCallback = Callable[[int, int], None]
_TICK = 0.25


def default_workers() -> int:
    """One worker process per core."""
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True, slots=True, eq=False)
class RunConfig:
    """One end-to-end run.

    Attributes:
        session: session id (topics ``mpdp/{session}/...``, the store key), ``[A-Za-z0-9_.-]{1,64}``.
        round_names: R names, one per round (a bill).
        bits: int8 (k, R): party i's private bit in round r, 0 or 1, or -1 (takes no part: abstains).
        mechanisms: k randomized responses (public).
        repetitions: independent releases per party and round (a simulation device), >= 1.
        seed: root seed of the simulation (None: OS entropy); ignored in deployment mode.
        function, measure: f and the accuracy measure w (|Y| x |Y|) of the decision rule.
        broker: where the broker is (:class:`mpdp.broker.settings.BrokerSettings`).
        workers: worker processes (at most k are used); None = :func:`default_workers`, one per core.
        store_path: the SQLite transcript store.
        secure: deployment mode (parties sample with :mod:`mpdp.protocols.secure`).
        round_timeout: seconds a round stays open before the missing parties are recorded absent.
        ready_timeout: seconds to wait for every worker to have its parties subscribed.
        connect_concurrency: parties of one worker connecting at the same time, at most.
        rule_factory: builds the observer's rule; None = the posterior average rule for ``measure``
            (:func:`mpdp.protocols.rule_factory.decision_rule` with ``engine="posterior"``).
        budget: every party's privacy budget (None: nobody is stopped, spending is still accounted).
        delta_slack: delta_tilde of the accounting (exact optimum of 000 Theorem 3.3), in [0, 1).
        party_rule: None, or ``"average"`` / ``"worst-case"``: every participant also decides f
            itself with its optimal rule of that kind (zero-one measure) from the published transcript
            and its own bit; :attr:`RoundOutcome.party_decisions` holds the decisions.

    Raises:
        ParameterError: any field out of its domain (named, with what is allowed).
    """

    session: str
    round_names: tuple[str, ...]
    bits: np.ndarray
    mechanisms: tuple[RandomizedResponse, ...]
    repetitions: int
    seed: int | None
    function: BooleanFunction
    measure: np.ndarray
    broker: BrokerSettings
    workers: int | None
    store_path: Path
    secure: bool = False
    round_timeout: float = 30.0
    ready_timeout: float = 60.0
    connect_concurrency: int = 32
    rule_factory: RuleFactory | None = None
    budget: Budget | None = None
    delta_slack: float = DEFAULT_DELTA_SLACK
    party_rule: str | None = None

    def __post_init__(self) -> None:
        if self.party_rule is not None and self.party_rule not in RULE_KINDS:
            raise ParameterError("party_rule", self.party_rule, "None or one of " + ", ".join(RULE_KINDS))
        if self.party_rule is not None and self.function.count_values(1) is None:
            raise ParameterError("function", self.function.name, "a symmetric function for party decisions")
        check_session(self.session)
        object.__setattr__(self, "delta_slack", check_privacy_options(self.budget, self.delta_slack))
        names = tuple(str(n) for n in self.round_names)
        bits = np.array(self.bits)
        k = len(self.mechanisms)
        if k < 1 or not all(isinstance(m, RandomizedResponse) for m in self.mechanisms):
            raise ParameterError("mechanisms", self.mechanisms, "one RandomizedResponse per party, k >= 1")
        if bits.ndim != 2 or bits.shape != (k, len(names)) or not names:
            raise ParameterError("bits", bits.shape, f"shape (k, R) = ({k}, {len(names)}), R >= 1")
        if not np.isin(bits, (-1, 0, 1)).all():
            raise ParameterError("bits", sorted(set(np.unique(bits).tolist()) - {-1, 0, 1}), "values 0, 1, -1")
        if any(len(n) > 200 for n in names):
            raise ParameterError("round_names", max(names, key=len), "names of at most 200 characters")
        bits = bits.astype(np.int8)
        bits.flags.writeable = False
        _check_int("repetitions", self.repetitions, 1, MAX_REPETITIONS)
        if self.workers is None:
            object.__setattr__(self, "workers", default_workers())
        _check_int("workers", self.workers, 1, 4096)
        _check_int("connect_concurrency", self.connect_concurrency, 1, 100_000)
        if self.seed is not None:
            _check_int("seed", self.seed, 0, None)
        for name in ("round_timeout", "ready_timeout"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ParameterError(name, value, "a finite number of seconds > 0")
        measure = np.asarray(self.measure, dtype=np.float64)
        if measure.ndim != 2 or measure.shape[0] != measure.shape[1]:
            raise ParameterError("measure", measure.shape, "a square |Y| x |Y| matrix")
        if not isinstance(self.broker, BrokerSettings):
            raise ParameterError("broker", self.broker, "a BrokerSettings (BrokerSettings.from_url)")
        object.__setattr__(self, "round_names", names)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "mechanisms", tuple(self.mechanisms))
        object.__setattr__(self, "measure", measure)
        object.__setattr__(self, "store_path", Path(self.store_path))

    @property
    def k(self) -> int:
        """The number of parties."""
        return len(self.mechanisms)


def _check_int(name: str, value: object, low: int, high: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < low or (
        high is not None and value > high
    ):
        allowed = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise ParameterError(name, value, allowed)


def worker_specs(
    config: RunConfig, endpoint: BrokerEndpoint, private_keys: Sequence[bytes], coordinator_public: bytes,
    seeds: Sequence[np.random.SeedSequence] | None, ledgers: Sequence[PrivacyLedger] | None = None,
) -> list[WorkerSpec]:
    """Split the k parties over ``min(config.workers, k)`` workers in contiguous id ranges.

    ``seeds`` (simulation) are the parties' seed sequences, None in deployment mode; ``ledgers`` the
    parties' privacy ledgers so far (None: fresh ledgers at ``config.delta_slack``)."""
    if ledgers is None:
        ledgers = [PrivacyLedger(delta_slack=config.delta_slack)] * config.k
    workers = min(config.workers, config.k)
    bounds = np.linspace(0, config.k, workers + 1).round().astype(int)
    idle = config.ready_timeout + 2 * config.round_timeout + 30.0
    deciding = None if config.party_rule is None else PartyDecisionSpec(
        config.mechanisms, config.function.name, config.party_rule)
    return [
        WorkerSpec(
            index=w, endpoint=endpoint, session=config.session, coordinator_key=coordinator_public,
            parties=tuple(
                PartySpec(i, config.bits[i].copy(), config.mechanisms[i], private_keys[i],
                          None if seeds is None else seeds[i], config.budget, ledgers[i])
                for i in range(bounds[w], bounds[w + 1])
            ),
            secure=config.secure, idle_timeout=idle, connect_concurrency=config.connect_concurrency,
            decisions=deciding,
        )
        for w in range(workers)
    ]


async def wait_ready(observer: Observer, pool: WorkerPool, workers: int, timeout: float) -> None:
    """Wait until ``workers`` workers reported ready to ``observer``; fail fast if one died.

    Raises:
        WorkerError: a worker died or failed, or ``timeout`` seconds passed.
    """
    deadline = time.monotonic() + timeout
    while len(observer.ready_workers) < workers:
        pool.check(observer.failed_workers, "before the first round")
        if time.monotonic() > deadline:
            missing = sorted(set(range(workers)) - set(observer.ready_workers))
            raise WorkerError(f"worker(s) {missing} did not report ready within {timeout:g} s")
        observer.status_changed.clear()
        try:
            async with asyncio.timeout(0.2):
                await observer.status_changed.wait()
        except TimeoutError:
            pass


async def _rounds(
    config: RunConfig, observer: Observer, pool: WorkerPool | None, store: TranscriptStore,
    recorded: frozenset[int], progress: ProgressCallback | None,
) -> list[RoundOutcome]:
    outcomes: list[RoundOutcome] = []
    loaded = 0  # messages of rounds recorded by an earlier run

    def report() -> None:
        if progress is not None:
            progress(len(outcomes), loaded + observer.messages_received)

    async def tick() -> None:
        while True:
            await asyncio.sleep(_TICK)
            report()

    async with asyncio.TaskGroup() as tg:
        ticker = tg.create_task(tick(), name="progress") if progress is not None else None
        for index, name in enumerate(config.round_names):
            if index in recorded:
                outcomes.append(store.load_round(config.session, index))
                loaded += outcomes[-1].messages_received
            else:
                outcome = await observer.run_round(index, name)
                outcomes.append(outcome)
                if pool is not None:
                    pool.check(observer.failed_workers,
                               f"during round {index} ({name!r}), recorded with {outcome.absent.size} absent "
                               f"part{'y' if outcome.absent.size == 1 else 'ies'}; rounds 0-{index} are in "
                               f"{config.store_path}")
            report()
        if ticker is not None:
            ticker.cancel()
    return outcomes


async def run_async(config: RunConfig, progress: ProgressCallback | None = None) -> RunOutcome:
    """Run the session of ``config``; see the module docstring for the sequence.

    Args:
        config: the run.
        progress: called as ``progress(rounds_done, messages_received)`` about 4 times a second
            and after every round.

    Returns:
        The :class:`RunOutcome` (every round, also in the store at ``config.store_path``).

    Raises:
        TransportError: the broker is unreachable (before any process starts) or went away.
        WorkerError: a worker process died or failed (named, with its parties).
        ParameterError: secure mode without :mod:`mpdp.protocols.secure`, a session stored with
            other parameters, an unwritable store.
    """
    return await surfacing_errors(_run(config, progress))


async def _run(config: RunConfig, progress: ProgressCallback | None) -> RunOutcome:
    start = time.perf_counter()
    rule_factory = config.rule_factory or functools.partial(decision_rule, engine="posterior")
    if config.secure:
        secure_sampler()  # fail before anything starts
    tree = None if config.secure else SeedTree.from_seed(config.seed)
    seeds = None if tree is None else tree.parties(config.k)
    roster, private_keys = Roster.generate(config.mechanisms)
    coordinator_private, coordinator_public = generate_key_pair()
    topics = Topics(config.session)
    rounds_total = len(config.round_names)
    async with open_broker(config.broker) as endpoint:
        with TranscriptStore(config.store_path) as store:
            recorded = store.open_session(config.session, config.k, config.repetitions, config.round_names)
            async with open_observer(
                endpoint, topics, roster, store, coordinator_private, function=config.function,
                measure=config.measure, repetitions=config.repetitions, round_timeout=config.round_timeout,
                rule_factory=rule_factory, party_decisions=config.party_rule is not None,
                decision_seed=None if tree is None else tree.observer_decisions(), secure=config.secure,
            ) as observer:
                if len(recorded) == rounds_total:
                    outcomes = await _rounds(config, observer, None, store, recorded, progress)
                else:
                    earlier = [store.load_round(config.session, index) for index in sorted(recorded)]
                    ledgers = ledgers_from_rounds(earlier, config.mechanisms, config.repetitions, config.delta_slack)
                    specs = worker_specs(config, endpoint, private_keys, coordinator_public, seeds, ledgers)
                    async with WorkerPool(specs) as pool:
                        await wait_ready(observer, pool, len(specs), config.ready_timeout)
                        outcomes = await _rounds(config, observer, pool, store, recorded, progress)
                        if config.party_rule is not None:
                            await observer.collect_party_decisions(config.round_timeout)
                        await observer.announce_end(rounds_total)
                if config.party_rule is not None:
                    outcomes = [_with_party_decisions(store, config, o) for o in outcomes]
                wall = time.perf_counter() - start
    ledgers = ledgers_from_rounds(outcomes, config.mechanisms, config.repetitions, config.delta_slack)
    return RunOutcome(
        broker_kind=endpoint.kind, broker_url=endpoint.url, wall_time=wall, rounds=tuple(outcomes),
        session=config.session, store_path=config.store_path,
        seed_entropy=None if tree is None else tree.seed,
        spent=tuple(ledger.spent() for ledger in ledgers), delta_slack=config.delta_slack,
    )


def _with_party_decisions(store: TranscriptStore, config: RunConfig, outcome: RoundOutcome) -> RoundOutcome:
    stored = store.party_decisions(config.session, outcome.index)
    matrix = np.full((outcome.participants.size, config.repetitions), -1, dtype=np.int64)
    for j, party in enumerate(outcome.participants):
        if int(party) in stored:
            matrix[j] = stored[int(party)]
    return dataclasses.replace(outcome, party_decisions=matrix)


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
