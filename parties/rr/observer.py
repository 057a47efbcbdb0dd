"""The central observer: hears every party, validates, records the transcript, decides each round.

Validation, in order (the first failure is the reject reason; the message is logged and counted,
never recorded as data):

    topic          not a party topic of this session, or the message's party differs from its topic
    schema         not a valid :class:`mpdp.broker.messages.PartyMessage` (JSON, fields, packing)
    session        another session's message
    unknown-party  a party id outside the roster
    signature      the Ed25519 signature does not verify with the roster's key for that party
    round          a round that is not open (never announced, or announced later)
    late           a round already closed
    duplicate      a second message from the same party for the open round
    repetitions    not the announced number of repetitions
    symbol-range   a symbol outside the party's mechanism (e.g. 2 or 3 from a pure-epsilon party)

A round closes when every roster party has sent symbols or an abstention, or after ``round_timeout``
seconds (the missing are recorded ``absent``). A party out of privacy budget abstains with reason
``budget-exhausted``: like every abstention it is left out of the decision, and the outcome lists it in
``exhausted`` as well as ``abstained``. Then the observer decides: with the participants'
mechanisms, ``rule = rule_factory(mechanisms, function, measure)`` (a
:data:`mpdp.protocols.rules.RuleFactory`) and ``rule.decide(symbols)`` with
symbols uint8 (repetitions, n) in party-id order (Kairouz, Oh, Viswanath 2015 / paper 002 eq. 2), and
writes the round to the store in one transaction.

Party decisions (``party_decisions=True``): after a round closes the observer publishes its recorded
transcript (:class:`mpdp.broker.decision_messages.TranscriptMessage`, signed with the coordinator key) and
accepts from each participant one signed :class:`mpdp.broker.decision_messages.DecisionMessage` for that
round, validated like the symbols (topic, schema, session, unknown-party, signature, then ``round``: no
transcript of that round was published, ``not-participant``, ``duplicate``, ``repetitions``,
``decision-range``); they are written to the store at each round close and by
:meth:`Observer.collect_party_decisions`.

Randomized (worst-case) rules draw with :func:`mpdp.parties.session.seeds.decision_generator` of
``decision_seed`` in simulation, from the OS CSPRNG with ``secure``.

The observer's MQTT session is persistent (clean_session False / clean_start False): if the
connection drops it reconnects with the same client id and the broker delivers what was queued.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import ClassVar, TypeVar

import aiomqtt
import numpy as np
from pydantic import ValidationError

from mpdp.broker.decision_messages import DecisionMessage, TranscriptMessage
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, Answer, PartyMessage, WorkerStatus
from mpdp.broker.signing import load_private_key, load_public_key, verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.rr.decisions import apply_rule
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import RecordedMessage, RoundRecord, TranscriptStore
from mpdp.parties.session.seeds import decision_generator
from mpdp.protocols.errors import ProtocolViolation, TransportError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.rules import RuleFactory

__all__ = ["Observer", "open_observer", "serve_observer"]

log = logging.getLogger("mpdp.observer")
_RECONNECTS = 5
SignedT = TypeVar("SignedT", Answer, DecisionMessage)


class Observer:
    """The central observer of one session. Create with :func:`open_observer`.

    Args:
        endpoint, topics: the broker and the session's topics.
        roster: the parties' mechanisms and public keys.
        store: the transcript store (the session must be opened in it).
        coordinator_key: raw Ed25519 private key that signs announcements.
        function, measure: f and the accuracy measure w, given to ``rule_factory``.
        repetitions: the number of repetitions every party sends per round.
        round_timeout: seconds a round stays open at most.
        rule_factory: builds the decision rule from the participants' mechanisms.
        party_decisions: publish each closed round's transcript and collect the parties' decisions.
        decision_seed: seed sequence of a randomized rule's draws (simulation); None = OS entropy.
        secure: deployment mode: a randomized rule draws from the OS CSPRNG.
    """

    #: The wire message the parties send (a subclass speaking another protocol sets its own).
    message_class: ClassVar[type[PartyMessage]] = PartyMessage

    def __init__(
        self,
        endpoint: BrokerEndpoint,
        topics: Topics,
        roster: Roster,
        store: TranscriptStore,
        coordinator_key: bytes,
        *,
        function: BooleanFunction,
        measure: np.ndarray,
        repetitions: int,
        round_timeout: float,
        rule_factory: RuleFactory,
        party_decisions: bool = False,
        decision_seed: np.random.SeedSequence | None = None,
        secure: bool = False,
    ) -> None:
        self._endpoint = endpoint
        self.topics = topics
        self.roster = roster
        self._store = store
        self._coordinator = load_private_key(coordinator_key)
        self._function = function
        self._measure = measure
        self.repetitions = repetitions
        self.round_timeout = round_timeout
        self._rule_factory = rule_factory
        self.party_decisions = party_decisions
        self._decision_seed = decision_seed
        self._secure = secure
        self._published: dict[int, tuple[frozenset[int], int]] = {}  # round -> (participants, |Y|)
        self._party_pending: dict[int, dict[int, tuple[np.ndarray, str]]] = collections.defaultdict(dict)
        self._party_seen: dict[int, set[int]] = collections.defaultdict(set)
        self._party_complete = asyncio.Event()
        self.decisions_received = 0
        self._keys = [load_public_key(key) for key in roster.public_keys]
        self._client: aiomqtt.Client | None = None
        self._connected = asyncio.Event()
        self._open: int | None = None
        self._announced = -1
        self._received: dict[int, tuple[PartyMessage, np.ndarray, str]] = {}
        self._complete = asyncio.Event()
        self._pending_rejects: dict[int, dict[str, tuple[int, str]]] = collections.defaultdict(dict)
        self._round_rejects = 0
        self.messages_received = 0
        self.messages_rejected = 0
        self.ready_workers: dict[int, WorkerStatus] = {}
        self.failed_workers: dict[int, WorkerStatus] = {}
        self.status_changed = asyncio.Event()

    @property
    def client_id(self) -> str:
        """The observer's MQTT client id (stable, for its persistent session)."""
        return f"mpdp-{self.topics.session}-observer"

    # -- connection ---------------------------------------------------------------------------

    async def _consume(self) -> None:
        """Receive until cancelled; reconnect (same persistent session) when the connection drops."""
        failures = 0
        while True:
            try:
                async with self._endpoint.client(self.client_id, persistent=True) as client:
                    async with asyncio.timeout(2 * self._endpoint.timeout):
                        await client.subscribe(self.topics.all_parties, qos=1)
                        await client.subscribe(self.topics.status, qos=1)
                        if self.party_decisions:
                            await client.subscribe(self.topics.all_decisions, qos=1)
                    self._client, failures = client, 0
                    self._connected.set()
                    async for message in client.messages:
                        self._handle(message.topic.value, message.payload)
            except (aiomqtt.MqttError, TimeoutError) as exc:
                self._connected.clear()
                self._client = None
                failures += 1
                if failures > _RECONNECTS:
                    raise TransportError(
                        f"observer lost the broker at {self._endpoint.url} and could not reconnect: {exc}"
                    ) from exc
                log.warning("observer: connection lost (%s); reconnecting", exc)
                await asyncio.sleep(0.2 * failures)

    async def _publish(self, topic: str, payload: str) -> None:
        async with asyncio.timeout(4 * self._endpoint.timeout):
            while True:
                await self._connected.wait()
                assert self._client is not None
                try:
                    await self._client.publish(topic, payload, qos=1)
                    return
                except aiomqtt.MqttError as exc:
                    log.warning("observer: publish failed (%s); retrying after reconnect", exc)
                    await asyncio.sleep(0.1)

    # -- validation -----------------------------------------------------------------------------

    def _reject(self, reason: str, detail: str) -> None:
        bucket = self._pending_rejects[self._announced]
        count, _ = bucket.get(reason, (0, ""))
        bucket[reason] = (count + 1, detail[:200])
        self.messages_rejected += 1
        if self._open is not None:
            self._round_rejects += 1
        log.debug("observer: rejected a message (%s): %s", reason, detail)

    def _handle(self, topic: str, payload: bytes | bytearray | str | int | float | None) -> None:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes | bytearray) else str(payload)
        if topic == self.topics.status:
            self._handle_status(text)
            return
        if self.party_decisions and self.topics.decision_party_of(topic) is not None:
            self._handle_decision(topic, text)
            return
        try:
            message, symbols = self._validate(topic, text)
        except ProtocolViolation as exc:
            self._reject(exc.reason, exc.detail)
            return
        self._received[message.party] = (message, symbols, text)
        self.messages_received += 1
        if len(self._received) == self.roster.k:
            self._complete.set()

    def _signed(self, message_class: type[SignedT], topic: str, text: str, topic_party: int | None,
                what: str) -> tuple[SignedT, str]:
        """Parse a party's signed message and check schema, session, roster, topic and signature.

        Returns the message and a ``where`` text for later rejections.
        Raises:
            ProtocolViolation: with the reason of the first check that fails.
        """
        try:
            message = message_class.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise ProtocolViolation("schema", f"{topic}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None
        where = f"{topic} {what} {message.round} party {message.party}"
        if message.session != self.topics.session:
            raise ProtocolViolation("session", f"{where}: session {message.session!r}")
        if not 0 <= message.party < self.roster.k:
            raise ProtocolViolation("unknown-party", where)
        if message.party != topic_party:
            raise ProtocolViolation("topic", f"{where}: sent on party {topic_party}'s topic")
        if not verify_message(message, self._keys[message.party]):
            raise ProtocolViolation("signature", where)
        return message, where

    def _validate(self, topic: str, text: str) -> tuple[PartyMessage, np.ndarray]:
        topic_party = self.topics.party_of(topic)
        if topic_party is None:
            raise ProtocolViolation("topic", topic)
        message, where = self._signed(self.message_class, topic, text, topic_party, "round")
        if message.round != self._open:
            raise ProtocolViolation("late" if message.round <= self._announced else "round", where)
        if message.party in self._received:
            raise ProtocolViolation("duplicate", where)
        if message.repetitions != self.repetitions:
            raise ProtocolViolation("repetitions", f"{where}: {message.repetitions} != {self.repetitions}")
        return message, self._payload(message, where)

    def _payload(self, message: PartyMessage, where: str) -> np.ndarray:
        """A valid message's content, checked against the roster: its symbols, uint8 (repetitions,).

        A subclass speaking another protocol (``message_class``) opens its own payload here."""
        symbols = message.symbol_array()
        if symbols.size and int(symbols.max()) >= self.roster.mechanisms[message.party].num_symbols:
            raise ProtocolViolation("symbol-range", f"{where}: symbol {int(symbols.max())}")
        return symbols

    def _handle_decision(self, topic: str, text: str) -> None:
        try:
            message, decisions = self._validate_decision(topic, text)
        except ProtocolViolation as exc:
            self._reject(exc.reason, exc.detail)
            return
        self._party_seen[message.round].add(message.party)
        self._party_pending[message.round][message.party] = (decisions, text)
        self.decisions_received += 1
        if self._decisions_complete():
            self._party_complete.set()

    def _decisions_complete(self) -> bool:
        return all(len(self._party_seen[r]) == len(ids) for r, (ids, _) in self._published.items())

    def _validate_decision(self, topic: str, text: str) -> tuple[DecisionMessage, np.ndarray]:
        topic_party = self.topics.decision_party_of(topic)
        message, where = self._signed(DecisionMessage, topic, text, topic_party, "decisions of round")
        published = self._published.get(message.round)
        if published is None:
            raise ProtocolViolation("round", f"{where}: no transcript of that round was published")
        participants, outputs = published
        if message.party not in participants:
            raise ProtocolViolation("not-participant", where)
        if message.party in self._party_seen[message.round]:
            raise ProtocolViolation("duplicate", where)
        if message.repetitions != self.repetitions:
            raise ProtocolViolation("repetitions", f"{where}: {message.repetitions} != {self.repetitions}")
        decisions = message.decision_array()
        if decisions.size and int(decisions.max()) >= outputs:
            raise ProtocolViolation("decision-range", f"{where}: decision {int(decisions.max())} >= {outputs}")
        return message, decisions

    def _flush_party_decisions(self) -> None:
        pending, self._party_pending = self._party_pending, collections.defaultdict(dict)
        for index, decisions in pending.items():
            if decisions:
                self._store.record_party_decisions(self.topics.session, index, decisions)

    async def collect_party_decisions(self, timeout: float) -> bool:
        """Wait until every participant of every published round sent its decisions, or ``timeout``
        seconds; write them to the store. Returns True if all arrived."""
        if not self._decisions_complete():
            self._party_complete.clear()
            try:
                async with asyncio.timeout(timeout):
                    while not self._decisions_complete():
                        self._party_complete.clear()
                        await self._party_complete.wait()
            except TimeoutError:
                missing = {r: len(ids) - len(self._party_seen[r]) for r, (ids, _) in self._published.items()
                           if len(self._party_seen[r]) < len(ids)}
                log.warning("observer: party decisions missing after %g s (round: count) %s", timeout, missing)
        self._flush_party_decisions()
        return self._decisions_complete()

    def _handle_status(self, text: str) -> None:
        try:
            status = WorkerStatus.model_validate_json(text)
        except ValidationError:
            self._reject("schema", f"{self.topics.status}: not a worker status")
            return
        if status.session != self.topics.session:
            self._reject("session", f"{self.topics.status}: session {status.session!r}")
            return
        target = self.ready_workers if status.state == "ready" else self.failed_workers
        target[status.worker] = status
        self.status_changed.set()

    # -- rounds ---------------------------------------------------------------------------------

    async def announce_end(self, rounds: int) -> None:
        """Tell the parties the session is over (they disconnect and their workers exit)."""
        await self._publish(self.topics.rounds, self._end_announcement(rounds))

    def _end_announcement(self, rounds: int) -> str:
        """The signed JSON that ends the session (a subclass may speak another protocol)."""
        return Announcement.signed(self._coordinator, session=self.topics.session, kind="end",
                                   round=rounds, repetitions=self.repetitions).model_dump_json()

    def _round_announcement(self, index: int, name: str) -> str:
        """The signed JSON that opens round ``index`` (a subclass may speak another protocol)."""
        return Announcement.signed(self._coordinator, session=self.topics.session, kind="round",
                                   round=index, name=name, repetitions=self.repetitions).model_dump_json()

    async def run_round(self, index: int, name: str) -> RoundOutcome:
        """Announce round ``index``, collect until complete or ``round_timeout``, decide, record.

        Returns:
            The round's outcome (also written to the store in one transaction).

        Raises:
            TransportError: the announcement could not be published.
        """
        self._received = {}
        self._complete.clear()
        self._round_rejects = 0
        self._open = self._announced = index
        await self._publish(self.topics.rounds, self._round_announcement(index, name))
        try:
            async with asyncio.timeout(self.round_timeout):
                await self._complete.wait()
            status = "complete"
        except TimeoutError:
            status = "timeout"
        self._open = None
        outcome = self._close_round(index, name, status)
        if self.party_decisions:
            await self._publish_transcript(outcome)
        return outcome

    async def _publish_transcript(self, outcome: RoundOutcome) -> None:
        """Publish the closed round's recorded transcript for the parties' own decisions."""
        n = outcome.participants.size
        self._published[outcome.index] = (frozenset(int(p) for p in outcome.participants),
                                          self._function.output_size(n) if n else 1)
        message = TranscriptMessage.signed(self._coordinator, session=self.topics.session, round=outcome.index,
                                           participants=outcome.participants, symbols=outcome.symbols)
        await self._publish(self.topics.transcript, message.model_dump_json())

    def _decision_rng(self, index: int) -> np.random.Generator | None:
        if self._secure:
            return None
        if self._decision_seed is None:
            return np.random.default_rng()
        return decision_generator(self._decision_seed, index)

    def _close_round(self, index: int, name: str, status: str) -> RoundOutcome:
        entries: list[RecordedMessage] = []
        empty = np.zeros(0, dtype=np.uint8)
        for party in range(self.roster.k):
            got = self._received.get(party)
            if got is None:
                entries.append(RecordedMessage(party, "absent", None, empty, None))
            else:
                message, symbols, text = got
                entries.append(RecordedMessage(party, message.kind, message.reason, symbols, text))
        ids = {kind: np.array([e.party for e in entries if e.kind == kind], dtype=np.int64)
               for kind in ("symbols", "abstain", "absent")}
        participants = ids["symbols"]
        symbols = np.zeros((self.repetitions, participants.size), dtype=np.uint8)
        for j, party in enumerate(participants):
            symbols[:, j] = entries[party].symbols
        rule = self._rule_factory([self.roster.mechanisms[p] for p in participants], self._function, self._measure)
        decisions = apply_rule(rule, symbols, self._decision_rng(index))  # type: ignore[arg-type]
        outcome = RoundOutcome(
            name=name, participants=participants, symbols=symbols, decisions=decisions,
            messages_received=len(self._received), messages_rejected=self._round_rejects, index=index,
            abstained=ids["abstain"], absent=ids["absent"], status=status,  # type: ignore[arg-type]
            exhausted=np.array([e.party for e in entries if e.reason == ABSTAIN_BUDGET_EXHAUSTED], dtype=np.int64),
        )
        self._flush_party_decisions()
        rejects, self._pending_rejects = dict(self._pending_rejects), collections.defaultdict(dict)
        self._store.record_round(RoundRecord(self.topics.session, self.repetitions, outcome, tuple(entries), rejects))
        if status == "timeout":
            log.warning("observer: round %d (%s) timed out; absent: %s", index, name, format_ranges(ids["absent"].tolist()))
        return outcome

    def flush_rejects(self) -> None:
        """Write reject counts not yet in the store (those after the last round closed)."""
        if self._pending_rejects:
            self._store.record_rejects(self.topics.session, dict(self._pending_rejects))
            self._pending_rejects = collections.defaultdict(dict)


@contextlib.asynccontextmanager
async def open_observer(
    endpoint: BrokerEndpoint, topics: Topics, roster: Roster, store: TranscriptStore, coordinator_key: bytes,
    **options: object,
) -> AsyncIterator[Observer]:
    """Connect and subscribe the observer (returns once subscribed), keep receiving in a task,
    and on exit stop, flush reject counts and delete the persistent session from the broker.

    Args: as :class:`Observer`.

    Raises:
        TransportError: the first connection or subscription failed.
    """
    observer = Observer(endpoint, topics, roster, store, coordinator_key, **options)  # type: ignore[arg-type]
    async with serve_observer(observer):
        yield observer


@contextlib.asynccontextmanager
async def serve_observer(observer: Observer) -> AsyncIterator[None]:
    """Run an already built observer (or subclass) as :func:`open_observer` does: connected and
    subscribed on entry; on exit stopped, reject counts flushed, the persistent session deleted.

    Raises:
        TransportError: the first connection or subscription failed.
    """
    endpoint = observer._endpoint
    async with asyncio.TaskGroup() as tg:
        consumer = tg.create_task(observer._consume(), name="observer-consume")
        connected = tg.create_task(observer._connected.wait(), name="observer-connected")
        done, _ = await asyncio.wait(
            [connected, consumer], timeout=3 * endpoint.timeout, return_when=asyncio.FIRST_COMPLETED
        )
        if connected not in done:
            connected.cancel()
            consumer.cancel()
            raise TransportError(f"observer could not connect and subscribe at {endpoint.url}")
        try:
            yield
        finally:
            consumer.cancel()
            observer.flush_rejects()
    with contextlib.suppress(aiomqtt.MqttError, TimeoutError, OSError):
        async with asyncio.timeout(endpoint.timeout), endpoint.client(observer.client_id):
            pass  # a clean connection with our client id ends the persistent session
