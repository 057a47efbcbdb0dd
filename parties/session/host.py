"""One party host of a deployment (``mpdp party``): some of a session's parties in one process.

::

    check the broker                       one MQTT connect, else a one-line TransportError
    presence claim                         refuse while another live host serves any of these parties
                                           (mpdp.parties.session.presence); keep claiming until the end
    beacon: subscribe to status + rounds   before any party exists, so it sees the host's "ready"
    serve_parties(WorkerSpec)              parties as asyncio tasks, each its own MQTT connection,
                                           reporting "ready" once all are subscribed
    beacon repeats that "ready" (signed afresh: the observer refuses a replay) every ready_interval s
    until the coordinator's first signed announcement, so the observer may start before or after the hosts
    (and the mpc compute servers: the repeats carry the parties' session sealing keys of the first)
    each party answers every announced round, then leaves at the end announcement -> return

The host is worker ``min(parties)`` on the status topic (unique when hosts hold disjoint parties);
the observer waits until the ready hosts cover every party of the roster.

Privacy policy, the host's own (never from the wire): each party answers at most ``max_repetitions``
releases per round (more: an abstention ``policy``) and, with a budget, never beyond it by the exact
optimal composition (``budget-exhausted``). The answer record (``record``, SQLite) keeps every signed answer
and its ledger charge, committed before publishing; a re-announced round gets the same message again,
after a restart of the host, the observer or the broker, and so does the round in flight when the host
restarted (at the observer's next heartbeat, which names the open round).

The ready beacon and the observer check a "ready" report against the key of every party it lists
(:class:`mpdp.broker.messages.WorkerStatus`): a host speaks only for the parties whose keys it holds.

Protocols: ``protocol="rr"`` (randomized response, the default); ``"mpc"``: each party secret-shares its bit
among the compute servers pinned in the roster (:func:`mpdp.parties.mpc.party.start_pinned_mpc_party`),
with the same policy (repetition cap, budget at the roster's epsilon, answer record).

Modes: deployment (``seed=None``, the default of ``mpdp party``) privatizes with
:func:`mpdp.protocols.randomization.secure.sample_secure` (exact sampling from the OS CSPRNG); simulation (a seed)
gives party i the stream :meth:`mpdp.parties.rounds.seeds.SeedTree.party` of ``mpdp simulate --seed``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import secrets
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import cast

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from mpdp.analysis.privacy.accounting import Budget
from mpdp.broker.connectivity import wait_for_broker
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, WorkerStatus
from mpdp.broker.mpc_messages import MpcAnnouncement
from mpdp.broker.signing import load_private_key, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport, next_delivery
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.engine import HEARTBEAT_INTERVAL
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.plan import RunningParty
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.registry import party_starter
from mpdp.parties.rounds.secure_sampling import secure_sampler
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rounds.session_files import SessionRoster
from mpdp.parties.session.datasets import Dataset
from mpdp.parties.session.presence import PRESENCE_INTERVAL, Presence
from mpdp.parties.session.runner import first_mpdp_error
from mpdp.parties.session.worker import WorkerSpec, serve_parties, status_reports
from mpdp.protocols.errors import ParameterError

__all__ = ["MIN_OBSERVER_GRACE", "HostConfig", "host_bits", "host_parties"]

log = logging.getLogger("mpdp.host")
#: The shortest grace a host gives a silent observer: two heartbeats.
MIN_OBSERVER_GRACE = 2 * HEARTBEAT_INTERVAL


def host_bits(dataset: Dataset, parties: Sequence[int], k: int) -> NDArray[np.int8]:
    """The hosted parties' rows of a dataset: int8 (len(parties), R).

    The dataset holds either all k parties (row i = party i; the other rows are dropped) or exactly
    the hosted parties, in the order of ``parties`` (a host's own file).

    Raises:
        ParameterError: any other number of rows.
    """
    rows = dataset.num_parties
    if rows == k:
        return dataset.bits[list(parties)].copy()
    if rows == len(parties):
        return dataset.bits.copy()
    raise ParameterError("--dataset", dataset.name,
                         f"{k} rows (every party of the roster) or {len(parties)} (the hosted parties)",
                         hint=f"it has {rows}")


@dataclass(frozen=True, slots=True, eq=False)
class HostConfig:
    """One party host.

    Attributes:
        facts: the session's roster (``roster.json``).
        parties: the hosted party ids, ascending, at least one.
        bits: int8 (len(parties), R): the hosted parties' private bits (0, 1, or -1 = takes no
            part). Not in the repr.
        private_keys: the hosted parties' raw Ed25519 private keys, in the order of ``parties``.
        endpoint: the running broker.
        seed: None = deployment mode (CSPRNG); an integer = simulation mode (reproducible).
        idle_timeout: seconds a party waits for the first announcement (the observer may start later).
        observer_grace: seconds of coordinator silence (no announcement, no heartbeat) after which the host
            leaves with a clear error (the observer is gone; restart the host to rejoin).
        ready_interval: seconds between repeated "ready" reports until the first announcement.
        connect_concurrency: parties connecting at the same time, at most.
        max_repetitions: the most repetitions a hosted party releases for one round (1: deployment default).
        budget: each hosted party's privacy budget; None = no budget (spending still recorded).
        record: the host's answer record (SQLite file); None = in memory only (tests, simulations).
        protocol: ``"rr"`` or ``"mpc"`` (needs a roster with compute servers).
        presence_interval: seconds between the host's presence claims; a starting host listens 2.5 of them
            for another live host of its parties (:mod:`mpdp.parties.session.presence`).
        dataset: the dataset's name as the user gave it (``--dataset``), for the host's errors.

    Raises:
        ParameterError: a field out of its domain.
    """

    facts: SessionRoster
    parties: tuple[int, ...]
    bits: NDArray[np.int8] = field(repr=False)
    private_keys: tuple[bytes, ...] = field(repr=False)
    endpoint: BrokerEndpoint
    seed: int | None = None
    idle_timeout: float = 3600.0
    observer_grace: float = OBSERVER_GRACE
    ready_interval: float = 1.0
    connect_concurrency: int = 32
    max_repetitions: int = 1
    budget: Budget | None = None
    record: Path | None = None
    protocol: str = "rr"
    presence_interval: float = PRESENCE_INTERVAL
    dataset: str = "the dataset"

    def __post_init__(self) -> None:
        k = self.facts.roster.k
        if self.protocol not in ("rr", "mpc") or (self.protocol == "mpc" and self.facts.servers is None):
            raise ParameterError("protocol", self.protocol, "rr, or mpc with a roster from mpdp keys --protocol mpc")
        parties = tuple(int(p) for p in self.parties)
        if not parties or list(parties) != sorted(set(parties)) or parties[0] < 0 or parties[-1] >= k:
            raise ParameterError("parties", parties, f"ascending distinct ids in 0..{k - 1}, at least one")
        bits = np.asarray(self.bits)
        if bits.ndim != 2 or bits.shape[0] != len(parties) or bits.shape[1] < 1:
            raise ParameterError("bits", bits.shape, f"shape ({len(parties)}, R), R >= 1")
        if not np.isin(bits, (-1, 0, 1)).all():
            raise ParameterError("bits", sorted(set(np.unique(bits).tolist()) - {-1, 0, 1}), "values 0, 1, -1")
        if len(self.private_keys) != len(parties):
            raise ParameterError("private_keys", len(self.private_keys), f"one per hosted party ({len(parties)})")
        cap = self.max_repetitions
        if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
            raise ParameterError("max_repetitions", cap, "an integer >= 1")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0):
            raise ParameterError("seed", self.seed, "an integer >= 0, or None (deployment mode)")
        for name in ("idle_timeout", "ready_interval", "observer_grace", "presence_interval"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0 < value < math.inf):
                raise ParameterError(name, value, "a finite number of seconds > 0")
        if self.observer_grace < MIN_OBSERVER_GRACE:
            raise ParameterError("observer_grace", self.observer_grace,
                                 f"at least {MIN_OBSERVER_GRACE:g} s (the observer's heartbeat comes every "
                                 f"{HEARTBEAT_INTERVAL:g} s)")
        object.__setattr__(self, "parties", parties)
        object.__setattr__(self, "bits", bits.astype(np.int8))

    @property
    def worker(self) -> int:
        """This host's index on the status topic: its smallest party id."""
        return self.parties[0]

    def worker_spec(self) -> WorkerSpec:
        """The :class:`WorkerSpec` that :func:`mpdp.parties.session.worker.serve_parties` runs."""
        roster = self.facts.roster
        seeds = None if self.seed is None else SeedTree(self.seed).parties(roster.k)
        return WorkerSpec(
            index=self.worker, endpoint=self.endpoint, session=self.facts.session,
            coordinator_key=self.facts.coordinator_public_key,
            parties=tuple(
                PartySpec(party, self.bits[j].copy(), roster.mechanisms[party], self.private_keys[j],
                          None if seeds is None else seeds[party], self.budget,
                          max_repetitions=self.max_repetitions)
                for j, party in enumerate(self.parties)
            ),
            secure=self.seed is None, idle_timeout=self.idle_timeout, observer_grace=self.observer_grace,
            connect_concurrency=self.connect_concurrency, record=self.record,
            start=(party_starter("rr") if self.protocol == "rr"
                   else partial(cast(Callable[..., RunningParty], party_starter("mpc")), servers=self.facts.servers)),
        )


