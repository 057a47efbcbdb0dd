"""The curator protocol in the runner (:mod:`mpdp.parties.session.runner`; the central model, to compare
with randomized response).

It takes the same :class:`mpdp.parties.session.config.RunConfig` as randomized response, with
``protocol="curator"``: ``mechanisms`` give each party's privacy level (one (epsilon, delta) for all: the
curator's mechanism is (epsilon, delta)-DP for every vote), ``function`` must be the majority
(``passed``), ``measure`` is not used and ``rule_factory`` must be None. Keys: each party's Ed25519 key
goes only to its worker; the curator's Ed25519 public key goes to every party (they ignore announcements
signed by anyone else). The seed tree's curator stream seeds the curator's draws; the parties draw nothing.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence

from mpdp.analysis.accounting import Spent
from mpdp.broker.topics import Topics
from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.party import start_curator_party
from mpdp.parties.curator.store import CuratorStore
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.config import RunConfig
from mpdp.parties.session.plan import PartyPlan
from mpdp.parties.session.seeds import SeedTree
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.secure import rng_mode

__all__ = ["CuratorSession", "curator_privacy_level"]


def curator_privacy_level(config: RunConfig) -> tuple[float, float]:
    """The (epsilon, delta) of the curator's mechanism for ``config``.

    Raises:
        ParameterError: a function other than the majority (the optimal mechanism of 001 is for
            binary functions; names the alternative), a rule factory, or parties with different
            privacy levels.
    """
    if config.function.name != "majority":
        raise ParameterError("function", config.function.name,
                             "majority (or passed) for the curator protocol: its optimal mechanism is "
                             "for a binary function", hint="other functions: --protocol rr")
    if config.rule_factory is not None:
        raise ParameterError("rule_factory", config.rule_factory, "None: the curator has no decision rule")
    levels = sorted({(m.epsilon, m.delta) for m in config.mechanisms})
    if len(levels) != 1:
        raise ParameterError("epsilon", f"{len(levels)} different (epsilon, delta) levels",
                             "one epsilon and one delta for every party in the curator protocol",
                             hint="per-party levels: --protocol rr")
    return levels[0]


class CuratorSession:
    """The curator plug-in of the runner (a :class:`mpdp.parties.session.runner.SessionProtocol`)."""

    #: The store a run opens (a subclass of the curator store for protocols that record more).
    store_class: type[CuratorStore] = CuratorStore

    def privacy_level(self, config: RunConfig) -> tuple[float, float]:
        """The (epsilon, delta) of the released mechanism (:func:`curator_privacy_level`).

        Raises:
            ParameterError: as :func:`curator_privacy_level`.
        """
        return curator_privacy_level(config)

    def check(self, config: RunConfig) -> None:
        """See :meth:`privacy_level`.

        Raises:
            ParameterError: as :meth:`privacy_level`.
        """
        self.privacy_level(config)

    @contextlib.contextmanager
    def open_store(self, config: RunConfig) -> Iterator[tuple[TranscriptStore, frozenset[int]]]:
        """The curator store with the session and its (epsilon, delta) opened; the rounds already recorded.

        Raises:
            ParameterError: the session is stored with other parameters; the store is not writable.
        """
        epsilon, delta = self.privacy_level(config)
        with self.store_class(config.store_path) as store:
            yield store, store.open_curator_session(config.session, config.k, config.repetitions,
                                                    config.round_names, epsilon, delta,
                                                    mode=rng_mode(config.secure))

    def round_protocol(self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore,
                       seeds: SeedTree | None) -> Curator:
        """The curator, seeded with the seed tree's curator stream (None: exact CSPRNG draws)."""
        return Curator(topics, roster, seed=None if seeds is None else seeds.curator())

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """Curator parties; they draw nothing and keep no ledger (the curator releases)."""
        return PartyPlan(start_curator_party, None)

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The rounds as released; no per-party spending."""
        return tuple(outcomes), ()
