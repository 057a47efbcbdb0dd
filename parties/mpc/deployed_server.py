"""One compute server of a deployed mpc session (``mpdp mpc-server``): MPyC with its peers at the roster's
addresses, its jobs from the broker, its signed releases back over the broker.

::

    MPyC start                 connect to the m - 1 other servers at the roster's host:port addresses
    MQTT connect               subscribe to its own job topic and the round announcements
    "ready" (signed)           repeated until its first job (the coordinator waits for every server's)
    per ServerJob              signed by the coordinator's key pinned in the roster, for this session and
                               server: open the shares sealed to this server (only those), compute the
                               count and the release in MPyC with the others (:func:`round_server`),
                               publish the signed release with its cost (a :class:`ServerReport`)
    end announcement           signed by the coordinator: shut MPyC down and exit

The trust model is the simulation's: the server sees only the shares sealed to its own X25519 key and the
opened release. A round's job that comes again (a coordinator that restarted) gets the release already
published again, never a second draw; another job for a round already released is refused (logged), so a
coordinator cannot buy a second release of the same votes from this server in one process' life. MPyC
has no dropout tolerance: a peer that is down makes the start, or the round, wait; the coordinator fails
the round at its deadline, and this process gives up after ``idle_timeout`` seconds without a message.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mpdp.broker.connectivity import check_connectivity
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mpc_messages import MpcAnnouncement, ServerJob, ServerReport
from mpdp.broker.signing import verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.mpc.server import RoundJob, ServerKeys, round_server
from mpdp.parties.mpc.sharing import field_modulus
from mpdp.parties.session.files import ServerKeyPair, SessionRoster
from mpdp.protocols.errors import ParameterError, TransportError, WorkerError

__all__ = ["DeployedServerConfig", "JobHandler", "mpyc_arguments", "run_server"]

log = logging.getLogger("mpdp.mpc.server")


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
    servers = config.facts.servers
    assert servers is not None
    keys = ServerKeys(field_modulus(), config.facts.session, config.keys.server, config.keys.sealing.hex(),
                      config.keys.signing.hex())
    server = JobHandler(config, round_server(mpc, keys))

    async def main() -> int:
        if isinstance(config.endpoint, BrokerEndpoint):
            await check_connectivity(config.endpoint)  # a wrong --broker fails at once, before MPyC waits
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


class JobHandler:
    """The broker side of one server: jobs in, signed reports out (see the module docstring).

    Args:
        config: the server's configuration.
        serve_job: its MPyC round computation (:func:`mpdp.parties.mpc.server.round_server`).
    """

    def __init__(self, config: DeployedServerConfig,
                 serve_job: Callable[[RoundJob], Awaitable[dict[str, Any]]]) -> None:
        self._config = config
        self._serve_job = serve_job
        self._topics = Topics(config.facts.session)
        self._index = config.keys.server
        self._released: dict[int, tuple[str, bytes]] = {}  # round -> (job text, published report)

    def _report(self, **fields: object) -> bytes:
        report = ServerReport.signed(self._config.keys.signing, session=self._topics.session, server=self._index,
                                     **fields)  # type: ignore[arg-type]
        return report.model_dump_json().encode()

    async def run(self) -> int:
        """Connect, report ready, serve jobs until the coordinator's signed end; the rounds released.

        Raises:
            TransportError: the broker is unreachable or gone, or ``idle_timeout`` passed.
        """
        client_id = f"mpdp-{self._topics.session}-mpc-server-{self._index}-{secrets.token_hex(4)}"
        async with self._config.endpoint.connect(client_id) as transport:
            await transport.subscribe(self._topics.mpc_job(self._index), self._topics.rounds)
            return await self._serve(transport)

    async def _serve(self, transport: Transport) -> int:
        ready = self._report(kind="ready")
        await transport.publish(self._topics.mpc_servers, ready)
        loop = asyncio.get_running_loop()
        last = loop.time()
        while True:
            delivery = await next_delivery(transport, self._config.ready_interval)
            if delivery is None:
                if loop.time() - last > self._config.idle_timeout:
                    raise TransportError(f"mpc server {self._index}: no job or announcement for "
                                         f"{self._config.idle_timeout:g} s")
                if not self._released:
                    await transport.publish(self._topics.mpc_servers, ready)
                continue
            last = loop.time()
            if delivery.topic == self._topics.rounds:
                if self._is_end(delivery.payload):
                    return len(self._released)
            else:
                report = await self.job(delivery.payload)
                if report is not None:
                    await transport.publish(self._topics.mpc_servers, report)

    def _is_end(self, payload: bytes) -> bool:
        try:
            announcement = MpcAnnouncement.model_validate_json(payload)
        except ValidationError:
            return False
        return (announcement.kind == "end" and announcement.session == self._topics.session
                and verify_message(announcement, self._config.facts.coordinator_public_key))

    async def job(self, payload: bytes) -> bytes | None:
        """This server's signed release report (JSON) for a job message: computed for a valid new job, the
        recorded one for the same job sent again; None (logged) for anything else: not a job, not signed by
        the coordinator, for another session or server, or a second, different job for a released round."""
        try:
            message = ServerJob.model_validate_json(payload)
        except ValidationError:
            log.warning("mpc server %d: ignored a message that is not a job", self._index)
            return None
        if (message.session, message.server) != (self._topics.session, self._index) or not verify_message(
                message, self._config.facts.coordinator_public_key):
            log.warning("mpc server %d: ignored a job not signed by the coordinator for it", self._index)
            return None
        if message.round in self._released:
            text, report = self._released[message.round]
            if text == message.job:
                return report
            log.warning("mpc server %d: refused a second, different job for round %d", self._index, message.round)
            return None
        job = RoundJob.from_line(message.job)
        if job.round != message.round or job.releases != message.repetitions:
            log.warning("mpc server %d: ignored a job whose content names another round", self._index)
            return None
        result = await self._serve_job(job)
        report = self._report(kind="release", round=job.round, repetitions=job.releases, release=result["release"],
                              sent=int(result["sent"]), cpu=float(result["cpu"]))
        self._released[job.round] = (message.job, report)
        log.info("mpc server %d: released round %d (%d participants)", self._index, job.round, len(job.parties))
        return report
