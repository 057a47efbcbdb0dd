"""The round engine: announce, collect, close and record a round, written once for every protocol.

A protocol plugs in by composition (:class:`RoundProtocol`): it names its wire message, opens a valid
message's payload, and says what happens at close (randomized response: decide with the rule,
:class:`mpdp.parties.rr.observer.Observer`; curator: open the ballots and release,
:class:`mpdp.parties.curator.curator.Curator`). The engine does the rest:

1. **announce** round ``index``: the protocol's announcement, signed with the coordinator key;
2. **collect** the parties' answers on ``mpdp/{session}/party/+``. Validation, in order (the first failure
   is the reject reason; the message is logged and counted per round and reason, never recorded as data):

       topic          not a party topic of this session, or the message's party differs from its topic
       schema         not a valid message of the protocol (:meth:`RoundProtocol.decode`: layout, fields, packing)
       session        another session's message
       unknown-party  a party id outside the roster
       signature      the Ed25519 signature does not verify with the roster's key for that party
       round          a round that is not open (announced later; before this engine announced anything,
                      an answer is kept instead, see below)
       late           a round already closed
       double-release a second, different, validly signed answer of one party to a round (open, or
                      closed and recorded): kept in the store's ``double_releases`` table, logged at ERROR
                      naming the party; the round's outcome lists it (``double_released``), the privacy
                      accounting charges it and the run exits non-zero. The same message again is a party
                      re-sending its recorded answer: ignored in the open round, ``late`` after it
       repetitions    not the announced number of repetitions
       (the protocol's payload reasons, e.g. ``symbol-range``, ``decrypt``)

3. **close** when every roster party has answered (with its payload or an abstention), with ``skip_failed``
   (a deployment's hosts) every party but those of a worker that reported ``failed`` (they will not answer:
   recorded absent at once, not after a wait; until their worker reports ``ready`` again, restarted), or once no
   new answer came for ``round_timeout`` seconds (the missing are ``absent``): a round deadline by progress,
   so a round that is still receiving answers on a busy machine is not cut off, and a round whose
   remaining parties are gone closes ``round_timeout`` after the last answer (a round is open at most
   ``k x round_timeout``: each new answer is a different party's). The quiet time is counted only while
   the engine's connection is up (:class:`mpdp.parties.rounds.liveness.Stopwatch`): an outage of the
   observer's own connection is not the parties' silence. The protocol turns the
   :class:`ClosedRound` into a :class:`Closing`. A round that closes with no answer at all is
   ``failed``, one whose every answer is an abstention is ``no-answers`` (logged at WARNING with the
   parties' reasons): their decisions are recorded as -1 (:data:`mpdp.parties.rounds.outcome.NO_DECISION`),
   never decided from nothing, and nothing is published for them;
4. **store** the round, the protocol's rows and the pending reject counts in one transaction
   (:meth:`mpdp.parties.rounds.store.TranscriptStore.record_round`), then publish what the protocol
   publishes after a round (a transcript, a release).

Answers that arrive before this engine announced anything (a restarted observer's persistent session:
the broker delivers what the parties sent to the previous observer's announcement) are verified and
kept, at most :data:`EARLY_ROUNDS` rounds' worth, and count when their round opens: nothing the broker
delivers is thrown away.

A simulation worker serving its parties on one connection may send their answers in bundles on
``mpdp/{session}/bundle/{worker}`` (:mod:`mpdp.broker.bundle`; the engine subscribes with ``bundles=True``),
each signed with the worker's bundle key, which every party of the worker endorsed with its own key in the
worker's signed "ready" (:attr:`mpdp.broker.messages.WorkerStatus.bundle_key`). The engine checks that one
signature per bundle instead of each answer's (a bundle that does not parse is one ``schema``, one that does
not verify one ``signature``, one from a worker not ready one ``topic``); then each entry is handled as if it
came on its party's topic (round, duplicates, double releases, repetitions, payload), after a check that the
party is one of that worker's ready parties (``topic`` otherwise). An entry is its party's answer without the
party's own signature (:data:`mpdp.broker.wire.UNSIGNED_FORMAT`; a signed one is read the same way): the
store keeps each bundle that brought an answer it records and each verified part of a bundling worker's
"ready", so the transcript stays re-verifiable offline
(:func:`mpdp.parties.rounds.transcript_check.verify_transcript`).

Worker and host processes report on ``mpdp/{session}/status`` (:class:`mpdp.broker.messages.WorkerStatus`):
a report counts only when every party it lists signed it with its roster key (a host cannot speak for
parties whose keys it does not hold: ``signature``, naming the parties), of this session, newer than that
worker's last report, and unexpired unless stamped after the engine opened (:class:`mpdp.broker.control.FreshnessGuard`
with ``since_ns``: a report read late by a busy observer is not refused for its delay); else it is rejected
(``schema``, ``session``, ``unknown-party``, ``signature``, ``expired``, ``replay``) like an answer and
none of its parties is ready. The engine keeps :attr:`RoundEngine.ready_workers` and :attr:`RoundEngine.failed_workers`.
A worker of many parties reports "ready" in parts (:data:`mpdp.parties.session.worker.STATUS_PARTIES` parties
each, so no report outgrows a broker's packet limit): each part verified in full is joined to the worker's
report (:attr:`RoundEngine.ready_workers` lists every party of all its parts).
A "ready" of a worker already ready listing only parties it listed before changes nothing (not even the worker's last
sequence): its freshness and its first party's signature are checked, not every signature (a party host
repeats its "ready" each second until round 0: 5,000 signatures each time for a host of 5,000 parties, most
of the observer's CPU then).
A "ready" (a repeat too) that arrives while a round is open, more than :data:`REJOIN_GAP` seconds after that
worker's last one, is a host that (re)started after the round's announcement went out (a host's beacon repeats its
"ready" each second until it sees an announcement; the ones in flight when round 0 opens follow the last closely): at
the next heartbeat, if some of its parties have not answered, the open round is announced again (:meth:`RoundEngine.heartbeat`), so its parties answer it (or re-send their recorded answer: never a fresh
draw) instead of being recorded absent once the round times out.
Every rejection is counted and logged at WARNING, rate-limited per reason
(:class:`mpdp.parties.rounds.rejections.RejectLog`). Messages on
the protocol's further subscriptions (:attr:`RoundProtocol.filters`) go to :meth:`RoundProtocol.receive`.

Rounds are run one after the other (:meth:`RoundEngine.run_round` returns once the round is decided and
recorded): the next round is never announced before the last stopped collecting (backpressure).

Pipelined rounds (``run_round(..., following=(index + 1, name))``, for protocols whose announcements and answers do
not depend on the decision before: :meth:`mpdp.parties.rounds.registry.SessionProtocol.pipelined`): the next
round is announced as soon as a round stops collecting, and the round is decided and recorded while the parties
answer the next one, instead of the parties waiting for the observer's close and SQLite commit. What is decided
is on disk before ``run_round`` returns it (and before the caller reports it); the closing round's answers stay in
hand until it is recorded, so a second answer to it meanwhile is checked against its first (a double release,
counted with the open round's rejects); a party answers each round once whatever the order of announcements.

Liveness (:meth:`RoundEngine.heartbeat`): whenever the engine announced nothing for a second it publishes a
signed heartbeat on ``mpdp/{session}/heartbeat``, a topic of its own that each party process reads once
(:class:`mpdp.parties.rounds.liveness.ObserverClock`), so its cost does not grow with the parties.
Announcements and heartbeats are valid for minutes (:data:`mpdp.broker.control.DEFAULT_LIFETIME`): a
message delayed by a busy machine is not refused for its delay; a replay is refused by its sequence, and
a party answers each round once (a re-announced round gets its recorded answer again, never a fresh draw).

The engine's client is persistent (same client id ``mpdp-{session}-{role}``; the transport reconnects
and the broker delivers what was queued); :func:`open_engine` ends that session on exit. A broker that
restarts without persistence forgets every session and what was in flight: an announcement it
acknowledged but had not delivered, an answer to the engine. So once the engine's connection was
re-established, and until a round completes, the open round is announced again (:meth:`RoundEngine.heartbeat`;
a fresh signature and sequence), after one heartbeat interval, then at doubling intervals up to
:data:`REANNOUNCE_MAX` seconds: a party that missed it answers, a party that answered re-sends its recorded
answer (ignored when it arrived before); doubling keeps a round that never completes (a party gone) from
costing every party a message each second.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import dataclasses
import inspect
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from mpdp.broker.bundle import decode_bundle
from mpdp.broker.control import DEFAULT_LIFETIME, FreshnessGuard
from mpdp.broker.messages import FAILED_END, RoundSigned, WorkerStatus
from mpdp.broker.signing import (
    PrivateKey,
    PublicKey,
    Verifiable,
    load_private_key,
    load_public_key,
    verify_message,
)
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector, Transport
from mpdp.parties.rounds.liveness import Stopwatch
from mpdp.parties.rounds.outcome import (
    ABSTAIN_BUDGET_EXHAUSTED,
    NO_DECISION,
    UNDECIDED,
    RoundOutcome,
    RoundStatus,
    lost_answers,
)
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import (
    RejectCounts,
    RoundRecord,
    RoundRows,
    TranscriptStore,
)
from mpdp.protocols.errors import ProtocolViolation, TransportError

__all__ = [
    "ClosedRound",
    "Closing",
    "PartyAnswer",
    "PartySigned",
    "Received",
    "RoundEngine",
    "RoundProtocol",
    "SignedReader",
    "open_engine",
]

log = logging.getLogger("mpdp.rounds")
#: Seconds an announcement outlives the longest quiet time of its round: the hosts' clocks may disagree by this much.
CLOCK_MARGIN = 10.0
#: Seconds of handling a backlog after which the engine lets the event loop run (the client's keepalive, the
#: heartbeats): a queued delivery is taken without a pause, and a backlog of "ready" parts (5,000 signature
#: checks each) read by a starved observer can hold the loop past the broker's keepalive (likely why the
#: observer of a 10^6-party run lost its connection once).
YIELD_SECONDS = 0.05
#: Rounds ahead of the last announced one whose early answers are kept (module docstring).
EARLY_ROUNDS = 2
#: Seconds between the coordinator's heartbeats on the heartbeat topic.
HEARTBEAT_INTERVAL = 1.0
#: Seconds of silence after which a worker's "ready" during an open round is taken for a restarted host (module docstring).
REJOIN_GAP = 5.0
#: The longest interval (seconds) between two re-announcements of a round after a reconnect (module docstring).
REANNOUNCE_MAX = 30.0
#: Seconds a failing coordinator tries to publish its failed end (:meth:`RoundEngine.fail`).
FAIL_NOTICE_TIMEOUT = 5.0



class PartySigned(Verifiable, Protocol):
    """A message signed by one party about one round (an answer, a party's decisions), as decoded."""

    @property
    def session(self) -> str: ...

    @property
    def round(self) -> int: ...

    @property
    def party(self) -> int: ...


class PartyAnswer(PartySigned, Protocol):
    """A party's answer to a round: its payload, or an abstention (``reason`` set)."""

    @property
    def repetitions(self) -> int: ...

    @property
    def reason(self) -> str | None: ...


SignedT = TypeVar("SignedT", bound=PartySigned)
MessageT = TypeVar("MessageT", bound=PartyAnswer)
PayloadT = TypeVar("PayloadT")


@dataclass(frozen=True, slots=True, eq=False)
class Received(Generic[MessageT, PayloadT]):
    """One accepted answer: the message, its payload as the protocol opened it, the bytes as received."""

    message: MessageT
    payload: PayloadT
    wire: bytes


@dataclass(frozen=True, slots=True, eq=False)
class ClosedRound(Generic[MessageT, PayloadT]):
    """A round at its close, handed to :meth:`RoundProtocol.close`.

    Attributes:
        session, index, name, repetitions: which round, and the repetitions every answer carries.
        status: ``"complete"`` (every roster party answered), ``"timeout"``, ``"failed"`` (no answer) or
            ``"no-answers"`` (every party heard from abstained).
        k: the roster size.
        received: party id -> its accepted answer (payload or abstention).
        rejected: messages rejected while the round was open.
    """

    session: str
    index: int
    name: str
    repetitions: int
    status: RoundStatus
    k: int
    received: Mapping[int, Received[MessageT, PayloadT]]
    rejected: int

    def _ids(self, keep: Callable[[PartyAnswer], bool]) -> NDArray[np.int64]:
        return np.array([p for p in range(self.k) if p in self.received and keep(self.received[p].message)],
                        dtype=np.int64)

    @property
    def participants(self) -> NDArray[np.int64]:
        """int64 (n,): the parties that answered with a payload (no abstention), ascending."""
        return self._ids(lambda message: message.reason is None)

    @property
    def abstained(self) -> NDArray[np.int64]:
        """int64: the parties that abstained (said so on the wire), ascending."""
        return self._ids(lambda message: message.reason is not None)

    @property
    def absent(self) -> NDArray[np.int64]:
        """int64: the roster parties not heard from, ascending."""
        return np.array([p for p in range(self.k) if p not in self.received], dtype=np.int64)

    def outcome(self, decisions: NDArray[np.int64], symbols: NDArray[np.uint8] | None) -> RoundOutcome:
        """The round's :class:`RoundOutcome` with the protocol's ``decisions`` (int64 (repetitions,))
        and ``symbols`` (uint8 (repetitions, n), or None); ``exhausted`` = abstentions for
        ``budget-exhausted``."""
        return RoundOutcome(
            name=self.name, index=self.index, participants=self.participants, symbols=symbols,
            decisions=decisions, messages_received=len(self.received), messages_rejected=self.rejected,
            abstained=self.abstained, absent=self.absent, status=self.status,
            exhausted=self._ids(lambda message: message.reason == ABSTAIN_BUDGET_EXHAUSTED),
            reasons=self.reasons,
        )

    @property
    def undecided(self) -> bool:
        """True for a round with nothing to decide from (:data:`UNDECIDED`: no party answered, or every party
        heard from abstained): its protocol records it with :meth:`no_decisions`, runs no decision rule or
        release, and publishes nothing."""
        return self.status in UNDECIDED

    def no_decisions(self) -> NDArray[np.int64]:
        """int64 (repetitions,): :data:`NO_DECISION` for every repetition (an undecided round's decisions)."""
        return np.full(self.repetitions, NO_DECISION, dtype=np.int64)

    @property
    def reasons(self) -> dict[str, list[int]]:
        """Abstention reason -> the ids of the parties that abstained with it, ascending."""
        reasons: dict[str, list[int]] = {}
        for party in self.abstained.tolist():
            reasons.setdefault(str(self.received[party].message.reason), []).append(party)
        return reasons


@dataclass(frozen=True, slots=True, eq=False)
class Closing:
    """What a protocol makes of a closed round: the outcome, its own rows for the store (written with
    the round in one transaction) and ``(topic, JSON)`` messages to publish once it is recorded."""

    outcome: RoundOutcome
    rows: RoundRows
    publish: tuple[tuple[str, str], ...] = ()


class RoundProtocol(Protocol[MessageT, PayloadT]):
    """What a protocol supplies to the :class:`RoundEngine` (see the module docstring)."""

    @property
    def role(self) -> str:
        """The engine's role in client ids and logs (``observer``, ``curator``)."""
        ...

    def decode(self, payload: bytes) -> MessageT:
        """The parties' answer as it came off the wire, parsed and checked but not verified.

        Raises:
            ProtocolViolation: ``"schema"``, not a valid answer.
        """
        ...

    @property
    def filters(self) -> tuple[str, ...]:
        """Topic filters beyond the party and status topics (their messages go to :meth:`receive`)."""
        ...

    def announcement(self, signer: PrivateKey, session: str, index: int, name: str,
                     repetitions: int, lifetime: float) -> RoundSigned:
        """The signed announcement that opens round ``index``, valid for ``lifetime`` seconds."""
        ...

    def signal(self, signer: PrivateKey, session: str, kind: Literal["end", "heartbeat"], index: int,
               repetitions: int, name: str = "") -> RoundSigned:
        """The signed announcement that ends the session after ``index`` rounds (``end``; ``name``: why the
        coordinator failed, "" when the session is complete), or says the coordinator is alive while round
        ``index`` is open or next (``heartbeat``)."""
        ...

    def payload(self, message: MessageT, where: str) -> PayloadT:
        """The content of a message that passed the engine's checks (an abstention included).

        Raises:
            ProtocolViolation: the payload is invalid (its reason is counted; ``where`` names the message).
        """
        ...

    def close(self, closed: ClosedRound[MessageT, PayloadT],
              signer: PrivateKey) -> Closing | Awaitable[Closing]:
        """Decide or release: the round's outcome, rows and publications (a coroutine when closing waits for
        others, e.g. the mpc servers, while the engine goes on receiving)."""
        ...

    def receive(self, topic: str, text: str) -> None:
        """A message on one of :attr:`filters` (or any other non-party topic).

        Raises:
            ProtocolViolation: reject it (``topic`` for a topic the protocol does not read).
        """
        ...

    def ready(self, status: WorkerStatus) -> None:
        """A new part of a worker's (host's) "ready", every listed party's signature verified: e.g. the mpc
        parties' session sealing keys (:attr:`mpdp.broker.messages.WorkerStatus.sealing_keys`)."""
        ...

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A round recorded by an earlier run, as this protocol's outcome."""
        ...

    async def conclude(self) -> None:
        """After the last round, before the end is announced (e.g. wait for late messages)."""
        ...


class SignedReader:
    """Parses a party's signed message and checks schema, session, roster, topic and signature.

    Args:
        session: the session id; roster: the parties' public keys.
    """

    def __init__(self, session: str, roster: Roster) -> None:
        self.session = session
        self.k = roster.k
        self._keys = [load_public_key(key) for key in roster.public_keys]  # once per roster, not per message

    def read(self, decode: Callable[[bytes], SignedT], topic: str, payload: bytes, topic_party: int | None,
             what: str) -> tuple[SignedT, str]:
        """The verified message in ``payload`` (one parse with ``decode``, e.g.
        :func:`mpdp.broker.messages.decode_answer` or ``DecisionMessage.from_wire``, and one signature
        check) and a ``where`` text (``"{topic} {what} {round} party {party}"``) for later rejections.

        Raises:
            ProtocolViolation: ``topic`` (no party topic), ``schema``, ``session``, ``unknown-party``,
                ``topic`` (another party's topic), ``signature``: the first check that fails.
        """
        message, where = self.parse(decode, topic, payload, topic_party, what)
        self.verify(message, message.party, where)
        return message, where

    def parse(self, decode: Callable[[bytes], SignedT], topic: str, payload: bytes, topic_party: int | None,
              what: str) -> tuple[SignedT, str]:
        """:meth:`read` without the signature check: for an entry of an answer bundle whose worker signature
        verified (:mod:`mpdp.broker.bundle`).

        Raises:
            ProtocolViolation: ``topic``, ``schema``, ``session``, ``unknown-party``, ``topic``, as :meth:`read`.
        """
        if topic_party is None:
            raise ProtocolViolation("topic", topic)
        try:
            message = decode(payload)
        except ProtocolViolation as exc:
            raise ProtocolViolation(exc.reason, f"{topic}: {exc.detail}") from None
        where = f"{topic} {what} {message.round} party {message.party}"
        if message.session != self.session:
            raise ProtocolViolation("session", f"{where}: session {message.session!r}")
        if not 0 <= message.party < self.k:
            raise ProtocolViolation("unknown-party", where)
        if message.party != topic_party:
            raise ProtocolViolation("topic", f"{where}: sent on party {topic_party}'s topic")
        return message, where

    def verify(self, message: Verifiable, party: int, where: str) -> None:
        """Check that ``message`` is signed by the roster key of ``party``.

        Raises:
            ProtocolViolation: ``unknown-party`` (outside the roster), ``signature``.
        """
        if not 0 <= party < self.k:
            raise ProtocolViolation("unknown-party", where)
        if not verify_message(message, self._keys[party]):
            raise ProtocolViolation("signature", where)


class RoundEngine(Generic[MessageT, PayloadT]):
    """Runs the rounds of one session for one protocol. Create with :func:`open_engine`.

    Args:
        transport: the connected, subscribed client.
        topics: the session's topics; roster: the parties' public keys.
        store: the transcript store (the session opened in it).
        coordinator_key: raw Ed25519 private key that signs announcements (and what the protocol signs).
        protocol: the protocol plug-in.
        repetitions: releases every party sends per round; round_timeout: seconds a round stays open at most.
        skip_failed: close a round once every party has answered but those of the workers that reported
            ``failed`` (a deployment's party hosts: the session goes on without them); False: wait for them
            too (a simulation run stops at a worker's failure instead: :mod:`mpdp.parties.session.runner`).
    """

    def __init__(self, transport: Transport, topics: Topics, roster: Roster, store: TranscriptStore,
                 coordinator_key: bytes, protocol: RoundProtocol[MessageT, PayloadT], *,
                 repetitions: int, round_timeout: float, skip_failed: bool = False) -> None:
        self._transport = transport
        self.topics = topics
        self.roster = roster
        self._store = store
        self._signer = load_private_key(coordinator_key)
        self.protocol = protocol
        self.repetitions = repetitions
        self.round_timeout = round_timeout
        self._skip_failed = skip_failed
        self._reader = SignedReader(topics.session, roster)
        self._open: int | None = None
        self._open_name = ""
        self._quiet = Stopwatch(lambda: transport.downtime)  # since the open round's last new answer, while connected
        self._steady = transport.reconnects  # the connection count when a round last completed
        self._reannounce = (transport.reconnects, 0.0, HEARTBEAT_INTERVAL)  # reconnects seen, when next, then gap
        self._rejoined: dict[int, set[int]] = {}  # open round -> parties of a restarted host's "ready" heard in it
        self._ready_heard: dict[int, float] = {}  # worker -> monotonic time of its last "ready"
        self._announced = -1
        self._received: dict[int, Received[MessageT, PayloadT]] = {}
        #: the round being decided and recorded, and its answers (``run_round``: the next round may be open then)
        self._closing: tuple[int, dict[int, Received[MessageT, PayloadT]]] | None = None
        self._complete = asyncio.Event()
        self._pending_rejects: dict[int, dict[str, tuple[int, str]]] = collections.defaultdict(dict)
        self._round_rejects = 0
        self.messages_received = 0
        self.messages_rejected = 0
        # a status stamped after the engine opened is judged by its sequence, not its age: the parts of a
        # worker's "ready" read late by a starved observer are not refused (10^6 parties: two parts "expired",
        # 10,000 parties' answers refused); CLOCK_MARGIN for a sender's clock ahead of ours
        self._fresh = FreshnessGuard(since_ns=time.time_ns() + int(CLOCK_MARGIN * 1e9))
        #: every rejected message, counted by reason (and logged, rate-limited)
        self.rejections = RejectLog(log, protocol.role)
        self._ended = False
        # round -> party -> its distinct (topic, payload)s, at most two (a second one is a double release)
        self._early: dict[int, dict[int, list[tuple[str, bytes]]]] = {}
        #: the open round's answer bundles that brought an accepted answer: bundle bytes -> worker (stored with it)
        self._proofs: dict[bytes, int] = {}
        self._last_announcement = time.monotonic()  # the engine's start counts as a sign of life
        self.ready_workers: dict[int, WorkerStatus] = {}
        # worker -> its ready status, parties, bundle key (mpdp.broker.bundle)
        self._members: dict[int, tuple[WorkerStatus, frozenset[int], PublicKey | None]] = {}
        self.failed_workers: dict[int, WorkerStatus] = {}
        self._gone: set[int] = set()  # the parties of the failed workers: a round does not wait for them
        self.status_changed = asyncio.Event()
        # round -> the parties of its kept second answers carrying symbols (the store's double_releases table,
        # read once here, then counted as they are kept: no query at every round's close)
        self._double_releases: dict[int, list[int]] = store.double_releases_by_round(topics.session)

    @property
    def open_round(self) -> int | None:
        """The index of the round being collected, or None between rounds."""
        return self._open

    @property
    def answered(self) -> frozenset[int]:
        """The parties heard in the open round (empty between rounds)."""
        return frozenset(self._received)

    async def receive_all(self) -> None:
        """Handle every delivery until cancelled, giving the event loop a turn at least every
        :data:`YIELD_SECONDS` of handling.

        Raises:
            TransportError: the connection is lost for good.
        """
        turn = time.monotonic()
        async for delivery in self._transport.deliveries():
            self.handle(delivery.topic, delivery.payload)
            if time.monotonic() - turn > YIELD_SECONDS:  # a backlog is read without a pause: let others run
                await asyncio.sleep(0)
                turn = time.monotonic()

    def handle(self, topic: str, payload: bytes) -> None:
        """Route one incoming message: status, a party's answer, or the protocol's (rejects are counted)."""
        try:
            party = self.topics.party_of(topic)
            if party is not None:
                self._answer(topic, payload, party)
            elif topic == self.topics.status:
                self._status(payload)
            elif (worker := self.topics.bundle_worker_of(topic)) is not None:
                self._bundle(topic, payload, worker)
            else:
                self.protocol.receive(topic, payload.decode("utf-8", "replace"))
        except ProtocolViolation as exc:
            self.reject(exc.reason, exc.detail)

    def _bundle(self, topic: str, payload: bytes, worker: int) -> None:
        """A simulation worker's bundle of its parties' answers (:mod:`mpdp.broker.bundle`), signed with the
        bundle key that every party of the worker endorsed in its signed "ready": one signature check for the
        bundle, then each entry is handled as if it had come on its party's topic (all checks but a signature:
        an entry is unsigned) once the party is found among the worker's ready parties (``topic`` otherwise, as
        an answer on another party's topic); each entry's rejection is counted on its own. A bundle that brought
        an accepted answer is kept for the round's record, one that brought a double release at once: the proof
        of its entries.

        Raises:
            ProtocolViolation: for the whole bundle: ``topic``, the worker has not reported ready; ``signature``,
                it named no bundle key, or the bundle's signature does not verify; ``schema``, not a bundle.
        """
        status = self.ready_workers.get(worker)
        if status is None:
            raise ProtocolViolation("topic", f"{topic}: worker {worker} has not reported ready")
        members = self._members.get(worker)
        if members is None or members[0] is not status:
            raw = status.bundle_public_key()
            members = self._members[worker] = (status, frozenset(status.parties),
                                               None if raw is None else load_public_key(raw))
        _, parties, key = members
        if key is None:
            raise ProtocolViolation("signature", f"{topic}: worker {worker}'s ready report names no bundle key")
        before = self.messages_received
        for party, message in decode_bundle(payload, key, session=self.topics.session, worker=worker):
            try:
                if party not in parties:
                    raise ProtocolViolation("topic", f"{topic}: party {party} is not one of worker {worker}'s "
                                                     "ready parties")
                answer, where = self._reader.parse(self.protocol.decode, topic, message, party, "round")
                self.accept(answer, where, self.topics.party(party), message, kept=(topic, payload))
            except ProtocolViolation as exc:
                if exc.reason == "double-release":
                    self._store.record_bundle(self.topics.session, worker, payload)
                self.reject(exc.reason, exc.detail)
        if self.messages_received != before:
            self._proofs[payload] = worker

    def reject(self, reason: str, detail: str) -> None:
        """Count a rejected message for the round in progress (stored with it) and in :attr:`rejections`."""
        bucket = self._pending_rejects[self._announced]
        count, _ = bucket.get(reason, (0, ""))
        bucket[reason] = (count + 1, detail[:200])
        self.messages_rejected += 1
        if self._open is not None:
            self._round_rejects += 1
        self.rejections.reject(reason, detail)

    def _answer(self, topic: str, payload: bytes, party: int) -> None:
        message, where = self._reader.read(self.protocol.decode, topic, payload, party, "round")
        self.accept(message, where, topic, payload)

    def accept(self, message: MessageT, where: str, topic: str, payload: bytes,
               kept: tuple[str, bytes] | None = None) -> None:
        """Take an answer that passed :meth:`SignedReader.read` (here, or in a validator process:
        :mod:`mpdp.parties.session.validators`): check its round, duplicates and repetitions, open its
        payload with the protocol, keep it for the open round (or early, before any announcement).

        Args:
            message: the parsed, verified answer; where: its ``where`` text; topic, payload: as received.
            kept: what to keep when the answer comes before any announcement (the (topic, bytes) of the answer
                bundle it came in, handled again when its round opens); None: ``(topic, payload)``.

        Raises:
            ProtocolViolation: ``round``, ``late``, ``double-release``, ``repetitions``, or the protocol's payload
                reason.
        """
        if message.round != self._open:
            if self._announced < 0 and self._keep_early(message.round, message.party, *(kept or (topic, payload))):
                return
            if message.round <= self._announced:
                self._check_double(message, where, payload, self._answered(message.round, message.party))
                raise ProtocolViolation("late", where)
            raise ProtocolViolation("round", where)
        if message.party in self._received:
            if self._received[message.party].wire == payload:
                return  # the party re-sent its recorded answer (a re-announced round): nothing new
            self._check_double(message, where, payload, self._received[message.party].wire)
        if message.repetitions != self.repetitions:
            raise ProtocolViolation("repetitions", f"{where}: {message.repetitions} != {self.repetitions}")
        self._received[message.party] = Received(message, self.protocol.payload(message, where), payload)
        self._quiet.restart()
        self.messages_received += 1
        self._check_complete()

    def _check_complete(self) -> None:
        """Mark the open round complete once every party has answered but those of failed workers
        (:attr:`failed_workers`): theirs will not come."""
        k, received, gone = self.roster.k, self._received, self._gone
        if len(received) == k or (gone and len(received) >= k - len(gone)
                                  and all(p in received for p in range(k) if p not in gone)):
            self._complete.set()

    def _answered(self, index: int, party: int) -> bytes | None:
        """The answer of ``party`` accepted for the closed round ``index`` (still in hand while it closes,
        else as recorded), or None."""
        if self._closing is not None and self._closing[0] == index and party in self._closing[1]:
            return self._closing[1][party].wire
        return self._store.recorded_payload(self.topics.session, index, party)

    def _check_double(self, message: MessageT, where: str, payload: bytes, first: bytes | None) -> None:
        """A second answer of the party to round ``message.round``: a double release when ``first`` (its
        accepted answer) is another signed message. It is kept in the store and named at ERROR (once).

        Raises:
            ProtocolViolation: ``double-release``.
        """
        if first is None or first == payload:
            return
        released = message.reason is None
        if self._store.record_double_release(self.topics.session, message.round, message.party, payload,
                                             released=released):
            if released:
                self._double_releases.setdefault(message.round, []).append(message.party)
            log.error("%s: DOUBLE RELEASE: party %d sent two different validly signed answers to round %d (%s): "
                      "two hosts serve it, or a host lost its answer record; both are kept in the transcript%s",
                      self.protocol.role, message.party, message.round, where,
                      " and the second is charged to its privacy" if released else " (the second abstains)")
        raise ProtocolViolation("double-release", where)

    def _keep_early(self, index: int, party: int, topic: str, payload: bytes) -> bool:
        """Keep a verified answer to round ``index`` (not announced yet) for when it opens; False when
        :data:`EARLY_ROUNDS` other rounds are kept already."""
        if index not in self._early and len(self._early) >= EARLY_ROUNDS:
            return False
        kept = self._early.setdefault(index, {}).setdefault(party, [])
        if len(kept) < 2 and all(payload != other for _, other in kept):
            kept.append((topic, payload))
        return True

    def _status(self, payload: bytes) -> None:
        try:
            status = WorkerStatus.model_validate_json(payload)
        except ValidationError:
            raise ProtocolViolation("schema", f"{self.topics.status}: not a worker status") from None
        where = f"{self.topics.status} {status.state} of worker {status.worker}"
        if status.session != self.topics.session:
            raise ProtocolViolation("session", f"{where}: session {status.session!r}")
        if status.parties[-1] >= self.roster.k:
            raise ProtocolViolation("unknown-party", f"{where}: parties beyond the roster")
        known = self.ready_workers.get(status.worker)
        repeat = status.state == "ready" and known is not None and _listed_in(status.parties, known.parties)
        unsigned = status.unsigned(self.roster.public_keys, first=1 if repeat else None)
        if unsigned:
            raise ProtocolViolation("signature", f"{where}: parties {format_ranges(unsigned)} did not sign it "
                                                 "with their own keys")
        further = status.state == "ready" and known is not None and not repeat  # a further part of its report
        if further and known is not None and status.bundle_key != known.bundle_key:
            raise ProtocolViolation("schema", f"{where}: bundle key {status.bundle_key!r}, its earlier parts "
                                              f"named {known.bundle_key!r}")
        self._fresh.check(status, status.worker, where, record=not repeat)
        if status.state == "ready" and (failed := self.failed_workers.pop(status.worker, None)) is not None:
            self._gone.difference_update(failed.parties)  # restarted after its failure: waited for again
            log.warning("%s: worker %d (parties %s) reported ready again after its failure", self.protocol.role,
                        status.worker, format_ranges(status.parties))
        if status.state == "ready":
            now, last = time.monotonic(), self._ready_heard.get(status.worker, -math.inf)
            self._ready_heard[status.worker] = now
            if self._open is not None and now - last > REJOIN_GAP:  # a host (re)started mid-round: heartbeat()
                self._rejoined.setdefault(self._open, set()).update(status.parties)
        if repeat:
            return  # changes nothing (not even the worker's last sequence or bundle key: one key alone cannot)
        if status.state == "ready" and status.bundle_key:  # its parties' endorsement of the key, for the transcript
            self._store.record_worker_report(self.topics.session, status.worker, payload.decode("utf-8"))
        if status.state == "ready":
            self.protocol.ready(status)
        if further and known is not None:
            status = _joined(known, status)
        target = self.ready_workers if status.state == "ready" else self.failed_workers
        target[status.worker] = status
        if status.state == "failed" and self._skip_failed:
            self._gone.update(status.parties)
            if self._open is not None:
                self._check_complete()
        self.status_changed.set()

    async def run_round(self, index: int, name: str, following: tuple[int, str] | None = None) -> RoundOutcome:
        """Announce round ``index`` (unless the previous call opened it as its ``following``), collect until
        complete or ``round_timeout`` seconds without a new answer (module docstring), close, record, publish.

        Args:
            following: (index, name) of the round to announce as soon as this one stops collecting, before it
                is decided and recorded (module docstring, "Pipelined rounds"); None: the next round waits.

        Returns:
            The round's outcome (also written to the store in one transaction).

        Raises:
            TransportError: the announcement or a publication failed.
        """
        if self._open != index:
            await self._open_round(index, name)
        status = await self._collect()
        answered = self._complete.is_set()  # every party answered but the failed workers'
        if answered:
            self._steady = self._transport.reconnects
        received, round_rejects = self._received, self._round_rejects
        self._open = None
        if status != "failed" and all(got.message.reason is not None for got in received.values()):
            status = "no-answers"  # every party heard from abstained: no release
        ending = ClosedRound(self.topics.session, index, name, self.repetitions, status, self.roster.k,
                             received, round_rejects)
        lost = lost_answers((worker.parties for worker in self.ready_workers.values()), received)
        rejects, self._pending_rejects = self._take_rejects(), collections.defaultdict(dict)
        proofs, self._proofs = [(worker, bundle) for bundle, worker in self._proofs.items()], {}
        self._closing = (index, received)  # a second answer to it is still checked against its first
        if following is not None:
            await self._open_round(*following)
        closed = self.protocol.close(ending, self._signer)
        closing = await closed if inspect.isawaitable(closed) else closed  # undecided: no decision, no publication
        closing = dataclasses.replace(closing, outcome=dataclasses.replace(
            closing.outcome, double_released=np.array(sorted(self._double_releases.get(index, ())), dtype=np.int64),
            lost=lost))
        self._store.record_round(RoundRecord(self.topics.session, closing.outcome, closing.rows, rejects, proofs))
        self._closing = None  # forget the answers (the curator's bits) once recorded
        if following is None:
            self._received = {}
        if status == "failed":
            log.error("%s: round %d (%s) FAILED: %s (nothing decided)", self.protocol.role, index, name,
                      "every party's worker reported failed" if answered
                      else f"no party answered for {self.round_timeout:g} s")
        elif status == "no-answers":
            log.warning("%s: round %d (%s) NOT DECIDED: no party released, every party heard from abstained (%s)%s",
                        self.protocol.role, index, name, "; ".join(
                            f"{reason}: {format_ranges(ids)}" for reason, ids in sorted(ending.reasons.items())),
                        f"; absent: {format_ranges(closing.outcome.absent.tolist())}" if closing.outcome.absent.size
                        else "")
        elif status == "timeout":
            log.warning("%s: round %d (%s) %s; absent: %s", self.protocol.role, index, name,
                        "closed without the failed workers' parties" if answered else "timed out", format_ranges(closing.outcome.absent.tolist()))
        if lost.size:
            log.error("%s: round %d (%s): answers of parties %s LOST: expected (their host answered the round for "
                      "others) but never received", self.protocol.role, index, name, format_ranges(lost.tolist()))
        for topic, text in closing.publish:
            await self._transport.publish(topic, text)
        return closing.outcome

    async def _open_round(self, index: int, name: str) -> None:
        """Open round ``index``: its answers kept from before counted, then its announcement published."""
        self._received = {}
        self._complete.clear()
        self._round_rejects = 0
        self._open = self._announced = index
        # kept from before (a bundle once, whatever the number of its parties kept)
        for topic, payload in dict.fromkeys(m for kept in self._early.pop(index, {}).values() for m in kept):
            self.handle(topic, payload)
        self._early = {i: kept for i, kept in self._early.items() if i > index}
        self._check_complete()  # every party but the failed workers' answered early, or none is left to answer
        self._open_name = name
        await self._announce(self._round_announcement(index))

    async def _collect(self) -> RoundStatus:
        """Wait until every party answered (``complete``), every party but the failed workers' (``timeout``:
        some absent; ``failed`` without any answer, every worker failed) or no new answer came for
        ``round_timeout`` seconds counted while connected (``timeout``, or ``failed`` without any answer)."""
        self._quiet.restart()
        while not self._complete.is_set():
            left = self.round_timeout - self._quiet.elapsed()
            if left <= 0:
                await asyncio.sleep(0)  # on a starved event loop, answers read but not yet handled come first
                if self._complete.is_set() or self.round_timeout - self._quiet.elapsed() > 0:
                    continue
                return "timeout" if self._received else "failed"
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(left):  # then again: an answer or an outage since moves the end
                    await self._complete.wait()
        return "complete" if len(self._received) == self.roster.k else "timeout" if self._received else "failed"

    def _take_rejects(self) -> RejectCounts:
        return dict(self._pending_rejects)

    async def finish(self, rounds: int) -> None:
        """The protocol's :meth:`RoundProtocol.conclude`, then the signed end of the session (the
        parties disconnect and their processes exit)."""
        await self.protocol.conclude()
        self._ended = True
        await self._announce(self.protocol.signal(self._signer, self.topics.session, "end", rounds,
                                                  self.repetitions))

    async def fail(self, error: BaseException) -> None:
        """Announce the end of the session as failed (a signed ``end`` whose ``name`` is ``FAILED: `` and the
        error's first cause, 200 characters at most), so the parties leave at once saying why instead of
        after their observer grace; best effort: gives up after :data:`FAIL_NOTICE_TIMEOUT` seconds or on a
        broker error (the caller re-raises ``error``)."""
        while isinstance(error, BaseExceptionGroup) and error.exceptions:
            error = error.exceptions[0]
        self._ended = True
        index = self._announced + 1 if self._open is None else self._open
        reason = f"{FAILED_END}{type(error).__name__}: {error}"[:200]
        with contextlib.suppress(TransportError, TimeoutError):
            async with asyncio.timeout(FAIL_NOTICE_TIMEOUT):
                await self._announce(self.protocol.signal(self._signer, self.topics.session, "end", max(index, 0),
                                                          self.repetitions, name=reason))

    async def heartbeat(self, interval: float) -> None:
        """Announce that the coordinator is alive whenever nothing was announced for ``interval`` seconds,
        until the end (run as a task; the party hosts leave when it falls silent for their grace period).

        After the engine's connection was re-established (the broker restarted, the network failed) and
        until a round completes, a round left open is announced again instead of a heartbeat, after
        ``interval`` and then at doubling intervals up to :data:`REANNOUNCE_MAX`: a broker that kept no
        session lost the announcements and answers in flight, and the parties that missed the round answer
        it now, those that answered re-send the same signed bytes (module docstring). So is the open round
        when a host's "ready" came during it and some of its parties have not answered (restarted mid-round).

        Raises:
            TransportError: the broker is gone for good.
        """
        while not self._ended:
            await asyncio.sleep(max(0.0, self._last_announcement + interval - time.monotonic()))
            if self._ended or time.monotonic() - self._last_announcement < interval:
                continue
            if self._open is not None and self._transport.reconnects != self._steady and self._reannounce_due(interval):
                await self._announce(self._round_announcement(self._open))  # messages may have been lost
                continue
            if self._open is not None and self._rejoining():
                await self._announce(self._round_announcement(self._open))  # a host that missed it is back
                continue
            index = self._announced + 1 if self._open is None else self._open
            beat = self.protocol.signal(self._signer, self.topics.session, "heartbeat", max(index, 0),
                                        self.repetitions)
            await self._announce(beat, self.topics.heartbeat)

    def _rejoining(self) -> bool:
        """Whether a "ready" heard while the open round was open lists a party that has not answered it (a host
        restarted after the announcement went out: module docstring); the readies heard so far are consumed."""
        rejoined = self._rejoined.pop(self._open, set()) if self._open is not None else set()
        self._rejoined.clear()
        return bool(rejoined - self._received.keys())

    def _reannounce_due(self, interval: float) -> bool:
        """Whether the open round is due to be announced again (the first time after each new reconnect,
        then after doubling intervals); if so, the next one is scheduled."""
        now, (seen, due, gap) = time.monotonic(), self._reannounce
        if seen != self._transport.reconnects:  # a new reconnect: announce now, then again after interval
            seen, due, gap = self._transport.reconnects, now, interval
        if now < due:
            return False
        self._reannounce = (seen, now + gap, min(2 * gap, REANNOUNCE_MAX))
        return True

    def _round_announcement(self, index: int) -> RoundSigned:
        """The signed announcement of the open round ``index``, valid for minutes (at least the round's longest
        quiet time, plus the clock margin): a delayed announcement is not refused for its delay."""
        return self.protocol.announcement(self._signer, self.topics.session, index, self._open_name, self.repetitions,
                                          max(DEFAULT_LIFETIME, self.round_timeout) + CLOCK_MARGIN)

    async def publish(self, topic: str, payload: str) -> None:
        """Publish on the engine's connection (what a protocol sends besides announcements and round
        publications, e.g. the deployed mpc servers' jobs).

        Raises:
            TransportError: the broker is gone for good.
        """
        await self._transport.publish(topic, payload)

    async def _announce(self, announcement: RoundSigned, topic: str | None = None) -> None:
        """Publish ``announcement`` on ``topic`` (default: the rounds topic); it counts as a sign of life."""
        self._last_announcement = time.monotonic()
        await self._transport.publish(topic or self.topics.rounds, announcement.model_dump_json())

    def flush_rejects(self) -> None:
        """Write reject counts not yet in the store (those after the last round closed)."""
        if self._pending_rejects:
            self._store.record_rejects(self.topics.session, self._take_rejects())
            self._pending_rejects = collections.defaultdict(dict)


def _listed_in(parties: tuple[int, ...], known: tuple[int, ...]) -> bool:
    """Whether every party of a report (ascending ids) is among a worker's ``known`` ready parties (ascending)."""
    if parties == known or parties[0] > known[-1]:  # the same report again, or the worker's next part
        return parties == known
    return set(parties) <= set(known)


def _joined(known: WorkerStatus, part: WorkerStatus) -> WorkerStatus:
    """A worker's ready report with a further part of it (each verified): the parties of both, ascending,
    each with its signature (a worker of more than :data:`mpdp.parties.session.worker.STATUS_PARTIES` parties
    reports in parts); the newer part's stamp. A record of what was verified: each signature is over its own
    part's digest, so the joined report does not verify as one message. Its sealing keys went to the protocol
    part by part (:meth:`RoundProtocol.ready`): the joined report keeps none."""
    if part.parties[0] > known.parties[-1]:  # the next part, in order: O(parties) per part
        return part.model_copy(update={"parties": known.parties + part.parties,
                                       "signatures": known.signatures + part.signatures, "sealing_keys": ()})
    pairs = dict(zip(known.parties, known.signatures, strict=True)) | dict(zip(part.parties, part.signatures,
                                                                               strict=True))
    ordered = sorted(pairs.items())
    return part.model_copy(update={"parties": tuple(p for p, _ in ordered), "signatures": tuple(s for _, s in ordered),
                                   "sealing_keys": ()})


@contextlib.asynccontextmanager
async def open_engine(
    connector: Connector, topics: Topics, roster: Roster, store: TranscriptStore, coordinator_key: bytes,
    protocol: RoundProtocol[MessageT, PayloadT], *, repetitions: int, round_timeout: float,
    party_topics: bool = True, announce_failure: bool = False, bundles: bool = False, skip_failed: bool = False,
) -> AsyncIterator[RoundEngine[MessageT, PayloadT]]:
    """Connect (persistent session) and subscribe the engine, receive in a task; on exit stop, flush the
    reject counts and end the persistent session on the broker.

    Args: as :class:`RoundEngine`; ``connector`` is where the engine's client connects; ``party_topics``:
        subscribe to the parties' topics (False when validator processes read them and hand the answers
        to :meth:`RoundEngine.accept`); ``announce_failure``: when the block raises an error (not a
        cancellation: Ctrl-C leaves the session to a resumed coordinator), announce the failed end
        (:meth:`RoundEngine.fail`) before it propagates (a deployment's hosts leave at once); ``bundles``:
        subscribe to the simulation workers' answer bundles too (:mod:`mpdp.broker.bundle`; with
        ``party_topics`` only); ``skip_failed``: as :class:`RoundEngine`.

    Raises:
        TransportError: the connection or subscription failed, or the connection was lost for good.
    """
    client_id = f"mpdp-{topics.session}-{protocol.role}"
    async with connector.connect(client_id, persistent=True) as transport:
        await transport.subscribe(*(topics.all_parties,) * party_topics, *(topics.all_bundles,) * (party_topics and bundles),
                                  topics.status, *protocol.filters)
        engine = RoundEngine(transport, topics, roster, store, coordinator_key, protocol,
                             repetitions=repetitions, round_timeout=round_timeout, skip_failed=skip_failed)
        async with asyncio.TaskGroup() as tg:
            receiving = tg.create_task(engine.receive_all(), name=f"{protocol.role}-receive")
            beating = tg.create_task(engine.heartbeat(HEARTBEAT_INTERVAL), name=f"{protocol.role}-heartbeat")
            try:
                yield engine
            except Exception as exc:
                if announce_failure:
                    await engine.fail(exc)
                raise
            finally:
                receiving.cancel()
                beating.cancel()
                engine.flush_rejects()
    with contextlib.suppress(TransportError):
        async with connector.connect(client_id):
            pass  # a clean connection with our client id ends the persistent session
