"""The mpc protocol in the runner (:mod:`mpdp.parties.session.runner`): secure computation of the
curator's release, with no one trusted with a vote.

It takes the :class:`mpdp.parties.rounds.config.RunConfig` of a central protocol (one (epsilon, delta) for
all, ``function`` the majority, no rule factory; or ``function`` the sum, released with 000's geometric
mechanism at epsilon; :mod:`mpdp.parties.ballots.central`) with ``protocol="mpc"``, plus ``servers`` (m) and
``threshold`` (T < m/2). The run's :class:`mpdp.parties.mpc.cluster.ServerCluster` (m MPyC processes, one
MPyC session for all rounds) lives exactly as long as the run's store: whatever ends the run (the last
round, an error, a stop signal) ends the server processes. The store is the ballot store (sealed ballots,
signed releases) with each server's cost per round (:mod:`mpdp.parties.mpc.store`); the releases are the
servers' secret draws, so ``seed`` fixes nothing of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from mpdp.analysis.privacy.accounting import Spent
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.central import CentralSession
from mpdp.parties.mpc.cluster import ServerCluster
from mpdp.parties.mpc.coordinator import MpcCoordinator
from mpdp.parties.mpc.party import start_mpc_party
from mpdp.parties.mpc.sharing import check_servers
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.plan import PartyPlan
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rounds.store import TranscriptStore

__all__ = ["MpcSession"]


class MpcSession:
    """The mpc plug-in of the runner (a :class:`mpdp.parties.rounds.registry.SessionProtocol`)."""

    def __init__(self) -> None:
        self.central = CentralSession(MpcStore)
        self._clusters: dict[int, ServerCluster] = {}

    def check(self, config: RunConfig) -> None:
        """The central release's restrictions (the sum allowed), and m >= 1 servers with T < m/2.

        Raises:
            ParameterError: as :func:`mpdp.parties.ballots.central.curator_privacy_level` (majority or sum,
                one level); m or T out of range.
        """
        self.central.privacy_level(config)
        check_servers(config.servers, config.threshold)

    @contextlib.contextmanager
    def open_store(self, config: RunConfig) -> Iterator[tuple[TranscriptStore, frozenset[int]]]:
        """The mpc store (see :meth:`mpdp.parties.ballots.central.CentralSession.open_store`); on exit, the
        run's servers end too."""
        with self.central.open_store(config) as (store, recorded):
            try:
                yield store, recorded
            finally:
                cluster = self._clusters.pop(id(store), None)
                if cluster is not None:
                    cluster.close()

    def round_protocol(self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore,
                       seeds: SeedTree | None) -> MpcCoordinator:
        """The coordinator with the run's compute servers (not started until the first round); a round
        may take ``config.round_timeout`` seconds in the servers."""
        epsilon, delta = self.central.privacy_level(config)
        cluster = ServerCluster(config.servers, config.threshold, session=config.session,
                                deadline=config.round_timeout)
        self._clusters[id(store)] = cluster
        return MpcCoordinator(topics, cluster, epsilon, delta, function=config.function.name)

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """mpc parties; they draw nothing seeded and keep no ledger (the servers release)."""
        return PartyPlan(start_mpc_party, None)

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round (:meth:`mpdp.parties.ballots.central.CentralSession.load`)."""
        return self.central.load(store, session, index)

    def pipelined(self, config: RunConfig) -> bool:
        """No: each round's close waits for the compute servers, which serve one round at a time."""
        return False

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The rounds as released; no per-party spending."""
        return self.central.finish(config, store, outcomes)
