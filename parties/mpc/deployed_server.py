"""One compute server of a deployed mpc session (``mpdp mpc-server``): MPyC with its peers at the roster's
addresses, its jobs from the broker, its signed releases back over the broker.

::

    MPyC start                 connect to the m - 1 other servers at the roster's host:port addresses
    MQTT connect               subscribe to its own job topic (mpc/job/{i}), the round announcements, the
                               coordinator's heartbeats (a sign of life: the idle timeout starts again) and
                               the status topic
    "ready" (signed)           repeated, freshly stamped, until its first job (the coordinator waits for
                               every server's), on its own report topic mpc/server/{i}
    a host's "ready"           listing its parties' session sealing keys, every listed party's signature
                               verified with the roster's party keys, fresh: derive this server's key with
                               each party now (:meth:`JobHandler.ready`), not in its first round
    per ServerJob              signed by the coordinator's key pinned in the roster, for this session and
                               server, fresh: open the shares sealed to this server (only those), compute
                               the count and the release in MPyC with the others (:func:`round_server`),
                               publish the signed release with its cost (a :class:`ServerReport`)
    end announcement           signed by the coordinator, fresh: shut MPyC down and exit

Jobs and the end pass a :class:`mpdp.broker.control.FreshnessGuard` (the coordinator's monotonic sequence
and expiry, under its signature): a replayed job or end (``replay``) or one past its expiry (``expired``)
changes nothing; like every refused message (``schema``, ``session``, ``server``, ``signature``,
``second-job``, ``job``) it is counted by reason and logged, rate-limited (:attr:`JobHandler.rejections`).

The trust model is the simulation's: the server sees only the shares sealed to its own X25519 key and the
opened release. A round's job that comes again, freshly signed (a coordinator that restarted), gets the
same release again (the recorded outputs, re-signed with a fresh stamp), never a second draw; another job
for a round already released is refused, so a coordinator cannot buy a second release of the same votes
from this server in one process' life. MPyC has no dropout tolerance: a peer that is down makes the start,
or the round, wait. A peer that goes away once started (its MPyC link closes: killed, crashed, its machine
gone) stops this server within ``PEER_CHECK`` seconds, in a round or between rounds: it publishes a signed
``failed`` report naming the servers gone (the coordinator names them and stops the session) and exits
with one line naming them, without MPyC's traceback of the lost link. A server that gets nothing gives up
after ``idle_timeout`` seconds without a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mpdp.broker.connectivity import wait_for_broker
from mpdp.broker.control import DEFAULT_LIFETIME, FreshnessGuard, stamp
from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import WorkerStatus, new_nonce
from mpdp.broker.mpc_messages import MpcAnnouncement, ServerJob, ServerReport, SumRelease
from mpdp.broker.signing import sign_message, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.mpc.listen import bind_own_address
from mpdp.parties.mpc.server import RoundJob, ServerKeys, round_server, share_opener
from mpdp.parties.mpc.sharing import field_modulus
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.rounds.session_files import ServerKeyPair, SessionRoster
from mpdp.protocols.errors import ParameterError, ProtocolViolation, TransportError, WorkerError
from mpdp.protocols.numerics.cost import noun

__all__ = ["PEER_CHECK", "DeployedServerConfig", "JobHandler", "mpyc_arguments", "run_server"]

log = logging.getLogger("mpdp.mpc.server")
#: Seconds between a server's checks of its MPyC links to the other servers.
PEER_CHECK = 0.2

#: The sender key of the coordinator's messages (jobs and the end) in a server's freshness guard.
_COORDINATOR = "coordinator"


@dataclass(frozen=True, slots=True)
class DeployedServerConfig:
    """One compute server of a deployed session.

    Attributes:
        facts: the session's roster (with its ``mpc`` section: the servers' addresses and keys, T).
        keys: this server's private keys (its index among them).
        endpoint: the session's broker (a :class:`mpdp.broker.endpoint.BrokerEndpoint`, or any connector).
        idle_timeout: seconds without a job or announcement before the server gives up.
        ready_interval: seconds between repeated "ready" reports until the first job.

    Raises:
        ParameterError: a roster without servers, a server index outside it, or a timeout not > 0.
    """

    facts: SessionRoster
    keys: ServerKeyPair = field(repr=False)
    endpoint: Connector
    idle_timeout: float = 3600.0
    ready_interval: float = 1.0

    def __post_init__(self) -> None:
        if self.facts.servers is None or not 0 <= self.keys.server < self.facts.servers.servers:
            raise ParameterError("--keys", self.keys.server, "a compute server of the roster's mpc section")
        for name in ("idle_timeout", "ready_interval"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ParameterError(name, value, "a finite number of seconds > 0")


def mpyc_arguments(config: DeployedServerConfig) -> list[str]:
    """MPyC's command-line options for this server: ``-P host:port`` per server, ``-I i``, ``-T t``."""
    assert config.facts.servers is not None
    servers = config.facts.servers
    return [option for address in servers.addresses for option in ("-P", address)] + [
        "-I", str(config.keys.server), "-T", str(servers.threshold), "--no-log"]


