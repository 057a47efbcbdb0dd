"""The central observer and coordinator of a deployment (``mpdp observe``), in one process.

::

    a session in progress in store_path      without resume: refused at once, naming --resume
    check the broker                         one MQTT connect, else a one-line TransportError
    TranscriptStore(store_path)              SQLite; rounds recorded by an earlier run are skipped
     └─ open_engine(Observer(...))           subscribed to every party topic and the status topic
                                             (with validators N: N processes read the party topics)
          wait until the hosts that reported "ready" cover every party of the roster
          (a host's "failed" report, or wait_parties seconds, stops here with the missing ids)
          for each round not yet recorded: announce (signed), collect until every party answered
          or no new answer for round_timeout, decide with the optimal rule, record in one transaction
          announce the end: the parties leave, their hosts exit
          (on an error: a failed end naming it, when the broker is reachable: the hosts leave at once)

``protocol="mpc"``: the coordinator of the secure computation instead of the observer
(:class:`mpdp.parties.mpc.coordinator.MpcCoordinator` with the roster's compute servers reached over the
broker, :class:`mpdp.parties.mpc.remote.BrokerServers`): it waits for every ``mpdp mpc-server`` of the
roster at the first round, hands each server its sealed shares, checks every server's signed release and
records it (:class:`mpdp.parties.mpc.store.MpcStore`).

The observer does not know the parties' bits: it reports decisions and its posterior, never an
accuracy (comparing with the truth is ``mpdp simulate``'s job). A host that fails or disappears during
the rounds makes its parties absent (recorded so) and the session goes on; it is reported by name on
stderr (:class:`_Hosts`). A round with no answer at all is ``failed`` (no decision). The round loop is the runner's
(:func:`mpdp.parties.session.runner.drive_rounds`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mpdp.broker.connectivity import wait_for_broker
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.central import central_privacy_level
from mpdp.parties.mpc.coordinator import MpcCoordinator
from mpdp.parties.mpc.remote import BrokerServers
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.session_files import SessionRoster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rounds.validator_count import check_validators
from mpdp.parties.rr.observer import Observer
from mpdp.parties.session.runner import (
    Engine,
    drive_rounds,
    surfacing_errors,
    wait_for_status,
)
from mpdp.parties.session.validators import open_validated_engine
from mpdp.protocols.errors import MpdpError, ParameterError, WorkerError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.rules.rule_factory import zero_one_rules

__all__ = ["HOSTS_MODE", "ObserveConfig", "observe", "observe_async", "wait_for_parties"]

#: The mode a deployed session records: the observer draws nothing, each ``mpdp party`` host chooses.
HOSTS_MODE = "deployment (each party host: CSPRNG, or seeded generators with mpdp party --seed)"

_POLL = 0.5
#: Seconds between the progress lines of the wait for the parties' ready reports.
PROGRESS_EVERY = 15.0
log = logging.getLogger("mpdp.observe")


@dataclass(frozen=True, slots=True)
class ObserveConfig:
    """One deployed session, as the observer and coordinator see it.

    Attributes:
        facts: the session's roster (``roster.json``).
        coordinator_key: the coordinator's raw Ed25519 private key (not in the repr).
        endpoint: the running broker.
        round_names: R names, one per round (a bill).
        function: a symmetric f the observer computes over each round's participants.
        store_path: the SQLite transcript store.
        repetitions: releases each party sends per round (1 in a deployment: each spends privacy).
        round_timeout: seconds without a new answer after which a round closes and the missing parties are
            recorded absent (the quiet time pauses while the observer cannot reach the broker).
        wait_parties: seconds to wait for every party to be ready before the first round (and, for mpc, for
            every compute server).
        resume: the session is in progress and this observer replaces one that stopped (killed,
            crashed): the hosts reported ready to that one and are serving, so do not wait for ready
            reports; continue at the first round not recorded in ``store_path`` (re-announced: the
            parties re-send their recorded answers, never a fresh draw).
        protocol: ``"rr"`` (the observer) or ``"mpc"`` (the secure computation's coordinator; the function
            is the majority or the sum, one (epsilon, delta) for every party).
        validators: validator processes that verify the parties' messages on an MQTT 5 shared
            subscription for the observer (:mod:`mpdp.parties.session.validators`); 0 = the observer
            reads them itself. rr only. Refused on a broker without a login (``endpoint.username`` None)
            unless ``allow_anonymous_broker``: a deployed observer's validators log in (``mpdp broker config
            --validators N``).
        allow_anonymous_broker: accept validators on a broker without a login (a simulation or test broker).

    Raises:
        ParameterError: a field out of its domain.
    """

    facts: SessionRoster
    coordinator_key: bytes = field(repr=False)
    endpoint: BrokerEndpoint
    round_names: tuple[str, ...]
    function: BooleanFunction
    store_path: Path
    repetitions: int = 1
    round_timeout: float = 60.0
    wait_parties: float = 300.0
    resume: bool = False
    protocol: str = "rr"
    validators: int = 0
    allow_anonymous_broker: bool = False

    def __post_init__(self) -> None:
        if self.protocol not in ("rr", "mpc") or (self.protocol == "mpc" and self.facts.servers is None):
            raise ParameterError("protocol", self.protocol, "rr, or mpc with a roster from mpdp keys --protocol mpc")
        names = tuple(str(n) for n in self.round_names)
        if not names or any(len(n) > 200 for n in names):
            raise ParameterError("round_names", names[:3], "at least one round, names of at most 200 characters")
        if self.function.count_values(1) is None:
            raise ParameterError("function", self.function.name,
                                 "a symmetric function (majority/passed, sum, xor, and, or, threshold:T)")
        if isinstance(self.repetitions, bool) or not isinstance(self.repetitions, int) or self.repetitions < 1:
            raise ParameterError("repetitions", self.repetitions, "an integer >= 1")
        for name in ("round_timeout", "wait_parties"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ParameterError(name, value, "a finite number of seconds > 0")
        check_validators(self.validators, self.endpoint.kind, self.protocol)
        if self.validators and self.endpoint.username is None and not self.allow_anonymous_broker:
            raise ParameterError("validators", self.validators, "", message=(
                f"validators={self.validators} refuse a broker without a login ({self.endpoint.url}): anyone on it "
                "could read the party topics and join the share group; use the logins of `mpdp broker config "
                "--validators N`, or --allow-anonymous-broker for a simulation or test broker"))
        object.__setattr__(self, "round_names", names)
        object.__setattr__(self, "store_path", Path(self.store_path))


async def wait_for_parties(engine: Engine, k: int, timeout: float,
                           report: Callable[[str], None] = lambda line: None, where: str = "") -> None:
    """Return once the hosts that reported ``ready`` to ``engine`` cover parties 0..k-1.

    ``report`` gets one line when the wait begins (``where``: the broker's URL) and one every
    :data:`PROGRESS_EVERY` seconds while parties are missing (how many are ready, which are missing).

    Raises:
        WorkerError: a host reported ``failed`` (its parties and reason are named), or
            ``timeout`` seconds passed (the parties not ready are named).
    """
    def missing() -> set[int]:
        return set(range(k)) - {p for status in engine.ready_workers.values() for p in status.parties}

    def all_ready() -> bool:
        if engine.failed_workers:
            raise WorkerError("; ".join(
                f"party host {index} (parties {format_ranges(status.parties)}) failed: {status.detail}"
                for index, status in sorted(engine.failed_workers.items())))
        return not missing()

    deadline = time.monotonic() + timeout
    if all_ready():
        return
    report(f"waiting up to {timeout:g} s for the ready reports of {k} {noun(k, 'party', 'parties')} on "
           f"{where or 'the broker'} (mpdp party hosts)")
    while not await wait_for_status(engine, all_ready, chunk := max(0.0, min(PROGRESS_EVERY, deadline - time.monotonic())),
                                    min(_POLL, chunk)):
        if time.monotonic() >= deadline:
            raise WorkerError(f"parties {format_ranges(missing())} did not report ready within {timeout:g} s "
                              "(is an `mpdp party` running for them, on the same broker and roster?)")
        report(f"{k - len(missing())} of {k} parties ready after {timeout - (deadline - time.monotonic()):.0f} s "
               f"(missing {format_ranges(missing())}; waiting up to {timeout:g} s)")


class _Hosts:
    """The deployment's party hosts (``mpdp party``): waited for; one that fails or disappears later
    leaves its parties absent and the session goes on, but it is reported by name: a host whose every
    party is absent from a round (killed, cut off), once when it goes silent and once if it comes back,
    a host's signed "failed" report once (the engine waits for none of its parties from then on: each round
    closes once the other hosts answered, not after ``round_timeout``), and the hosts still silent at the end."""

    def __init__(self, k: int, timeout: float, resume: bool = False,
                 report: Callable[[str], None] = lambda line: None, where: str = "") -> None:
        self.k, self.timeout, self.resume = k, timeout, resume
        self._report, self._where = report, where
        #: host index -> the first round it sent nothing in (while silent)
        self.silent: dict[int, int] = {}
        self._failed_reported: set[int] = set()

    async def ready(self, engine: Engine) -> None:
        if not self.resume:  # a resumed session's hosts reported ready to the observer this one replaces
            await wait_for_parties(engine, self.k, self.timeout, self._report, self._where)

    def check(self, engine: Engine, outcome: RoundOutcome, when: str) -> None:
        absent = set(outcome.absent.tolist())
        for index, status in sorted(engine.failed_workers.items()):
            if index not in self._failed_reported:
                self._failed_reported.add(index)
                log.error("party host %d (parties %s) failed: %s; its parties are absent from now on",
                          index, format_ranges(status.parties), status.detail)
        for index, status in sorted(engine.ready_workers.items()):
            if index in engine.failed_workers:
                continue  # named above, once
            gone = set(status.parties) <= absent
            if gone and index not in self.silent:
                self.silent[index] = outcome.index
                log.error("party host %d (parties %s) sent nothing in round %d (%s): killed or cut off? its "
                          "parties are recorded absent until it is back", index, format_ranges(status.parties),
                          outcome.index, outcome.name)
            elif not gone and index in self.silent:
                first = self.silent.pop(index)
                log.warning("party host %d (parties %s) is back at round %d (absent from round %d on)",
                            index, format_ranges(status.parties), outcome.index, first)

    def report_silent(self, engine: Engine) -> None:
        """Name the hosts that were still silent when the session ended."""
        for index, first in sorted(self.silent.items()):
            log.error("party host %d (parties %s) was gone from round %d to the end of the session", index,
                      format_ranges(engine.ready_workers[index].parties), first)


def _check_restart(config: ObserveConfig) -> None:
    """Refuse at once (before the broker is tried: it may be down for minutes) to start over a session in
    progress without ``resume``: its hosts reported ready to the observer that stopped and will not again,
    so waiting for them would only time out.

    Raises:
        MpdpError: the store holds some, not all, of the session's rounds and ``config.resume`` is off.
    """
    if config.resume or not config.store_path.exists():
        return
    with TranscriptStore(config.store_path) as store:
        recorded = store.recorded_rounds(config.facts.session)
    if recorded and len(recorded) < len(config.round_names):
        raise MpdpError(f"store {config.store_path} holds rounds {format_ranges(recorded)} of session "
                        f"{config.facts.session} in progress; --resume continues it")


async def observe_async(
    config: ObserveConfig, on_round: Callable[[RoundOutcome], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> tuple[RoundOutcome, ...]:
    """Run the session of ``config`` (module docstring).

    Args:
        on_round: called with each round's outcome as it is decided (or loaded from the store).
        on_wait: called with a progress line while the parties' ready reports are awaited
            (:func:`wait_for_parties`).

    Returns:
        One :class:`RoundOutcome` per round, in order (also in the store).

    Raises:
        TransportError: the broker is unreachable or went away.
        WorkerError: a party host failed, or parties not ready in time.
        ParameterError: a store holding this session with other parameters, an unwritable store.
        MpdpError: the store holds this session in progress (some rounds, not all) and ``config.resume`` is
            off (one line naming the rounds and ``--resume``, before any wait).
    """
    return await surfacing_errors(_observe(config, on_round or (lambda outcome: None), on_wait or (lambda line: None)))


async def _observe(config: ObserveConfig, on_round: Callable[[RoundOutcome], None],
                   on_wait: Callable[[str], None]) -> tuple[RoundOutcome, ...]:
    _check_restart(config)
    await wait_for_broker(config.endpoint)
    roster, session = config.facts.roster, config.facts.session
    topics = Topics(session)
    if config.protocol == "mpc":
        return await _coordinate_mpc(config, on_round, on_wait)
    with TranscriptStore(config.store_path) as store:
        recorded = store.open_session(session, roster.k, config.repetitions, config.round_names, mode=HOSTS_MODE)
        store.record_roster(session, roster.public_keys)  # for mpdp verify without the roster file
        observer = Observer(topics, roster, store, function=config.function, measure=np.eye(2),
                            rule_factory=zero_one_rules(engine="posterior"))
        async with open_validated_engine(config.endpoint, topics, roster, store, config.coordinator_key, observer,
                                         repetitions=config.repetitions, round_timeout=config.round_timeout,
                                         validators=config.validators, announce_failure=True,
                                         skip_failed=True) as engine:
            hosts = (_Hosts(roster.k, config.wait_parties, config.resume, on_wait, config.endpoint.url)
                     if len(recorded) < len(config.round_names) else None)
            outcomes = await drive_rounds(engine, store, config.round_names, recorded, hosts, on_round)
            if hosts is not None:
                hosts.report_silent(engine)
    return tuple(outcomes)


async def _coordinate_mpc(config: ObserveConfig, on_round: Callable[[RoundOutcome], None],
                          on_wait: Callable[[str], None]) -> tuple[RoundOutcome, ...]:
    """The mpc session: the coordinator with the roster's compute servers over the broker (``on_wait``: the
    progress lines of the wait for the servers, then for the parties)."""
    roster, session, servers = config.facts.roster, config.facts.session, config.facts.servers
    assert servers is not None
    epsilon, delta = central_privacy_level(config.facts.roster.mechanisms, config.function.name, "mpc")
    topics = Topics(session)
    cluster = BrokerServers(session, servers, config.coordinator_key, deadline=config.round_timeout,
                            wait_servers=config.wait_parties)
    with MpcStore(config.store_path) as store:
        recorded = store.open_central_session(session, roster.k, config.repetitions, config.round_names,
                                              epsilon, delta, mode=HOSTS_MODE, function=config.function.name)
        coordinator = MpcCoordinator(topics, cluster, epsilon, delta, function=config.function.name)
        async with open_engine(config.endpoint, topics, roster, store, config.coordinator_key, coordinator,
                               repetitions=config.repetitions, round_timeout=config.round_timeout,
                               announce_failure=True, skip_failed=True) as engine:
            cluster.attach(engine.publish)  # the servers' jobs and reports go over the engine's connection
            hosts = (_Hosts(roster.k, config.wait_parties, False, on_wait, config.endpoint.url)
                     if len(recorded) < len(config.round_names) else None)
            if hosts is not None:
                await cluster.wait_ready(on_wait, PROGRESS_EVERY)  # every server ready, the engine receiving meanwhile
            outcomes = await drive_rounds(engine, store, config.round_names, recorded, hosts, on_round)
    return tuple(outcomes)


def observe(
    config: ObserveConfig, on_round: Callable[[RoundOutcome], None] | None = None,
    on_wait: Callable[[str], None] | None = None,
) -> tuple[RoundOutcome, ...]:
    """Synchronous :func:`observe_async` (calls ``asyncio.run``; for the CLI edge)."""
    return asyncio.run(observe_async(config, on_round, on_wait))
