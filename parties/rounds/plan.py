"""What a protocol tells the runner about its parties' processes (:class:`PartyPlan`), how a worker starts one
party of any protocol (:class:`PartyStarter`), and what a party that decides f itself is handed (:class:`Decider`)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.decision_messages import TranscriptMessage
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import PartyLoop
from mpdp.parties.rounds.party_spec import PartySpec

__all__ = ["Decider", "DeciderSpec", "PartyPlan", "PartyStarter", "RunningParty"]


class Decider(Protocol):
    """A worker's shared machinery for its parties' own decisions of f from the published transcript
    (:class:`mpdp.parties.rr.decisions.PartyDecider`; the central protocols' parties decide nothing)."""

    def transcript(self, payload: bytes) -> tuple[TranscriptMessage, NDArray[np.uint8]] | None:
        """The verified transcript of a round and its symbols, uint8 (repetitions, n), once every part of it has
        arrived, else None (a part missing, or a payload refused)."""
        ...

    def participates(self, message: TranscriptMessage, party: int) -> bool:
        """Whether ``party`` is among the transcript's participants (without a scan of them per party)."""
        ...

    async def decide(self, message: TranscriptMessage, symbols: NDArray[np.uint8], party: int, bit: int,
                     rng: np.random.Generator | None) -> NDArray[np.int64]:
        """Party ``party``'s decision for each repetition of the transcript: int64 (repetitions,); ``rng`` None:
        the OS CSPRNG (deployment mode). What takes long (building the rules) runs off the event loop."""
        ...


class DeciderSpec(Protocol):
    """The public parameters of the parties' own decisions of f, picklable for a worker process, which builds its
    one :class:`Decider` from them (:class:`mpdp.parties.rr.decisions.PartyDecisionSpec`)."""

    def decider(self, session: str, coordinator_key: bytes) -> Decider:
        """The worker's deciding machinery for ``session`` (transcripts signed with ``coordinator_key``)."""
        ...


class RunningParty(Protocol):
    """A started party: it serves the session until the end announcement (:meth:`run`, on its own
    connection), or a worker serves it with its others on one connection through its :attr:`loop`."""

    @property
    def loop(self) -> PartyLoop[Any]:
        """The party's round loop (:func:`mpdp.parties.session.multiplex.serve_multiplexed` drives it)."""
        ...

    @property
    def sealing_key(self) -> bytes:
        """The raw 32-byte X25519 public key of the party's session sealing key, which its worker's signed
        "ready" lists (:attr:`mpdp.broker.messages.WorkerStatus.sealing_keys`: the mpc protocol); b"" for
        none."""
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
                 decider: Decider | None, record: AnswerRecord | None = ...,
                 observer_grace: float = ...) -> RunningParty: ...


@dataclass(frozen=True, slots=True, eq=False)
class PartyPlan:
    """How the runner starts the parties of a protocol.

    Attributes:
        start: builds each party in its worker.
        seeds: each party's seed sequence (simulation); None in deployment mode or when unused.
        ledgers: each party's privacy ledger so far; None = fresh ledgers.
        decisions: what the parties need to decide f themselves; None: they decide nothing.
    """

    start: PartyStarter
    seeds: Sequence[np.random.SeedSequence] | None
    ledgers: Sequence[PrivacyLedger] | None = None
    decisions: DeciderSpec | None = None