class _ReadyBeacon:
    """Repeats the host's "ready" status, freshly signed each time, from the host's first "ready" until the
    coordinator's first signed, unexpired announcement."""

    def __init__(self, config: HostConfig, connector: Connector) -> None:
        self._config = config
        self._spec = config.worker_spec()
        self._connector = connector
        self._topics = Topics(config.facts.session)
        self.subscribed = asyncio.Event()
        # loaded once (each load derives the public key): the beacon signs one report a second
        self.keys = [load_private_key(key) for key in config.private_keys]
        self._public_keys = {party: bytes(key.verify_key) for party, key in zip(config.parties, self.keys)}
        self._sealing: list[bytes] = []  # the parties' session sealing keys of the host's own "ready" (mpc)

    def _is_round(self, payload: bytes) -> bool:
        """A signed, unexpired announcement of a round or the end (a heartbeat does not stop the beacon: the
        observer sends those from its start, maybe before it heard this host's "ready")."""
        try:
            announcement = (MpcAnnouncement if self._config.protocol == "mpc" else Announcement).model_validate_json(
                payload)
        except ValidationError:
            return False
        return (announcement.session == self._topics.session and announcement.kind != "heartbeat"
                and announcement.expires_ms > time.time() * 1000
                and verify_message(announcement, self._config.facts.coordinator_public_key))

    def _own_ready(self, payload: bytes) -> bool:
        try:
            status = WorkerStatus.model_validate_json(payload)
        except ValidationError:
            return False
        config = self._config
        own = ((status.session, status.worker, status.state, status.parties)
               == (self._topics.session, config.worker, "ready", config.parties)
               and not status.unsigned(self._public_keys))
        if own:  # repeated with it: a compute server that subscribed late still derives its keys ahead
            self._sealing = list(status.sealing_key_map().values())
        return own

    async def run(self) -> None:
        """Subscribe, then repeat the host's "ready" until the first signed announcement.

        Raises:
            TransportError: the broker is gone for good.
        """
        topics = self._topics
        client_id = f"mpdp-{topics.session}-host-{self._config.worker}-beacon-{secrets.token_hex(4)}"
        async with self._connector.connect(client_id) as transport:
            await transport.subscribe(topics.status, topics.rounds)
            self.subscribed.set()
            await self._repeat(transport)

    async def _repeat(self, transport: Transport) -> None:
        # every ready_interval by the clock, whatever else arrives: other hosts' reports (or anyone's, on
        # an open broker) on the status topic must not starve the repeat
        ready, due = False, time.monotonic() + self._config.ready_interval
        while True:
            delivery = await next_delivery(transport, max(0.0, due - time.monotonic()))
            if time.monotonic() >= due:
                due = time.monotonic() + self._config.ready_interval
                if ready:
                    for status in status_reports(self._spec, "ready", keys=self.keys, sealing_keys=self._sealing):
                        await transport.publish(self._topics.status, status.model_dump_json())
            if delivery is None:
                continue
            if delivery.topic == self._topics.rounds and self._is_round(delivery.payload):
                return
            if not ready and delivery.topic == self._topics.status and self._own_ready(delivery.payload):
                ready = True


