"""Deciding with a rule in a live run: the observer's decisions and every party's own (002 eqs. (2)-(6)).

* :func:`apply_rule` — decide on observed transcripts with a simulation generator, or (``rng=None``,
  deployment mode) with exact draws from the OS CSPRNG (:func:`mpdp.protocols.randomization.secure.secure_choice`).
* :class:`PartyDecider` — shared by the parties of one worker process: verifies each part of a published
  transcript once per payload (signature by the coordinator key, session, expiry, sequence), assembles the
  parts of a round, and builds the rule of each group of parties with equal mechanisms once
  (:class:`mpdp.protocols.rules.party_rules.PartyRuleSet`, through one
  :class:`mpdp.protocols.rules.rule_factory.RuleCache`); each transcript's decisions are computed once per group
  and symbol, every party's a lookup (:class:`mpdp.protocols.rules.party_rules.TranscriptDecisions`). The builds
  run in a thread, off the worker's event loop: a band of 10^5 parties takes ~40 s, and a loop held that long
  let the worker's MQTT keepalive lapse (the broker dropped its connection for 34.6 s).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from numpy.typing import NDArray
from pydantic import ValidationError

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.decision_messages import TranscriptMessage
from mpdp.broker.signing import load_public_key, verify_message
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.functions import BooleanFunction, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.secure import secure_choice
from mpdp.protocols.rules.party_rules import PartyRuleSet, TranscriptDecisions
from mpdp.protocols.rules.rule_factory import RuleCache
from mpdp.protocols.rules.rules import RULE_KINDS, DecisionRule

__all__ = ["PartyDecider", "PartyDecisionSpec", "apply_rule"]

log = logging.getLogger("mpdp.decisions")
_VERIFIED = 4  # transcripts remembered per worker (the rounds in flight)
_PAYLOADS = 1024  # digests of transcript parts verified per worker
#: A transcript: (round, repetitions, parts, digest of the participants) — its parts agree on all four. A digest,
#: not the ids: every party of the worker looks its transcript up for every part, and a tuple of 10^5 ids is hashed
#: anew at each lookup (~0.5 ms: 10^5 parties x 20 parts held a worker for ~1,000 s).
_TranscriptKey = tuple[int, int, int, bytes]
_K = TypeVar("_K")
_V = TypeVar("_V")


def _remember(cache: OrderedDict[_K, _V], key: _K, value: _V, size: int) -> None:
    """Put ``key`` last in the LRU ``cache`` and drop the oldest entries beyond ``size``."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


def apply_rule(rule: DecisionRule, symbols: NDArray[np.integer[Any]], rng: np.random.Generator | None,
               own_bits: int | NDArray[np.integer[Any]] | None = None) -> NDArray[np.int64]:
    """Decide on transcripts (uint8/int (n, k)): int64 (n,).

    Args:
        rng: the simulation generator; None = deployment mode: a randomized rule's draws come from the
            OS CSPRNG (exact Bernoulli draws), a deterministic rule needs none.
        own_bits: the deciding party's bit (party rules only).

    Raises:
        ParameterError: bad symbols or own bits (from the rule).
    """
    if rng is not None or not rule.randomized:
        return np.asarray(rule.decide(symbols, rng=rng, own_bits=own_bits), dtype=np.int64)
    return secure_choice(rule.probabilities(symbols, own_bits))


@dataclass(frozen=True, slots=True)
class PartyDecisionSpec:
    """What the parties need to decide f themselves (public; picklable for a worker process).

    Attributes:
        mechanisms: every roster party's randomized response (party id order).
        function: the name of f (:func:`mpdp.protocols.functions.parse_function`; a name pickles where the
            function object may not), symmetric, computed over each round's participants.
        kind: ``"average"`` or ``"worst-case"``: the parties' rules are the optimal ones of this kind
            for the zero-one measure (:mod:`mpdp.protocols.rules.rule_factory`).
    """

    mechanisms: tuple[RandomizedResponse, ...]
    function: str
    kind: str = "average"

    def __post_init__(self) -> None:
        if self.kind not in RULE_KINDS:
            raise ParameterError("rule", self.kind, "one of " + ", ".join(RULE_KINDS))
        if self.boolean_function().count_values(1) is None:
            raise ParameterError("function", self.function, "a symmetric function for party decisions")

    def boolean_function(self) -> BooleanFunction:
        """f as an object."""
        return parse_function(self.function)

    def decider(self, session: str, coordinator_key: bytes) -> PartyDecider:
        """A worker's :class:`PartyDecider` of these parameters (a :class:`mpdp.parties.rounds.plan.DeciderSpec`)."""
        return PartyDecider(self, session, coordinator_key)


