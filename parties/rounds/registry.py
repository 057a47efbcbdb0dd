"""The runner's protocol plug-ins, found by name (issue 21): the session floor imports no plug-in itself.

Each protocol (randomized response, curator, mpc) supplies the runner a :class:`SessionProtocol`: a class in
its own room, taking no arguments, registered here by name and module path (:data:`PLUG_INS`, as an entry
point would name it). :func:`session_protocol` imports the plug-in on first use, so ``mpdp --help`` and a run
of one protocol load nothing of the others. A new protocol is one more entry.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from mpdp.protocols.errors import ParameterError

if TYPE_CHECKING:
    from mpdp.analysis.privacy.accounting import Spent
    from mpdp.broker.topics import Topics
    from mpdp.parties.rounds.config import RunConfig
    from mpdp.parties.rounds.engine import RoundProtocol
    from mpdp.parties.rounds.outcome import RoundOutcome
    from mpdp.parties.rounds.plan import PartyPlan, PartyStarter
    from mpdp.parties.rounds.roster import Roster
    from mpdp.parties.rounds.seeds import SeedTree
    from mpdp.parties.rounds.store import TranscriptStore

__all__ = ["PARTY_STARTERS", "PLUG_INS", "PROTOCOLS", "SessionProtocol", "party_starter", "session_protocol"]

#: Each protocol's runner plug-in, ``"module:class"`` (the class takes no arguments).
PLUG_INS: Mapping[str, str] = {
    "rr": "mpdp.parties.rr.session:RandomizedResponseSession",
    "curator": "mpdp.parties.curator.session:CuratorSession",
    "mpc": "mpdp.parties.mpc.session:MpcSession",
}
#: The party a worker or a deployed party host starts, by protocol, ``"module:function"`` (a
#: :class:`mpdp.parties.rounds.plan.PartyStarter`; the deployed mpc party also takes its pinned compute servers,
#: ``servers=``). A simulated run's plug-in names its own (:meth:`SessionProtocol.party_plan`).
PARTY_STARTERS: Mapping[str, str] = {
    "rr": "mpdp.parties.rr.party:start_party",
    "mpc": "mpdp.parties.mpc.party:start_pinned_mpc_party",
}
#: The protocols a run speaks, by name (:attr:`mpdp.parties.rounds.config.RunConfig.protocol`).
PROTOCOLS: tuple[str, ...] = tuple(PLUG_INS)


@runtime_checkable
class SessionProtocol(Protocol):
    """What a protocol supplies to the runner (besides its round-engine plug-in)."""

    def check(self, config: RunConfig) -> None:
        """Refuse what the protocol cannot run, before anything starts (ParameterError)."""
        ...

    def open_store(self, config: RunConfig) -> AbstractContextManager[tuple[TranscriptStore, frozenset[int]]]:
        """The protocol's store with the session opened, and the indices of rounds already recorded."""
        ...

    def round_protocol(self, config: RunConfig, topics: Topics, roster: Roster, store: TranscriptStore,
                       seeds: SeedTree | None) -> RoundProtocol[Any, Any]:
        """The round-engine plug-in (``seeds``: the run's seed tree, None in deployment mode)."""
        ...

    def party_plan(self, config: RunConfig, seeds: SeedTree | None,
                   earlier: Sequence[RoundOutcome]) -> PartyPlan:
        """The parties to start, given the rounds ``earlier`` runs recorded."""
        ...

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """Round ``index`` of ``session`` as recorded (what the protocol's round engine loads), read without
        starting anything (a complete run resumed: :func:`mpdp.parties.session.runner.recorded_outcome`)."""
        ...

    def finish(self, config: RunConfig, store: TranscriptStore,
               outcomes: Sequence[RoundOutcome]) -> tuple[tuple[RoundOutcome, ...], tuple[Spent, ...]]:
        """The run's rounds as returned, and what each party spent (empty if parties release nothing)."""
        ...

    def pipelined(self, config: RunConfig) -> bool:
        """Whether each round may be announced while the one before is decided and recorded
        (:func:`mpdp.parties.session.runner.drive_rounds`): no announcement, answer or publication of a round
        depends on the decision or publications of the round before."""
        ...


_loaded: dict[str, SessionProtocol] = {}


def session_protocol(name: str) -> SessionProtocol:
    """The runner plug-in of protocol ``name`` (one instance per process, imported on first use).

    Raises:
        ParameterError: a name not in :data:`PLUG_INS`.
        TypeError: the registered class is not a :class:`SessionProtocol` (a wrong entry).
    """
    if name not in PLUG_INS:
        raise ParameterError("protocol", name, "one of " + ", ".join(PLUG_INS))
    if name not in _loaded:
        module, _, attribute = PLUG_INS[name].partition(":")
        plug_in = getattr(importlib.import_module(module), attribute)()
        if not isinstance(plug_in, SessionProtocol):
            raise TypeError(f"{PLUG_INS[name]} is not a SessionProtocol")
        _loaded[name] = plug_in
    return _loaded[name]


def party_starter(name: str) -> PartyStarter:
    """The function that starts one party of protocol ``name`` in a worker (:data:`PARTY_STARTERS`, imported on
    first use; a module-level function, so a worker spec holding it pickles by name).

    Raises:
        ParameterError: a name not in :data:`PARTY_STARTERS`.
    """
    if name not in PARTY_STARTERS:
        raise ParameterError("protocol", name, "one of " + ", ".join(PARTY_STARTERS))
    module, _, attribute = PARTY_STARTERS[name].partition(":")
    starter: PartyStarter = getattr(importlib.import_module(module), attribute)
    return starter
