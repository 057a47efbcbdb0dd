"""The coordinator's side of deployed compute servers (``mpdp observe --protocol mpc``): the m
``mpdp mpc-server`` processes of the roster, reached over the broker.

:class:`BrokerServers` is what :class:`mpdp.parties.mpc.coordinator.MpcCoordinator` drives, like the
simulation's :class:`mpdp.parties.mpc.cluster.ServerCluster`, but it starts no process: the servers' keys
and addresses are pinned in the roster (the parties seal to those keys, not to keys announced over the
wire). :meth:`BrokerServers.start` waits until every server reported ready (signed by its roster key);
:meth:`BrokerServers.release` publishes each server's job (signed by the coordinator, on that server's job
topic: its shares only; valid for the round's deadline) and waits for the m signed releases of the round;
a release is returned only if every report and release verifies with the roster's keys, names this
session and round, is fresh, and all agree. A report counts only from server i's own topic
(``mpc/server/{i}``), signed by its roster key, of this session, unexpired and newer than server i's last
report (:class:`mpdp.broker.control.FreshnessGuard`); anything else is refused, counted by reason and
logged (:attr:`BrokerServers.rejections`). A server that is missing or stuck fails the round loudly at
the deadline (MPyC has no dropout tolerance).

The round engine closes a round synchronously, so the MQTT client runs on an event loop of its own in a
thread that lives from :meth:`start` to :meth:`close`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import secrets
import threading
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.mpc_messages import ServerJob, ServerReport, SumRelease
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport
from mpdp.parties.mpc.cluster import DEFAULT_DEADLINE, ServerCost, agreed_release
from mpdp.parties.mpc.server import RoundJob
from mpdp.parties.rounds.engine import CLOCK_MARGIN
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.session.files import ServerRoster
from mpdp.protocols.errors import ParameterError, ProtocolViolation, WorkerError

__all__ = ["BrokerServers"]

T = TypeVar("T")
log = logging.getLogger("mpdp.mpc.coordinator")


class BrokerServers:
    """The roster's m deployed compute servers, reached over the broker (module docstring).

    Args:
        endpoint: the session's broker.
        session: the session id; roster: the servers' pinned keys, addresses and T.
        coordinator_key: the coordinator's raw Ed25519 private key (signs the jobs).
        deadline: seconds one round may take in the servers.
        wait_servers: seconds :meth:`start` waits for every server's "ready".

    Raises:
        ParameterError: a deadline or wait not > 0.
    """

    def __init__(self, endpoint: Connector, session: str, roster: ServerRoster, coordinator_key: bytes, *,
                 deadline: float = DEFAULT_DEADLINE, wait_servers: float = 300.0) -> None:
        for name, value in (("deadline", deadline), ("wait_servers", wait_servers)):
            if not value > 0:
                raise ParameterError(name, value, "a number of seconds > 0")
        self._endpoint, self._topics, self._roster = endpoint, Topics(session), roster
        self._key, self.deadline, self.wait_servers = coordinator_key, deadline, wait_servers
        self.servers, self.threshold = roster.servers, roster.threshold
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._stack: contextlib.AsyncExitStack | None = None
        self._transport: Transport | None = None
        self._ready: set[int] = set()
        self._reports: dict[tuple[int, int], ServerReport] = {}
        self._changed: asyncio.Event | None = None
        self._fresh_reports, self._fresh_releases = FreshnessGuard(), FreshnessGuard()
        #: every refused server report, counted by reason (and logged, rate-limited)
        self.rejections = RejectLog(log, "mpc coordinator")
        #: Per server, what the last round cost it (empty before the first round).
        self.last_costs: tuple[ServerCost, ...] = ()

    @property
    def public_keys(self) -> list[bytes]:
        """The m servers' raw X25519 public keys from the roster, in server order."""
        return list(self._roster.sealing_keys)

    @property
    def signing_keys(self) -> list[bytes]:
        """The m servers' raw Ed25519 public keys from the roster."""
        return list(self._roster.signing_keys)

    def _call(self, coroutine: Coroutine[Any, Any, T], timeout: float, what: Callable[[], str]) -> T:
        """Run ``coroutine`` on the client's loop; WorkerError saying ``what()`` (after the wait) on timeout."""
        assert self._loop is not None
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise WorkerError(f"{what()} (a server missing or stuck: MPyC has no dropout tolerance)") from None

    def start(self) -> None:
        """Connect to the broker and wait for every server's signed "ready" (once).

        Raises:
            TransportError: the broker is unreachable.
            WorkerError: servers not ready within ``wait_servers`` seconds (named).
        """
        if self._loop is not None:
            return
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="mpdp-mpc-servers", daemon=True)
        self._thread.start()
        try:
            self._call(self._connect(), self.wait_servers, lambda: "connecting to the broker timed out")
            self._call(self._wait(lambda: len(self._ready) == self.servers), self.wait_servers,
                       lambda: f"mpc servers {sorted(set(range(self.servers)) - self._ready)} did not report ready "
                       f"within {self.wait_servers:g} s (is an `mpdp mpc-server` running for each?)")
        except BaseException:
            self.close()
            raise

    async def _connect(self) -> None:
        self._changed = asyncio.Event()
        self._stack = contextlib.AsyncExitStack()
        client_id = f"mpdp-{self._topics.session}-mpc-coordinator-{secrets.token_hex(4)}"
        self._transport = await self._stack.enter_async_context(self._endpoint.connect(client_id))
        await self._transport.subscribe(self._topics.all_mpc_servers)
        reader = asyncio.get_running_loop().create_task(self._read(self._transport))
        self._stack.callback(reader.cancel)

    async def _read(self, transport: Transport) -> None:
        async for delivery in transport.deliveries():
            try:
                report = self._verified(delivery.topic, delivery.payload)
            except ProtocolViolation as exc:
                self.rejections.reject(exc.reason, exc.detail)
                continue
            if report.kind == "ready":
                self._ready.add(report.server)
            else:
                self._reports[(report.round, report.server)] = report
            assert self._changed is not None
            self._changed.set()

    def _verified(self, topic: str, payload: bytes) -> ServerReport:
        """The report of a delivery, if it came on its server's own topic, signed by that server's roster
        key, for this session, fresh.

        Raises:
            ProtocolViolation: ``topic``, ``schema``, ``session``, ``signature``, ``expired``, ``replay``.
        """
        server = self._topics.mpc_server_of(topic)
        if server is None or not server < self.servers:
            raise ProtocolViolation("topic", f"{topic}: not a compute server of the roster")
        try:
            report = ServerReport.model_validate_json(payload)
        except ValidationError:
            raise ProtocolViolation("schema", f"{topic}: not a server report") from None
        where = f"{topic}: {report.kind} of round {report.round}"
        if report.server != server:
            raise ProtocolViolation("topic", f"{where}: server {report.server}'s report on server {server}'s topic")
        if report.session != self._topics.session:
            raise ProtocolViolation("session", f"{where}: session {report.session!r}")
        if not verify_message(report, self._roster.signing_keys[server]):
            raise ProtocolViolation("signature", where)
        self._fresh_reports.check(report, server, where)
        return report

    async def _wait(self, done: Callable[[], bool]) -> None:
        assert self._changed is not None
        while not done():
            self._changed.clear()
            await self._changed.wait()

    async def _publish(self, jobs: Sequence[RoundJob]) -> None:
        assert self._transport is not None
        for i, job in enumerate(jobs):
            message = ServerJob.signed(self._key, session=self._topics.session, round=job.round,
                                       repetitions=job.releases, server=i, job=job.to_line(),
                                       lifetime=self.deadline + CLOCK_MARGIN)
            await self._transport.publish(self._topics.mpc_job(i), message.model_dump_json())

    def release(self, jobs: Sequence[RoundJob]) -> tuple[NDArray[np.int64], list[str]]:
        """Run one round: job i to server i over the broker; the agreed outputs and every server's signed
        release JSON (as :meth:`mpdp.parties.mpc.cluster.ServerCluster.release`).

        Raises:
            WorkerError: a server did not release within the deadline; a bad signature; a release of another
                session or round, expired or replayed; servers that disagree.
            TransportError: the broker went away.
        """
        if len(jobs) != self.servers:
            raise ParameterError("jobs", len(jobs), f"one job per server ({self.servers})")
        self.start()
        index = jobs[0].round
        self._call(self._publish(jobs), self.deadline, lambda: f"publishing round {index}'s jobs timed out")
        self._call(self._wait(lambda: all((index, i) in self._reports for i in range(self.servers))), self.deadline,
                   lambda: f"mpc servers {[i for i in range(self.servers) if (index, i) not in self._reports]} did not "
                   f"release round {index} within {self.deadline:g} s")
        reports = [self._reports.pop((index, i)) for i in range(self.servers)]
        message = SumRelease if jobs[0].function == "sum" else CuratorRelease
        self.last_costs = tuple(ServerCost(len(job.to_line()), r.sent, r.cpu) for job, r in zip(jobs, reports))
        texts = {i: r.release for i, r in enumerate(reports)}
        outputs = agreed_release(texts, self.signing_keys, message, session=self._topics.session, round=index,
                                 fresh=self._fresh_releases)
        return outputs, [texts[i] for i in range(self.servers)]

    async def _disconnect(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()

    def close(self) -> None:
        """Disconnect and stop the client's thread (the servers exit on the coordinator's signed end).
        Safe to call twice."""
        if self._loop is None:
            return
        with contextlib.suppress(WorkerError, Exception):
            self._call(self._disconnect(), 10.0, lambda: "disconnecting timed out")
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10.0)
        self._loop.close()
        self._loop, self._thread, self._stack, self._transport = None, None, None, None
