"""The curator protocol in the runner (:mod:`mpdp.parties.session.runner`; the central model, to compare
with randomized response).

It takes the same :class:`mpdp.parties.rounds.config.RunConfig` as randomized response, with
``protocol="curator"`` (the central protocols' rules: :mod:`mpdp.parties.ballots.central`). Keys: each party's
Ed25519 key goes only to its worker; the curator's Ed25519 public key goes to every party (they ignore
announcements signed by anyone else). The seed tree's curator stream seeds the curator's draws; the parties
draw nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager

from mpdp.analysis.privacy.accounting import Spent
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.central import CentralSession
from mpdp.parties.ballots.store import BallotStore
from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.party import start_curator_party
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.plan import PartyPlan
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rounds.store import TranscriptStore

__all__ = ["CuratorSession"]


class CuratorSession:
    """The curator plug-in of the runner (a :class:`mpdp.parties.rounds.registry.SessionProtocol`)."""

    def __init__(self) -> None:
        self.central = CentralSession(BallotStore)

    def check(self, config: RunConfig) -> None:
        """The central release's restrictions (:func:`mpdp.parties.ballots.central.curator_privacy_level`).

        Raises:
            ParameterError: a function the curator does not release, several privacy levels, a rule factory.
        """
        self.central.privacy_level(config)

    def open_store(self, config: RunConfig) -> AbstractContextManager[tuple[TranscriptStore, frozenset[int]]]:
        """The ballot store with the session opened (:meth:`CentralSession.open_store`)."""
        return self.central.open_store(config)

    def round_protocol(self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore,
                       seeds: SeedTree | None) -> Curator:
        """The curator of ``config.function``, seeded with the seed tree's curator stream (None: exact
        CSPRNG draws)."""
        return Curator(topics, roster, seed=None if seeds is None else seeds.curator(),
                       function=config.function.name)

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """Curator parties; they draw nothing and keep no ledger (the curator releases)."""
        return PartyPlan(start_curator_party, None)

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round (:meth:`mpdp.parties.ballots.central.CentralSession.load`)."""
        return self.central.load(store, session, index)

    def pipelined(self, config: RunConfig) -> bool:
        """No: the curator's rounds run one after the other."""
        return False

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The rounds as released; no per-party spending."""
        return self.central.finish(config, store, outcomes)
