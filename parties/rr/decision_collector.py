"""The observer's side of party decisions (``party_decisions=True``): after a round closes the observer
publishes its recorded transcript (:class:`mpdp.broker.decision_messages.TranscriptMessage`, signed with
the coordinator key) and accepts from each participant one signed
:class:`mpdp.broker.decision_messages.DecisionMessage` for that round, validated like the symbols (topic,
schema, session, unknown-party, signature, then ``round``: no transcript of that round was published,
``not-participant``, ``duplicate``, ``repetitions``, ``decision-range``).

Accepted decisions wait in :class:`DecisionCollector` until the next round's transaction takes them
(:meth:`DecisionCollector.take`) or :meth:`DecisionCollector.collect` writes them after the last round.
"""

from __future__ import annotations

import asyncio
import collections
import logging

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.decision_messages import TRANSCRIPT_PART_SYMBOLS, DecisionMessage, TranscriptMessage
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.engine import SignedReader
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.store import PartyDecisions, TranscriptStore
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["DecisionCollector"]

log = logging.getLogger("mpdp.observer")


class DecisionCollector:
    """Publishes transcripts and collects the participants' own decisions.

    Args:
        topics: the session's topics; reader: checks the parties' signatures.
        store: where :meth:`collect` writes what arrived after the last round.
    """

    def __init__(self, topics: Topics, reader: SignedReader, store: TranscriptStore) -> None:
        self._topics = topics
        self._reader = reader
        self._store = store
        self._published: dict[int, tuple[frozenset[int], int, int]] = {}  # round -> (participants, |Y|, reps)
        self._pending: dict[int, dict[int, tuple[NDArray[np.int64], str]]] = collections.defaultdict(dict)
        self._seen: dict[int, set[int]] = collections.defaultdict(set)
        self._complete = asyncio.Event()
        self.received = 0

    def transcript(self, outcome: RoundOutcome, outputs: int, repetitions: int,
                   signer: PrivateKey) -> tuple[tuple[str, str], ...]:
        """The ``(topic, JSON)`` of each signed part of the closed round's transcript
        (:meth:`TranscriptMessage.signed_parts`: each under the brokers' default payload limits); decisions
        on it are accepted from now on, in ``0..outputs-1``, ``repetitions`` each."""
        assert outcome.symbols is not None  # randomized response records symbols
        self._published[outcome.index] = (frozenset(int(p) for p in outcome.participants), outputs, repetitions)
        parts = TranscriptMessage.signed_parts(signer, session=self._topics.session, round=outcome.index,
                                               participants=outcome.participants, symbols=outcome.symbols,
                                               max_symbols=TRANSCRIPT_PART_SYMBOLS)
        return tuple((self._topics.transcript, part.model_dump_json()) for part in parts)

    def receive(self, topic: str, text: str) -> None:
        """Accept one decision message.

        Raises:
            ProtocolViolation: the reason of the first check that fails (module docstring).
        """
        message, where = self._reader.read(DecisionMessage.from_wire, topic, text.encode("utf-8"),
                                           self._topics.decision_party_of(topic), "decisions of round")
        published = self._published.get(message.round)
        if published is None:
            raise ProtocolViolation("round", f"{where}: no transcript of that round was published")
        participants, outputs, repetitions = published
        if message.party not in participants:
            raise ProtocolViolation("not-participant", where)
        if message.party in self._seen[message.round]:
            raise ProtocolViolation("duplicate", where)
        if message.repetitions != repetitions:
            raise ProtocolViolation("repetitions", f"{where}: {message.repetitions} != {repetitions}")
        decisions = message.decision_array()
        if decisions.size and int(decisions.max()) >= outputs:
            raise ProtocolViolation("decision-range", f"{where}: decision {int(decisions.max())} >= {outputs}")
        self._seen[message.round].add(message.party)
        self._pending[message.round][message.party] = (decisions, text)
        self.received += 1
        if self.complete():
            self._complete.set()

    def complete(self) -> bool:
        """True when every participant of every published round has sent its decisions."""
        return all(len(self._seen[r]) == len(ids) for r, (ids, _, _) in self._published.items())

    def take(self) -> dict[int, PartyDecisions]:
        """The accepted decisions not yet written (round -> party -> (decisions, JSON)); forgets them."""
        pending, self._pending = self._pending, collections.defaultdict(dict)
        return {index: decisions for index, decisions in pending.items() if decisions}

    async def collect(self, timeout: float) -> bool:
        """Wait until :meth:`complete`, or ``timeout`` seconds; write what arrived to the store.
        Returns True if all arrived."""
        if not self.complete():
            try:
                async with asyncio.timeout(timeout):
                    while not self.complete():
                        self._complete.clear()
                        await self._complete.wait()
            except TimeoutError:
                missing = {r: len(ids) - len(self._seen[r]) for r, (ids, _, _) in self._published.items()
                           if len(self._seen[r]) < len(ids)}
                log.warning("observer: party decisions missing after %g s (round: count) %s", timeout, missing)
        for index, decisions in self.take().items():
            self._store.record_party_decisions(self._topics.session, index, decisions)
        return self.complete()