async def host_parties(config: HostConfig) -> None:
    """Serve the hosted parties until the coordinator ends the session (module docstring).

    Raises:
        TransportError: the broker is unreachable or went away; no announcement for
            ``idle_timeout`` seconds.
        ParameterError: an announced round beyond the dataset's rounds, one line (:func:`_host_error`); the
            parties' "failed" report went to the observer first (:func:`mpdp.parties.session.worker.serve_parties`).
    """
    spec = config.worker_spec()
    if spec.secure:
        secure_sampler()  # fail before connecting when protocols.randomization.secure is not in this build
    await wait_for_broker(config.endpoint)
    beacon = _ReadyBeacon(config, config.endpoint)
    presence = Presence(config.facts.session, config.parties, beacon.keys, config.facts.roster.public_keys,
                        config.endpoint, config.presence_interval)
    try:
        async with asyncio.TaskGroup() as tg:
            presence_task = tg.create_task(presence.run(), name="presence-claim")
            await presence.checked.wait()
            beacon_task = tg.create_task(beacon.run(), name="ready-beacon")
            await beacon.subscribed.wait()
            await serve_parties(spec)
            beacon_task.cancel()
            presence_task.cancel()
    except BaseExceptionGroup as group:
        first = first_mpdp_error(group)
        if first is group:
            raise
        raise _host_error(first, config) from first  # from the first cause: not "(and N more: ...)" per party


def _host_error(first: BaseException, config: HostConfig) -> BaseException:
    """The host's one-line error for its parties' first error ``first``: a round beyond the dataset's columns
    (every hosted party fails alike) names the dataset, its number of rounds and the round announced, e.g.
    ``votes.csv has 3 rounds (columns), the session announced round 3 (rounds count from 0): parties 0-4
    cannot answer it and leave``; any other error is ``first`` itself."""
    if not (isinstance(first, ParameterError) and first.name == "round"):
        return first
    rounds = config.bits.shape[1]
    return ParameterError("round", first.value, f"0..{rounds - 1}", message=(
        f"{config.dataset} has {rounds} {'round' if rounds == 1 else 'rounds'} (columns), the session announced "
        f"round {first.value} (rounds count from 0): parties {format_ranges(config.parties)} cannot answer it and "
        "leave (reported failed to the observer, which records them absent); give the hosted parties a dataset "
        "with a column for every round of the session"))
