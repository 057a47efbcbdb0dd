"""What a protocol tells the runner about its parties' processes (:class:`PartyPlan`), and how a worker
starts one party of any protocol (:class:`PartyStarter`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from mpdp.analysis.accounting import PrivacyLedger
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import PartyLoop
from mpdp.parties.rounds.party_spec import PartySpec

if TYPE_CHECKING:
    from mpdp.parties.rr.decisions import PartyDecider

__all__ = ["PartyPlan", "PartyStarter", "RunningParty"]


class RunningParty(Protocol):
    """A started party: it serves the session until the end announcement (:meth:`run`, on its own
    connection), or a worker serves it with its others on one connection through its :attr:`loop`."""

    @property
    def loop(self) -> PartyLoop[Any]:
        """The party's round loop (:func:`mpdp.parties.session.multiplex.serve_multiplexed` drives it)."""
        ...

    async def run(self, on_ready: Callable[[], None] = ...) -> int:
        """Serve the session; the number of rounds answered."""
        ...


class PartyStarter(Protocol):
    """Builds one party of a protocol in a worker (a module-level function: picklable by name), e.g.
    :func:`mpdp.parties.rr.party.start_party`, :func:`mpdp.parties.curator.party.start_curator_party`.

    ``secure``: deployment mode (exact CSPRNG draws); ``decider``: the worker's shared machinery for the
    parties' own decisions of f (None: they decide nothing); ``record``: the host's durable answer record
    (None: answers kept in memory only)."""

    def __call__(self, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                 idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                 decider: PartyDecider | None, record: AnswerRecord | None = ...,
                 observer_grace: float = ...) -> RunningParty: ...


@dataclass(frozen=True, slots=True, eq=False)
class PartyPlan:
    """How the runner starts the parties of a protocol.

    Attributes:
        start: builds each party in its worker.
        seeds: each party's seed sequence (simulation); None in deployment mode or when unused.
        ledgers: each party's privacy ledger so far; None = fresh ledgers.
    """

    start: PartyStarter
    seeds: Sequence[np.random.SeedSequence] | None
    ledgers: Sequence[PrivacyLedger] | None = None