def run_server(config: DeployedServerConfig) -> int:
    """Serve the session until the coordinator's signed end (module docstring); return the rounds released.

    MPyC's runtime reads its options from ``sys.argv`` when first imported: this sets them
    (:func:`mpyc_arguments`) and must run in a process of its own (``mpdp mpc-server``).

    Raises:
        TransportError: the broker is unreachable, or nothing arrived for ``idle_timeout`` seconds.
        WorkerError: the other servers did not all connect within ``idle_timeout`` seconds.
    """
    argv = sys.argv
    sys.argv = [argv[0] if argv else "mpdp", *mpyc_arguments(config)]
    try:
        from mpyc.runtime import mpc
    finally:
        sys.argv = argv
    bind_own_address(mpc)  # listen on the roster's address only, not every interface
    servers = config.facts.servers
    assert servers is not None
    keys = ServerKeys(field_modulus(), config.facts.session, config.keys.server, config.keys.sealing.hex(),
                      config.keys.signing.hex())
    opener = share_opener(keys)
    server = JobHandler(config, round_server(mpc, keys, opener), peers_gone=lambda: _peers_gone(mpc),
                        expect=opener.expect)

    async def main() -> int:
        asyncio.get_running_loop().set_exception_handler(_quiet_lost_links)
        if isinstance(config.endpoint, BrokerEndpoint):
            await wait_for_broker(config.endpoint)  # a refusing --broker fails at once, before MPyC waits
        try:
            await asyncio.wait_for(mpc.start(), config.idle_timeout)
        except TimeoutError:
            raise WorkerError(f"mpc server {config.keys.server}: the other servers did not all connect within "
                              f"{config.idle_timeout:g} s (addresses {', '.join(servers.addresses)}; MPyC has no "
                              "dropout tolerance: every server of the roster must run)") from None
        released = await server.run()  # on an error no shutdown: MPyC's would wait for every peer
        await mpc.shutdown()
        return released

    released: int = mpc.run(main())
    return released


def _peers_gone(mpc: Any) -> list[int]:
    """The other servers whose MPyC link is closed or closing (MPyC's runtime ``mpc``, started)."""
    return [party.pid for party in mpc.parties if party.pid != mpc.pid
            and (party.protocol is None or party.protocol.transport is None or party.protocol.transport.is_closing())]


