"""Observer scale-out: N validator processes verify the parties' messages; the round engine merges.

::

    broker ── $share/{secret group}/mpdp/{session}/party/+ ──> validator 0 .. N-1   (spawned, MQTT 5 each)
                                                                  │ parse + Ed25519 check (SignedReader.read)
                                                                  │ batches of per-message records (pipes)
    broker ── mpdp/{session}/status, the protocol's topics ────> merger = the round engine (this process):
                                                                  round, late, double-release, repetitions,
                                                                  payload; close, decide, store, publish

Parsing and the signature check (the observer's cost per message) run in the validators, on other cores
than the merger's (``benchmarks/bench_validator_split.py``: the merger's share is about a tenth); it keeps
everything that needs the session's state. The validators forward per-message records
(:class:`mpdp.parties.session.validator.Verified`: party, round, kind/reason, symbols, and the bytes as
received), not per-round counts: the merger dedupes by (round, party) (QoS 1 may redeliver a message,
to another validator), keeps answers that arrive before their round, and stores every party's signed
message, which is the audit record that the parties and ``mpdp audit`` verify; counts would lose the
party ids and the signed bytes. Rejections found by validators (:class:`Rejected`) are counted by reason
in the engine's reject log and store, as its own.

Order is kept per validator, not across validators: of two different answers of one party to a round
the first merged is recorded and the other kept as a double release, as a single observer does with
whichever the broker delivered first. Answers kept from before the first announcement (a resumed
observer) are checked once more by the merger when their round opens (:meth:`RoundEngine.accept`).

The channel validator -> merger is a multiprocessing pipe between the observer's own processes: nobody
on the broker can write to it (a party or an outsider can only publish on party topics, which the
validators check like the engine). A validator that dies or reports a failure stops the run with a
:class:`WorkerError` naming it; on exit every validator is stopped (terminated, then killed: no orphan).

The group's name is a secret (:func:`validator_endpoints`): ``mpdp broker config --validators N``'s, read
from the validators' client folders, else a fresh one per run. A client that joined the group would take a
share of the answers (mosquitto 2.0 grants the subscription to any login and drops what its ACL denies:
the answers reach no validator); one that does not know the name cannot join it.

Validators use clean MQTT sessions: messages published while no validator is subscribed are not kept
for the group (parties publish only after an announcement, which comes once every validator is
subscribed; a resumed observer re-announces its round, and the parties re-send their recorded answers).
The broker must support MQTT 5 shared subscriptions (mosquitto >= 1.6, EMQX, VerneMQ, HiveMQ; not NATS's
MQTT gateway); :func:`mpdp.parties.rounds.validator_count.check_validators` refuses the embedded amqtt broker,
and a deployed observer (:class:`mpdp.parties.session.observe.ObserveConfig`) a broker without a login unless
told it is a simulation or test broker.

Loss is named: a party whose host answered a round for other parties but whose own answer reached no
validator is listed in the round's ``lost`` (:func:`mpdp.parties.rounds.outcome.lost_answers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import multiprocessing
import time
from collections.abc import AsyncIterator, Sequence
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.lockdown import GROUP_FILE, OBSERVER, validator_user
from mpdp.broker.topics import Topics, check_validator_group, new_validator_group
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.engine import RoundEngine, RoundProtocol, open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.processes import spawn, stop_processes
from mpdp.parties.session.validator import Rejected, Report, ValidatorSpec, Verified, validator_main
from mpdp.protocols.errors import ParameterError, ProtocolViolation, WorkerError

__all__ = ["ValidatorPool", "merge", "open_validated_engine"]

log = logging.getLogger("mpdp.validators")
_EXIT_WAIT = 2.0  # seconds to wait for a dead validator's exit code


def merge(engine: RoundEngine[Any, Any], records: Sequence[Verified | Rejected]) -> None:
    """Hand a validator's records to the engine: accept each verified answer (its state checks may still
    reject it), count each rejection."""
    for record in records:
        if isinstance(record, Rejected):
            engine.reject(record.reason, record.detail)
            continue
        try:
            engine.accept(record.message, record.where, record.topic, record.payload)
        except ProtocolViolation as exc:
            engine.reject(exc.reason, exc.detail)


def _where(engine: RoundEngine[Any, Any] | None) -> str:
    if engine is None or engine.open_round is None:
        return "between rounds" if engine is not None else "before the first round"
    return f"during round {engine.open_round}"


def validator_endpoints(observer: BrokerEndpoint, count: int) -> tuple[list[BrokerEndpoint], str]:
    """Each validator's own login and the validators' secret share-group name.

    Behind the observer login of ``mpdp broker config`` (user ``observer`` with its client files), validator
    j uses ``clients/validator-{j}/`` beside the observer's folder (its password, certificate and key;
    ``broker config --validators N`` writes them) on the observer's listener, and the group of its
    :data:`mpdp.broker.lockdown.GROUP_FILE` (a configuration written before there was one: a fresh group);
    otherwise the observer's endpoint as it is and a fresh group (:func:`new_validator_group`: known only to
    this run's processes).

    Raises:
        ParameterError: the observer login without the client folder of a validator, or a damaged group file.
    """
    if observer.username != OBSERVER or observer.cafile is None:
        return [observer] * count, new_validator_group()
    clients = Path(observer.cafile).resolve().parent.parent
    endpoints = []
    for index in range(count):
        folder = clients / validator_user(index)
        if not (folder / "password").is_file():
            raise ParameterError("validators", count, f"at most the validator logins `mpdp broker config "
                                 f"--validators N` wrote beside {clients / OBSERVER} (no {folder})")
        endpoints.append(dataclasses.replace(
            observer, username=validator_user(index), password=(folder / "password").read_text().strip(),
            cafile=str(folder / "ca.crt"), certfile=str(folder / "client.crt"), keyfile=str(folder / "client.key")))
    group_file = clients / validator_user(0) / GROUP_FILE
    if not group_file.is_file():
        return endpoints, new_validator_group()
    try:
        return endpoints, check_validator_group(group_file.read_text(encoding="ascii").strip())
    except (UnicodeDecodeError, ParameterError):
        raise ParameterError("validators", count, f"validator client folders whose {GROUP_FILE} file is the one "
                             f"`mpdp broker config --validators N` wrote ({group_file} is damaged)") from None


class ValidatorPool:
    """N validator processes (:mod:`mpdp.parties.session.validator`), each with a pipe to this process.

    Entering starts them and returns once every one is subscribed; :meth:`serve` merges their records
    into an engine; exiting stops them.

    Args:
        count: validators (>= 1); endpoint: the observer's broker (each validator's login:
            :func:`validator_endpoints`); session, roster: as :class:`ValidatorSpec`.
        ready_timeout: seconds every validator gets to connect and subscribe.
    """

    def __init__(self, count: int, endpoint: BrokerEndpoint, session: str, roster: Roster,
                 ready_timeout: float = 60.0) -> None:
        endpoints, group = validator_endpoints(endpoint, count)
        self._specs = [ValidatorSpec(i, own, session, roster, group) for i, own in enumerate(endpoints)]
        self._ready_timeout = ready_timeout
        self._procs: list[BaseProcess] = []
        self._pipes: list[Connection] = []
        #: records (messages) each validator forwarded so far
        self.forwarded = [0] * count

    async def __aenter__(self) -> Self:
        try:
            for spec in self._specs:
                receiving, sending = multiprocessing.get_context("spawn").Pipe(duplex=False)
                self._pipes.append(receiving)
                try:
                    spawn(validator_main, (spec, sending), f"mpdp-validator-{spec.index}", self._procs)
                finally:
                    sending.close()  # the child's copy only: its death is this end's EOF
            async with asyncio.timeout(self._ready_timeout):
                for index in range(len(self._specs)):
                    report = await self._receive(index, None)
                    if report != Report("ready"):
                        raise WorkerError(self._failed(index, report, None))
        except TimeoutError:
            await self.stop()
            raise WorkerError(f"validator(s) not subscribed within {self._ready_timeout:g} s") from None
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    async def stop(self) -> None:
        """Close the pipes and stop every validator (terminate, then kill); log how many messages each forwarded."""
        log.info("validators forwarded %s messages", self.forwarded)
        for pipe in self._pipes:
            pipe.close()
        await stop_processes(self._procs, 0.0)

    async def serve(self, engine: RoundEngine[Any, Any]) -> None:
        """Merge every validator's records into ``engine`` (:func:`merge`) until cancelled.

        Raises:
            WorkerError: a validator died or reported a failure (named, with its pid and the round).
        """
        async with asyncio.TaskGroup() as tg:
            for index in range(len(self._specs)):
                tg.create_task(self._merge(index, engine), name=f"validator-{index}")

    async def _merge(self, index: int, engine: RoundEngine[Any, Any]) -> None:
        while True:
            item = await self._receive(index, engine)
            if isinstance(item, Report):
                raise WorkerError(self._failed(index, item, engine))
            merge(engine, item)
            self.forwarded[index] += len(item)

    async def _receive(self, index: int, engine: RoundEngine[Any, Any] | None) -> Report | list[Verified | Rejected]:
        """The next item from validator ``index``'s pipe (what :mod:`mpdp.parties.session.validator` sends),
        waiting on the event loop.

        Raises:
            WorkerError: the pipe closed (the validator died).
        """
        pipe = self._pipes[index]
        if not pipe.poll():
            loop = asyncio.get_running_loop()
            readable = asyncio.Event()
            loop.add_reader(pipe.fileno(), readable.set)
            try:
                await readable.wait()
            finally:
                loop.remove_reader(pipe.fileno())
        try:
            item: Report | list[Verified | Rejected] = pipe.recv()
            return item
        except (EOFError, OSError):
            pass
        proc = self._procs[index]
        deadline = time.monotonic() + _EXIT_WAIT
        while proc.exitcode is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        raise WorkerError(f"validator {index} (pid {proc.pid}) exited with code {proc.exitcode} "
                          f"({_where(engine)}; the run stopped)")

    def _failed(self, index: int, report: object, engine: RoundEngine[Any, Any] | None) -> str:
        detail = report.detail if isinstance(report, Report) else f"unexpected {type(report).__name__}"
        return f"validator {index} (pid {self._procs[index].pid}) failed: {detail} ({_where(engine)}; the run stopped)"


@contextlib.asynccontextmanager
async def open_validated_engine(
    connector: Connector, topics: Topics, roster: Roster, store: TranscriptStore, coordinator_key: bytes,
    protocol: RoundProtocol[Any, Any], *, repetitions: int, round_timeout: float, validators: int,
    ready_timeout: float = 60.0, announce_failure: bool = False, bundles: bool = False, skip_failed: bool = False,
) -> AsyncIterator[RoundEngine[Any, Any]]:
    """:func:`mpdp.parties.rounds.engine.open_engine`, with ``validators`` validator processes reading the
    party topics (0: the engine reads them itself, as ever; then ``bundles`` subscribes it to the simulation
    workers' answer bundles too). Entered once every validator is subscribed.
    ``announce_failure``: as :func:`open_engine` (a validator that fails is announced too); ``skip_failed``: as
    :func:`open_engine`.

    Raises:
        ParameterError: validators with a connector that is not a :class:`BrokerEndpoint`.
        WorkerError: a validator did not subscribe within ``ready_timeout`` s, died or failed (the block
            is cancelled).
        TransportError: as :func:`open_engine`.
    """
    async with open_engine(connector, topics, roster, store, coordinator_key, protocol, repetitions=repetitions,
                           round_timeout=round_timeout, party_topics=not validators,
                           announce_failure=announce_failure, bundles=bundles, skip_failed=skip_failed) as engine:
        if not validators:
            yield engine
            return
        if not isinstance(connector, BrokerEndpoint):
            raise ParameterError("validators", validators, "0 unless the engine connects to a broker endpoint")
        async with ValidatorPool(validators, connector, topics.session, roster,
                                 ready_timeout) as pool, asyncio.TaskGroup() as tg:
            serving = tg.create_task(pool.serve(engine), name="validators")
            try:
                yield engine
            finally:
                serving.cancel()
