"""The coordinator of the secure-computation protocol: the round-engine plug-in of ``--protocol mpc``.

Ahead of the first round, each worker's signed "ready" lists its parties' session sealing keys (each signed by
its party's key, verified by the round engine): the coordinator hands them to the simulation's servers
(:meth:`MpcCoordinator.ready`, starting them), which derive their key with each party while the session waits
for its first round. Per round:

1. it announces the round with the m compute servers' X25519 public keys and T
   (:class:`mpdp.broker.mpc_messages.MpcAnnouncement`, signed with the coordinator's Ed25519 key; the
   first announcement also starts the servers, which connect to each other while the parties answer);
2. each party's :class:`mpdp.broker.mpc_messages.SharedBallot` is validated by the round engine like any
   answer (topic, schema, session, unknown-party, signature, round, late, double-release, repetitions), then
   ``shares`` (not one sealed share per server) is a further reject reason. The coordinator cannot open
   a share: it only relays each server's ciphertexts;
3. at close, with n participants, it hands server i the participants' shares sealed to it and the public
   table N(0..n) of the optimal central mechanism of 001 for n voters (L = 40 bits,
   :mod:`mpdp.protocols.randomization.threshold_release`); the servers compute the count and draw ``repetitions``
   releases inside MPyC (:mod:`mpdp.parties.mpc.server`), open only the releases and each signs them; the
   coordinator accepts them only if every signature verifies and all agree
   (:class:`mpdp.parties.mpc.cluster.ServerCluster`), publishes the m signed releases on the session's
   release topic and records ballots (ciphertexts), releases and each server's cost of the round
   (:mod:`mpdp.parties.mpc.store`).

With no participant (n = 0) the output is the majority (or sum) of nobody, 0, released without the servers
(it depends on no one's data). For ``sum`` the servers release clamp(s + Z, 0, n) with 000's two-sided
geometric noise at epsilon (a :class:`mpdp.broker.mpc_messages.SumRelease` per server). A server that fails or is missing fails the round with a
:class:`mpdp.protocols.errors.WorkerError`: MPyC has no dropout tolerance. The releases are secret
draws of the servers (MPyC's pseudorandom secret sharing from the OS CSPRNG): never seeded.
"""

from __future__ import annotations

import json
from typing import Literal

import numpy as np

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot, SumRelease
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.store import BallotRows, recorded_ballots
from mpdp.parties.mpc.cluster import ServerCluster, round_jobs
from mpdp.parties.mpc.remote import BrokerServers
from mpdp.parties.mpc.store import MpcRows
from mpdp.parties.rounds.engine import ClosedRound, Closing
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.threshold_release import DEFAULT_RANDOM_BITS, geometric_table, release_table

__all__ = ["MpcCoordinator", "Shares"]

#: A ballot's payload: per server, its (ephemeral key, ciphertext); empty for an abstention.
Shares = list[tuple[bytes, bytes]]


