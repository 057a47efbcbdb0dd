"""The coordinator's side of deployed compute servers (``mpdp observe --protocol mpc``): the m
``mpdp mpc-server`` processes of the roster, reached over the broker.

:class:`BrokerServers` is what :class:`mpdp.parties.mpc.coordinator.MpcCoordinator` drives, like the
simulation's :class:`mpdp.parties.mpc.cluster.ServerCluster`, but it starts no process: the servers' keys
and addresses are pinned in the roster (the parties seal to those keys, not to keys announced over the
wire). It has no connection of its own: it talks over the round engine's (one client, one client id:
on the locked-down broker of ``mpdp broker config`` the observer's client id is its login, so a second
connection would take the first one's place). The engine subscribes :attr:`BrokerServers.filters` and
hands each report to :meth:`BrokerServers.receive` (through the coordinator); :meth:`BrokerServers.attach`
gives it the engine's publish.

:meth:`BrokerServers.wait_ready` waits until every server reported ready; :meth:`BrokerServers.run_round`
publishes each server's job (signed by the coordinator, on that server's job topic: its shares only;
valid for the round's deadline) and waits for the m signed releases of the round; a release is returned
only if every report and release verifies with the roster's keys, names this session and round, is
fresh, and all agree. A report counts only from server i's own topic (``mpc/server/{i}``), signed by its
roster key, of this session, unexpired and newer than server i's last report
(:class:`mpdp.broker.control.FreshnessGuard`); anything else is refused with its reason (the engine counts
and logs it with the round's rejects). A server that is missing or stuck fails the round loudly at the
deadline (MPyC has no dropout tolerance); a server that went away once started is named at once by the
others' signed ``failed`` reports (each stops when its MPyC link to it closes), and the wait for readiness
or a round ends with a :class:`WorkerError` naming it.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.mpc_messages import ServerJob, ServerReport, SumRelease
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.mpc.cluster import DEFAULT_DEADLINE, ServerCost, agreed_release
from mpdp.parties.mpc.server import RoundJob
from mpdp.parties.rounds.engine import CLOCK_MARGIN
from mpdp.parties.rounds.session_files import ServerRoster
from mpdp.protocols.errors import ParameterError, ProtocolViolation, WorkerError
from mpdp.protocols.numerics.cost import noun

__all__ = ["BrokerServers", "Publish"]

#: How the servers' side publishes: the round engine's ``publish(topic, payload)``.
Publish = Callable[[str, str], Awaitable[None]]


class BrokerServers:
    """The roster's m deployed compute servers, reached over the round engine's connection (module docstring).

    Args:
        session: the session id; roster: the servers' pinned keys, addresses and T.
        coordinator_key: the coordinator's raw Ed25519 private key (signs the jobs).
        deadline: seconds one round may take in the servers.
        wait_servers: seconds :meth:`wait_ready` waits for every server's "ready".

    Raises:
        ParameterError: a deadline or wait not > 0.
    """

    def __init__(self, session: str, roster: ServerRoster, coordinator_key: bytes, *,
                 deadline: float = DEFAULT_DEADLINE, wait_servers: float = 300.0) -> None:
        for name, value in (("deadline", deadline), ("wait_servers", wait_servers)):
            if not value > 0:
                raise ParameterError(name, value, "a number of seconds > 0")
        self._topics, self._roster = Topics(session), roster
        self._key, self.deadline, self.wait_servers = coordinator_key, deadline, wait_servers
        self.servers, self.threshold = roster.servers, roster.threshold
        self._publish: Publish | None = None
        self._ready: set[int] = set()
        self._reports: dict[tuple[int, int], ServerReport] = {}
        self._failed: dict[int, tuple[int, ...]] = {}  # reporting server -> the servers it lost
        self._changed = asyncio.Event()
        self._fresh_reports, self._fresh_releases = FreshnessGuard(), FreshnessGuard()
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

    @property
    def filters(self) -> tuple[str, ...]:
        """What the engine subscribes for the servers: every server's report topic."""
        return (self._topics.all_mpc_servers,)

    def attach(self, publish: Publish) -> None:
        """Publish the jobs with ``publish`` (the round engine's, once it is connected)."""
        self._publish = publish

    def receive(self, topic: str, text: str) -> None:
        """Take one delivery on a server topic: a verified, fresh report is kept (ready, or a release).

        Raises:
            ProtocolViolation: ``topic`` (not a roster server's report topic, or another server's report on
                it), ``schema``, ``session``, ``signature``, ``expired``, ``replay``.
        """
        server = self._topics.mpc_server_of(topic)
        if server is None or not server < self.servers:
            raise ProtocolViolation("topic", f"{topic}: not a compute server of the roster")
        try:
            report = ServerReport.model_validate_json(text)
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
        if report.kind == "ready":
            self._ready.add(server)
        elif report.kind == "failed":
            self._failed[server] = report.gone
        else:
            self._reports[(report.round, server)] = report
        self._changed.set()

    async def _until(self, done: Callable[[], bool], seconds: float, failure: Callable[[], str],
                     progress: Callable[[float], None] = lambda waited: None, every: float = math.inf) -> None:
        """Wait until ``done()`` (re-checked on every kept report); WorkerError ``failure()`` after ``seconds``,
        or naming the servers gone as soon as a server reports it lost them; ``progress(seconds waited)`` every
        ``every`` seconds meanwhile."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        deadline, next_line = start + seconds, start + every
        while not done():
            self._raise_if_failed()
            now = loop.time()
            if now >= deadline:
                raise WorkerError(f"{failure()} (a server missing or stuck: MPyC has no dropout tolerance)")
            if now >= next_line:
                progress(now - start)
                next_line += every
            self._changed.clear()
            try:
                async with asyncio.timeout_at(min(deadline, next_line)):
                    await self._changed.wait()
            except TimeoutError:
                pass

    def _raise_if_failed(self) -> None:
        """WorkerError naming the servers gone, once a server reported ``failed`` (those named by a report that
        did not report themselves: a server that stops closes its links too)."""
        if not self._failed:
            return
        reporters = sorted(self._failed)
        gone = sorted({g for lost in self._failed.values() for g in lost} - set(reporters)) or sorted(
            {g for lost in self._failed.values() for g in lost})
        raise WorkerError(f"mpc {noun(len(gone), 'server')} {', '.join(map(str, gone))} went away: "
                          f"{noun(len(reporters), 'server')} {', '.join(map(str, reporters))} lost "
                          "the MPyC link and stopped (MPyC has no dropout tolerance; restart every server)")

    async def wait_ready(self, report: Callable[[str], None] = lambda line: None, every: float = math.inf) -> None:
        """Wait for every server's signed "ready".

        Args:
            report: gets one line when the wait begins (unless every server is ready already) and one every
                ``every`` seconds while servers are missing (which, how long so far).
            every: seconds between the progress lines (> 0; ``inf``: none after the first).

        Raises:
            WorkerError: servers not ready within ``wait_servers`` seconds (named), or a server gone.
        """
        def missing() -> list[int]:
            return sorted(set(range(self.servers)) - self._ready)

        if missing():
            report(f"waiting up to {self.wait_servers:g} s for the ready reports of "
                   f"{self.servers} {noun(self.servers, 'mpc server')} (`mpdp mpc-server`, one for each)")
        await self._until(lambda: not missing(), self.wait_servers,
                          lambda: f"mpc servers {missing()} did not report ready within {self.wait_servers:g} s "
                          "(is an `mpdp mpc-server` running for each?)",
                          lambda waited: report(f"{self.servers - len(missing())} of {self.servers} mpc servers "
                                                f"ready after {waited:.0f} s (missing {missing()}; waiting up to "
                                                f"{self.wait_servers:g} s)"), every)

    def start(self) -> None:
        """Check that every server reported ready (the coordinator calls it before announcing a round).

        Raises:
            WorkerError: not every server is ready, or :meth:`attach` was not called.
        """
        if self._publish is None or len(self._ready) < self.servers:
            raise WorkerError("the mpc servers are not ready: attach the engine and wait_ready() first")

    async def run_round(self, jobs: Sequence[RoundJob]) -> tuple[NDArray[np.int64], list[str]]:
        """Run one round: job i to server i over the broker; the agreed outputs and every server's signed
        release JSON (as :meth:`mpdp.parties.mpc.cluster.ServerCluster.release`).

        Raises:
            ParameterError: not one job per server.
            WorkerError: not ready; a server did not release within the deadline; a bad signature; a release
                of another session or round, expired or replayed; servers that disagree.
            TransportError: the broker went away.
        """
        if len(jobs) != self.servers:
            raise ParameterError("jobs", len(jobs), f"one job per server ({self.servers})")
        self.start()
        assert self._publish is not None
        index = jobs[0].round
        for i, job in enumerate(jobs):
            message = ServerJob.signed(self._key, session=self._topics.session, round=job.round,
                                       repetitions=job.releases, server=i, job=job.to_line(),
                                       lifetime=self.deadline + CLOCK_MARGIN)
            await self._publish(self._topics.mpc_job(i), message.model_dump_json())
        await self._until(lambda: all((index, i) in self._reports for i in range(self.servers)), self.deadline,
                          lambda: f"mpc servers {[i for i in range(self.servers) if (index, i) not in self._reports]} "
                          f"did not release round {index} within {self.deadline:g} s")
        reports = [self._reports.pop((index, i)) for i in range(self.servers)]
        message_class = SumRelease if jobs[0].function == "sum" else CuratorRelease
        self.last_costs = tuple(ServerCost(len(job.to_line()), r.sent, r.cpu) for job, r in zip(jobs, reports))
        texts = {i: r.release for i, r in enumerate(reports)}
        outputs = agreed_release(texts, self.signing_keys, message_class, session=self._topics.session, round=index,
                                 fresh=self._fresh_releases)
        return outputs, [texts[i] for i in range(self.servers)]

    def close(self) -> None:
        """Forget the servers' state and the engine's publish (the servers exit on the coordinator's signed
        end; nothing else to stop). Safe to call twice."""
        self._publish = None
        self._ready.clear()
        self._reports.clear()
