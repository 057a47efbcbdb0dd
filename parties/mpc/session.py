"""The mpc protocol in the runner (:mod:`mpdp.parties.session.runner`): secure computation of the
curator's release, with no one trusted with a vote.

It takes the :class:`mpdp.parties.rounds.config.RunConfig` of the curator protocol (one (epsilon, delta)
for all, ``function`` the majority, no rule factory; or ``function`` the sum, released with 000's geometric
mechanism at epsilon) with ``protocol="mpc"``, plus ``servers`` (m) and
``threshold`` (T < m/2). The run's :class:`mpdp.parties.mpc.cluster.ServerCluster` (m MPyC processes, one
MPyC session for all rounds) lives exactly as long as the run's store: whatever ends the run (the last
round, an error, a stop signal) ends the server processes. The store is the curator's (sealed ballots,
signed releases) with each server's cost per round (:mod:`mpdp.parties.mpc.store`); the releases are the servers' secret draws, so ``seed`` fixes nothing of them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from mpdp.broker.topics import Topics
from mpdp.parties.curator.session import CuratorSession
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


class MpcSession(CuratorSession):
    """The mpc plug-in of the runner (a :class:`mpdp.parties.session.runner.SessionProtocol`)."""

    store_class = MpcStore

    def __init__(self) -> None:
        self._clusters: dict[int, ServerCluster] = {}

    def check(self, config: RunConfig) -> None:
        """The curator's restrictions (the sum allowed), and m >= 1 servers with T < m/2.

        Raises:
            ParameterError: as :func:`mpdp.parties.curator.session.curator_privacy_level` (majority or sum,
                one level); m or T out of range.
        """
        super().check(config)
        check_servers(config.servers, config.threshold)

    @contextlib.contextmanager
    def open_store(self, config: RunConfig) -> Iterator[tuple[TranscriptStore, frozenset[int]]]:
        """The curator store (see :meth:`CuratorSession.open_store`); on exit, the run's servers end too."""
        with super().open_store(config) as (store, recorded):
            try:
                yield store, recorded
            finally:
                cluster = self._clusters.pop(id(store), None)
                if cluster is not None:
                    cluster.close()

    def round_protocol(  # type: ignore[override]  # the curator's session, another round-engine plug-in
        self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore, seeds: SeedTree | None,
    ) -> MpcCoordinator:
        """The coordinator with the run's compute servers (not started until the first round); a round
        may take ``config.round_timeout`` seconds in the servers."""
        epsilon, delta = self.privacy_level(config)
        cluster = ServerCluster(config.servers, config.threshold, session=config.session,
                                deadline=config.round_timeout)
        self._clusters[id(store)] = cluster
        return MpcCoordinator(topics, cluster, epsilon, delta, function=config.function.name)

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """mpc parties; they draw nothing seeded and keep no ledger (the servers release)."""
        return PartyPlan(start_mpc_party, None)
