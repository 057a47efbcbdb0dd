"""Randomized response in the runner (:mod:`mpdp.parties.session.runner`): the observer decides each
round with the rule; every party privatizes with its seeded generator (simulation) and keeps a privacy
ledger, recomputed from the recorded transcript when a stored session is resumed and for
:attr:`mpdp.parties.rounds.outcome.RunOutcome.spent` at the end."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from collections.abc import Iterator, Sequence

import numpy as np

from mpdp.analysis.privacy.accounting import Spent
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.plan import PartyPlan
from mpdp.parties.rounds.privacy import ledgers_from_rounds
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.decisions import PartyDecisionSpec
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import secure_sampler, start_party
from mpdp.protocols.randomization.secure import rng_mode
from mpdp.protocols.rules.rule_factory import decision_rule

__all__ = ["RandomizedResponseSession"]


class RandomizedResponseSession:
    """The randomized-response plug-in of the runner (a :class:`mpdp.parties.rounds.registry.SessionProtocol`)."""

    def check(self, config: RunConfig) -> None:
        """In deployment mode (``config.secure``), the CSPRNG sampler must be there
        (:func:`mpdp.parties.rr.party.secure_sampler`); nothing else beyond :class:`RunConfig`'s own checks.

        Raises:
            ParameterError: ``secure`` without :mod:`mpdp.protocols.secure`.
        """
        if config.secure:
            secure_sampler()

    @contextlib.contextmanager
    def open_store(self, config: RunConfig) -> Iterator[tuple[TranscriptStore, frozenset[int]]]:
        """The transcript store with the session opened; the rounds already recorded.

        Raises:
            ParameterError: the session is stored with other parameters; the store is not writable.
        """
        with TranscriptStore(config.store_path) as store:
            yield store, store.open_session(config.session, config.k, config.repetitions, config.round_names,
                                                    mode=rng_mode(config.secure))

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round with its symbols (as :meth:`mpdp.parties.rr.observer.Observer.load`)."""
        return store.load_round(session, index)

    def round_protocol(self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore,
                       seeds: SeedTree | None) -> Observer:
        """The observer, deciding with ``config.rule_factory`` (default: the average-case rule)."""
        return Observer(
            topics, roster, store, function=config.function, measure=config.measure,
            rule_factory=config.rule_factory or functools.partial(decision_rule, engine="posterior"), party_decisions=config.party_rule is not None,
            decision_timeout=config.round_timeout if config.decision_timeout is None else config.decision_timeout,
            decision_seed=None if seeds is None else seeds.observer_decisions(), secure=config.secure,
        )

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """The seed tree's party streams seed the parties; their ledgers continue from ``earlier`` rounds; with
        ``config.party_rule`` they decide f too."""
        ledgers = ledgers_from_rounds(earlier, config.mechanisms, config.repetitions, config.delta_slack)
        decisions = (None if config.party_rule is None else
                     PartyDecisionSpec(config.mechanisms, config.function.name, config.party_rule))
        return PartyPlan(start_party, None if seeds is None else seeds.parties(config.k), ledgers, decisions)

    def pipelined(self, config: RunConfig) -> bool:
        """Without party decisions: the rounds are independent, the transcript the parties decide from is
        published only with ``party_rule``."""
        return config.party_rule is None

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The rounds with the parties' own decisions (``party_rule``) and what each party spent."""
        if config.party_rule is not None:
            outcomes = [_with_party_decisions(store, config, outcome) for outcome in outcomes]
        ledgers = ledgers_from_rounds(outcomes, config.mechanisms, config.repetitions, config.delta_slack)
        return tuple(outcomes), tuple(ledger.spent() for ledger in ledgers)


def _with_party_decisions(store: TranscriptStore, config: RunConfig, outcome: RoundOutcome) -> RoundOutcome:
    stored = store.party_decisions(config.session, outcome.index)
    matrix = np.full((outcome.participants.size, config.repetitions), -1, dtype=np.int64)
    for j, party in enumerate(outcome.participants):
        if int(party) in stored:
            matrix[j] = stored[int(party)]
    return dataclasses.replace(outcome, party_decisions=matrix)