def _quiet_lost_links(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The event loop's exception handler: MPyC re-raises a peer's lost link (``ConnectionResetError``,
    ``BrokenPipeError``) inside its transport callback; the peer watch names that server instead."""
    if isinstance(context.get("exception"), ConnectionError):
        log.debug("an MPyC link closed: %s", context.get("exception"))
        return
    loop.default_exception_handler(context)


class JobHandler:
    """The broker side of one server: jobs in, signed reports out (see the module docstring).

    Args:
        config: the server's configuration.
        serve_job: its MPyC round computation (:func:`mpdp.parties.mpc.server.round_server`).
        peers_gone: the other servers whose MPyC links closed (checked every :data:`PEER_CHECK` seconds);
            None: not checked (a single server, tests).
        expect: derives this server's key with a party from its session public key ahead of its first share
            (:meth:`mpdp.parties.mpc.sealed_shares.ShareOpener.expect` of the opener ``serve_job`` uses);
            None: the keys in the parties' "ready" are not used.

    Attributes:
        rejections: every refused job or end, counted by reason (and logged, rate-limited).
    """

    def __init__(self, config: DeployedServerConfig,
                 serve_job: Callable[[RoundJob], Awaitable[dict[str, Any]]],
                 peers_gone: Callable[[], list[int]] | None = None,
                 expect: Callable[[int, bytes], bool] | None = None) -> None:
        self._config = config
        self._serve_job = serve_job
        self._peers_gone = peers_gone
        self._expect = expect
        self._fresh_ready = FreshnessGuard()
        self._derived: dict[int, tuple[tuple[int, ...], tuple[str, ...]]] = {}  # host -> its parties, keys taken
        self._topics = Topics(config.facts.session)
        self._index = config.keys.server
        self._fresh = FreshnessGuard()
        self.rejections = RejectLog(log, f"mpc server {self._index}")
        # round -> (job text, its signed release, the round's cost: bytes sent, CPU seconds)
        self._released: dict[int, tuple[str, CuratorRelease | SumRelease, int, float]] = {}

    def _report(self, **fields: object) -> bytes:
        report = ServerReport.signed(self._config.keys.signing, session=self._topics.session, server=self._index,
                                     **fields)  # type: ignore[arg-type]
        return report.model_dump_json().encode()

    async def run(self) -> int:
        """Connect, report ready, serve jobs until the coordinator's signed end; the rounds released.

        Raises:
            TransportError: the broker is unreachable or gone, or ``idle_timeout`` passed.
            WorkerError: another server's MPyC link closed (names it; a signed ``failed`` report went out first).
        """
        client_id = f"mpdp-{self._topics.session}-mpc-server-{self._index}-{secrets.token_hex(4)}"
        async with self._config.endpoint.connect(client_id) as transport:
            await transport.subscribe(self._topics.mpc_job(self._index), self._topics.rounds, self._topics.heartbeat,
                                      self._topics.status)
            serving = asyncio.create_task(self._serve(transport), name=f"mpc-server-{self._index}")
            try:
                while not serving.done():
                    await asyncio.wait([serving], timeout=PEER_CHECK)
                    failed = serving.done() and (serving.cancelled() or serving.exception() is not None)
                    check = self._peers_gone is not None and (failed or not serving.done())
                    gone = self._peers_gone() if check and self._peers_gone is not None else []
                    if gone:  # in a round MPyC may fail first, on the lost link: the lost peer is the cause
                        serving.cancel()
                        await transport.publish(self._topics.mpc_server(self._index),
                                                self._report(kind="failed", gone=tuple(gone)))
                        raise WorkerError(
                            f"mpc server {self._index}: mpc {noun(len(gone), 'server')} "
                            f"{', '.join(map(str, gone))} went away (the MPyC link closed); stopping, MPyC has no "
                            "dropout tolerance: restart every server and the observer")
                return serving.result()
            finally:
                serving.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await serving

    async def _serve(self, transport: Transport) -> int:
        reports = self._topics.mpc_server(self._index)
        await transport.publish(reports, self._report(kind="ready"))
        loop = asyncio.get_running_loop()
        interval = self._config.ready_interval
        last, due = loop.time(), loop.time() + interval
        while True:
            delivery = await next_delivery(transport, max(0.0, due - loop.time()))
            if loop.time() >= due:  # by the clock: the hosts' status reports and heartbeats must not starve it
                due = loop.time() + interval
                if not self._released:
                    await transport.publish(reports, self._report(kind="ready"))
            if delivery is None or delivery.topic == self._topics.status:
                if delivery is not None:
                    self.ready(delivery.payload)  # a host's report: not a sign of the coordinator's life
                if loop.time() - last > self._config.idle_timeout:
                    raise TransportError(f"mpc server {self._index}: no job or announcement for "
                                         f"{self._config.idle_timeout:g} s")
                continue
            last = loop.time()
            if delivery.topic == self._topics.rounds:
                if self.is_end(delivery.payload):
                    return len(self._released)
            elif delivery.topic != self._topics.heartbeat:
                report = await self.job(delivery.payload)
                if report is not None:
                    await transport.publish(reports, report)

    def is_end(self, payload: bytes) -> bool:
        """Whether an announcement is the coordinator's end of this session, signed and fresh (a refused
        end is counted; round announcements and heartbeats are not for the server: False, not counted)."""
        try:
            announcement = MpcAnnouncement.model_validate_json(payload)
        except ValidationError:
            self.rejections.reject("schema", f"{self._topics.rounds}: not an announcement")
            return False
        if announcement.kind != "end":
            return False
        try:
            self._check(announcement, f"the end of round {announcement.round}")
        except ProtocolViolation as exc:
            self.rejections.reject(exc.reason, exc.detail)
            return False
        return True

    def ready(self, payload: bytes) -> int:
        """Take a host's (worker's) status report: a fresh "ready" of this session listing its parties' session
        sealing keys, every listed party's signature verified with the roster's party keys, has this server
        derive its key with each of those parties now (one X25519 exchange each, none in their first round).
        A report without keys (a failed report, a beacon's repeat) is not for the server: nothing, not counted;
        one refused (``schema``, ``session``, ``unknown-party``, ``signature``, ``expired``, ``replay``) is
        counted and logged.

        Returns:
            The parties whose keys were derived (0 for anything else).
        """
        if self._expect is None:
            return 0
        try:
            status = WorkerStatus.model_validate_json(payload)
        except ValidationError:
            self.rejections.reject("schema", f"mpc server {self._index}: {self._topics.status}: not a status report")
            return 0
        if not status.sealing_keys or self._derived.get(status.worker) == (status.parties, status.sealing_keys):
            return 0  # no keys, or the keys of this host's ready taken already (its beacon repeats them)
        where = f"mpc server {self._index}: ready of host {status.worker}"
        party_keys = self._config.facts.roster.public_keys
        try:
            if status.session != self._topics.session:
                raise ProtocolViolation("session", f"{where}: session {status.session!r}")
            if status.parties[-1] >= len(party_keys):
                raise ProtocolViolation("unknown-party", f"{where}: parties beyond the roster")
            if status.unsigned(party_keys):
                raise ProtocolViolation("signature", f"{where}: not signed by every party it lists")
            self._fresh_ready.check(status, status.worker, where)
        except ProtocolViolation as exc:
            self.rejections.reject(exc.reason, exc.detail)
            return 0
        self._derived[status.worker] = (status.parties, status.sealing_keys)
        derived = sum(self._expect(party, key) for party, key in status.sealing_key_map().items())
        log.info("%s: derived this server's keys with %d parties ahead of their first round", where, derived)
        return derived

    def _check(self, message: MpcAnnouncement | ServerJob, what: str) -> None:
        """Session, the coordinator's signature, freshness (ProtocolViolation naming the reason)."""
        where = f"mpc server {self._index}: {what}"
        if message.session != self._topics.session:
            raise ProtocolViolation("session", f"{where}: session {message.session!r}")
        if not verify_message(message, self._config.facts.coordinator_public_key):
            raise ProtocolViolation("signature", f"{where}: not signed by the roster's coordinator")
        self._fresh.check(message, _COORDINATOR, where)

    async def job(self, payload: bytes) -> bytes | None:
        """This server's signed release report (JSON) for a job message: computed for a valid new job, the
        recorded release re-signed with a fresh stamp for the same job sent again (freshly signed); None
        (counted and logged by reason) for anything else: not a job, another session or server, not signed
        by the coordinator, expired, replayed, or a second, different job for a released round."""
        try:
            message = ServerJob.model_validate_json(payload)
            if message.server != self._index:
                raise ProtocolViolation("server", f"mpc server {self._index}: a job for server {message.server}")
            self._check(message, f"job of round {message.round}")
            return await self._answer(message)
        except ValidationError:
            self.rejections.reject("schema", f"mpc server {self._index}: not a job")
        except ProtocolViolation as exc:
            self.rejections.reject(exc.reason, exc.detail)
        return None

    async def _answer(self, message: ServerJob) -> bytes:
        """The report of a verified, fresh job (ProtocolViolation: a second job, or content of another round)."""
        where = f"mpc server {self._index}: job of round {message.round}"
        if message.round in self._released:
            text, release, sent, cpu = self._released[message.round]
            if text != message.job:
                raise ProtocolViolation("second-job", f"{where}: a second, different job for a released round")
            again = sign_message(release.model_copy(update={"nonce": new_nonce(), **stamp(DEFAULT_LIFETIME)}),
                                 self._config.keys.signing)
            return self._report(kind="release", round=message.round, repetitions=message.repetitions,
                                release=again.model_dump_json(), sent=sent, cpu=cpu)
        job = RoundJob.from_line(message.job)
        if job.round != message.round or job.releases != message.repetitions:
            raise ProtocolViolation("job", f"{where}: its content names another round")
        result = await self._serve_job(job)
        release_class = SumRelease if job.function == "sum" else CuratorRelease
        release = release_class.model_validate_json(result["release"])
        self._released[job.round] = (message.job, release, int(result["sent"]), float(result["cpu"]))
        log.info("mpc server %d: released round %d (%d participants)", self._index, job.round, len(job.parties))
        return self._report(kind="release", round=job.round, repetitions=job.releases, release=result["release"],
                            sent=int(result["sent"]), cpu=float(result["cpu"]))