@dataclass(slots=True, eq=False)
class PartyDecider:
    """The deciding machinery of one worker's parties (see the module docstring).

    Args:
        spec: the public parameters. session: the session id. coordinator_key: raw Ed25519 public key
        that signs transcripts.
    """

    spec: PartyDecisionSpec
    session: str
    coordinator_key: bytes
    rules: RuleCache = field(default_factory=RuleCache)
    _verified: OrderedDict[bytes, _TranscriptKey | None] = field(default_factory=OrderedDict)
    _parts: OrderedDict[_TranscriptKey, dict[int, NDArray[np.uint8]]] = field(default_factory=OrderedDict)
    _whole: OrderedDict[_TranscriptKey, tuple[TranscriptMessage, NDArray[np.uint8]]] = field(
        default_factory=OrderedDict)
    _function: BooleanFunction | None = None
    #: the rules of the participants of the rounds in flight, by the identity of their participants tuple
    _rule_sets: OrderedDict[int, tuple[tuple[int, ...], PartyRuleSet, NDArray[np.int64]]] = field(
        default_factory=OrderedDict)
    #: the last payload and its digest: a worker hands one delivery to each of its parties (hashed once, not k times)
    _last_digest: tuple[bytes, bytes] | None = None
    #: each verified transcript's decisions, by the identity of its symbol matrix
    _decisions: OrderedDict[int, tuple[NDArray[np.uint8], TranscriptDecisions]] = field(default_factory=OrderedDict)
    _fresh: FreshnessGuard = field(default_factory=FreshnessGuard)
    #: held while a thread builds rules or tables (:meth:`decide`)
    _building: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: transcripts refused, by reason (and logged, rate-limited)
    rejections: RejectLog = field(default_factory=lambda: RejectLog(log, "party decisions"))

    def transcript(self, payload: bytes) -> tuple[TranscriptMessage, NDArray[np.uint8]] | None:
        """The verified transcript of a round and its whole symbol matrix (uint8 (repetitions, n)) once
        every part of it (:meth:`TranscriptMessage.signed_parts`) has arrived in this process, else None:
        a part still missing, or a payload that is malformed, of another session, not signed by the
        coordinator, naming parties outside the roster, expired or replayed (counted by reason in
        :attr:`rejections` and logged, rate-limited). Each payload is verified once per process, each round
        assembled once."""
        if self._last_digest is not None and self._last_digest[0] is payload:  # the same delivery, party after party
            digest = self._last_digest[1]
        else:
            digest = hashlib.sha256(payload).digest()
            self._last_digest = (payload, digest)
        if digest in self._verified:
            self._verified.move_to_end(digest)
            placed = self._verified[digest]
        else:
            placed = self._place(payload)
            _remember(self._verified, digest, placed, _PAYLOADS)
        return None if placed is None else self._whole.get(placed)

    def _place(self, payload: bytes) -> _TranscriptKey | None:
        """Verify one part and file its rows under its transcript; the transcript's key, or None."""
        try:
            message = self._check(payload)
        except ProtocolViolation as exc:
            self.rejections.reject(exc.reason, exc.detail)
            return None
        ids = hashlib.sha256(np.asarray(message.participants, dtype=np.int64).tobytes()).digest()
        key = (message.round, message.repetitions, message.parts, ids)
        if key not in self._whole:
            parts = self._parts.get(key) or {}
            parts[message.part] = message.symbol_matrix()
            if len(parts) < message.parts:
                _remember(self._parts, key, parts, _VERIFIED)
            else:
                self._parts.pop(key, None)
                whole = np.concatenate([parts[p] for p in range(message.parts)], axis=0)
                _remember(self._whole, key, (message, whole), _VERIFIED)
        return key

    def _check(self, payload: bytes) -> TranscriptMessage:
        try:
            message = TranscriptMessage.model_validate_json(payload)
        except ValidationError as exc:
            raise ProtocolViolation("schema", f"transcript: {exc.errors()[0]['msg']}") from None
        where = f"transcript of round {message.round}"
        if message.session != self.session:
            raise ProtocolViolation("session", f"{where}: session {message.session!r}")
        if not verify_message(message, load_public_key(self.coordinator_key)):
            raise ProtocolViolation("signature", f"{where}: not signed by the coordinator")
        if any(p >= len(self.spec.mechanisms) for p in message.participants):
            raise ProtocolViolation("unknown-party", f"{where}: parties outside the roster")
        # one sender per (round, part): the parts of a transcript may arrive in any order (each is signed
        # with its own sequence), a part already accepted is a replay
        self._fresh.check(message, ("coordinator", message.round, message.part), where)
        return message

    def _rules_of(self, participants: tuple[int, ...]) -> tuple[PartyRuleSet, NDArray[np.int64]]:
        """The participants' rules (one built per group of equal mechanisms) and their ids as an array."""
        key = id(participants)
        found = self._rule_sets.get(key)
        if found is None or found[0] is not participants:
            if self._function is None:
                self._function = self.spec.boolean_function()
            rules = PartyRuleSet([self.spec.mechanisms[p] for p in participants], self._function,
                                 kind=self.spec.kind, cache=self.rules)
            found = (participants, rules, np.asarray(participants, dtype=np.int64))
            _remember(self._rule_sets, key, found, _VERIFIED)
        return found[1], found[2]

    def _position(self, participants: tuple[int, ...], party: int) -> int | None:
        """``party``'s index among ``participants`` (ascending ids), or None."""
        ids = self._rules_of(participants)[1]
        at = int(np.searchsorted(ids, party))
        return at if at < ids.size and int(ids[at]) == party else None

    def participates(self, message: TranscriptMessage, party: int) -> bool:
        """Whether ``party`` is among the transcript's participants (a binary search, not a scan per party)."""
        return self._position(message.participants, party) is not None

    def rule(self, participants: tuple[int, ...], party: int) -> DecisionRule:
        """Party ``party``'s rule over ``participants`` (ids, ascending; ``party`` among them): a view of the
        rule of its group of equal mechanisms (:mod:`mpdp.protocols.rules.party_rules`)."""
        at = self._position(participants, party)
        if at is None:
            raise ParameterError("party", party, "one of the participants")
        return self._rules_of(participants)[0].rule(at)

    async def decide(self, message: TranscriptMessage, symbols: NDArray[np.uint8], party: int, bit: int,
                     rng: np.random.Generator | None) -> NDArray[np.int64]:
        """Party ``party``'s decision for each repetition of the transcript: int64 (repetitions,), from the
        transcript's decisions computed once per group and symbol (:class:`TranscriptDecisions`).

        What is not built yet (the group's rule, its tables: a band of 10^5 parties takes ~40 s) is built in a
        thread, one build at a time: the event loop goes on reading the connection (its keepalive, the
        heartbeats, the PUBACKs) meanwhile, and the parties that waited for the same build find it done.

        Raises:
            ParameterError: the party is not a participant of the transcript. SizeLimitError, SolverError: a
                rule that could not be built.
        """
        at = self._position(message.participants, party)
        if at is None:
            raise ParameterError("party", party, f"a participant of round {message.round}")
        key = id(symbols)
        found = self._decisions.get(key)
        if found is None or found[0] is not symbols:
            found = (symbols, self._rules_of(message.participants)[0].decisions(symbols))
            _remember(self._decisions, key, found, _VERIFIED)
        decisions = found[1]
        if decisions.pending(at, bit):
            async with self._building:  # the builds read and fill shared caches: one thread at a time
                if decisions.pending(at, bit):
                    await asyncio.to_thread(decisions.prepare, at, bit)
        if rng is not None or not decisions.randomized(at):
            return decisions.decide(at, bit, rng)
        return secure_choice(decisions.probabilities(at, bit))