class MpcCoordinator:
    """The mpc protocol of the round engine (the coordinator's side).

    Args:
        topics: the session's topics.
        cluster: the compute servers (started at the first announcement; closed by :meth:`conclude` or
            its owner): the simulation's processes (:class:`ServerCluster`) or a deployment's servers over
            the broker (:class:`mpdp.parties.mpc.remote.BrokerServers`).
        epsilon, delta: the central mechanism's privacy level per vote (every party's).
        function: ``"majority"`` (001's optimal central mechanism) or ``"sum"`` (000's geometric
            mechanism at epsilon, clamped to 0..n).
        random_bits: L of the integer release table.

    Raises:
        ParameterError: another function.
    """

    role = "mpc"
    decode = staticmethod(SharedBallot.from_wire)  # JSON, validated (the engine verifies)

    def __init__(self, topics: Topics, cluster: ServerCluster | BrokerServers, epsilon: float, delta: float, *,
                 function: str = "majority", random_bits: int = DEFAULT_RANDOM_BITS) -> None:
        if function not in ("majority", "sum"):
            raise ParameterError("function", function, "majority or sum with the mpc protocol")
        self._topics = topics
        self.cluster = cluster
        #: The deployed servers' report topics (over the engine's connection); none in a simulation.
        self.filters: tuple[str, ...] = cluster.filters if isinstance(cluster, BrokerServers) else ()
        self.epsilon, self.delta, self.function, self.random_bits = epsilon, delta, function, random_bits

    def announcement(self, signer: PrivateKey, session: str, index: int, name: str,
                     repetitions: int, lifetime: float) -> MpcAnnouncement:
        """The signed announcement of round ``index`` with the servers' keys (starts the servers once),
        valid for ``lifetime`` seconds."""
        self.cluster.start()
        return MpcAnnouncement.signed(signer, session=session, kind="round", round=index, name=name,
                                      repetitions=repetitions, server_keys=self.cluster.public_keys,
                                      threshold=self.cluster.threshold, lifetime=lifetime)

    def signal(self, signer: PrivateKey, session: str, kind: Literal["end", "heartbeat"], index: int,
               repetitions: int, name: str = "") -> MpcAnnouncement:
        """The signed end of the session (``index`` = the number of rounds; ``name``: why it failed, "" when
        complete), or a heartbeat."""
        return MpcAnnouncement.signed(signer, session=session, kind=kind, round=index, repetitions=repetitions, name=name)

    def payload(self, message: SharedBallot, where: str) -> Shares:
        """The ballot's sealed shares in server order (empty for an abstention).

        Raises:
            ProtocolViolation: ``shares``: not one share per server.
        """
        pairs = message.sealed_pairs()
        if message.kind == "sealed" and len(pairs) != self.cluster.servers:
            raise ProtocolViolation("shares", f"{where}: {len(pairs)} {noun(len(pairs), 'share')} for "
                                              f"{self.cluster.servers} {noun(self.cluster.servers, 'server')}")
        return pairs

    def receive(self, topic: str, text: str) -> None:
        """A deployed server's report (:meth:`mpdp.parties.mpc.remote.BrokerServers.receive`); in a
        simulation the coordinator reads party topics only.

        Raises:
            ProtocolViolation: the report's reject reason; ``topic`` for anything in a simulation.
        """
        if not isinstance(self.cluster, BrokerServers):
            raise ProtocolViolation("topic", topic)
        self.cluster.receive(topic, text)

    def ready(self, status: WorkerStatus) -> None:
        """Hand the simulation's servers the session sealing keys the parties signed in their "ready"
        (started now if not yet): each server derives its key with each party while the session waits for its
        first round (:meth:`mpdp.parties.mpc.cluster.ServerCluster.expect`), so no X25519 exchange is left in
        the round. Deployed servers (:class:`mpdp.parties.mpc.remote.BrokerServers`) read the hosts' "ready"
        themselves and check each party's signature with the roster
        (:meth:`mpdp.parties.mpc.deployed_server.JobHandler.ready`); a party whose ready listed no key is
        derived at its first share."""
        keys = status.sealing_key_map()
        if keys and isinstance(self.cluster, ServerCluster):
            self.cluster.expect(keys)

    async def close(self, closed: ClosedRound[SharedBallot, Shares], signer: PrivateKey) -> Closing:
        """Have the servers release for the participants' shares; record and publish the signed releases
        (the engine goes on receiving meanwhile: a deployment's server reports come over its connection).

        Raises:
            WorkerError: a server failed, is missing or stuck (the round is not recorded).
        """
        parties = closed.participants.tolist()
        if parties:
            table = (geometric_table(self.epsilon, self.random_bits) if self.function == "sum" else
                     release_table(central_majority_mechanism(len(parties), self.epsilon, self.delta).release_one,
                                   self.random_bits))
            jobs = round_jobs(closed.index, parties, [closed.received[p].payload for p in parties], table,
                              closed.repetitions)
            outputs, releases = await self.cluster.run_round(jobs)
            costs = self.cluster.last_costs
        else:
            costs = ()
            outputs = np.zeros(closed.repetitions, dtype=np.int64)
            message = SumRelease if self.function == "sum" else CuratorRelease
            releases = [message.signed(signer, session=closed.session, round=closed.index, voters=0,
                                       outputs=outputs).model_dump_json()]
        rows = MpcRows(BallotRows(recorded_ballots(closed), len(parties), json.dumps(releases)), costs)
        if closed.undecided:  # no ballot (nobody answered, or every party abstained): nothing published
            return Closing(closed.outcome(closed.no_decisions(), None), rows)
        return Closing(closed.outcome(outputs.astype(np.int64), None), rows,
                       tuple((self._topics.release, text) for text in releases))

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round: the released outputs (no symbols: the shares are sealed)."""
        return store.load_round(session, index, symbols=False)

    async def conclude(self) -> None:
        """After the last round: end the servers' MPyC session."""
        self.cluster.close()
