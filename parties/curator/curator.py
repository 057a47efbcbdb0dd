"""The trusted curator of the central model: it opens sealed ballots and publishes only the output of
the optimal (epsilon, delta)-DP mechanism for the majority (001 §I, Theorems 3-5;
:func:`mpdp.protocols.central_majority_mechanism`).

Per round:

1. a fresh X25519 key pair; the public key goes out in a :class:`CuratorAnnouncement` signed with
   the curator's Ed25519 key (the parties hold its public key);
2. each party's :class:`SealedBallot` is validated like a randomized-response message by the
   observer (topic, schema, session, unknown-party, signature, round, late, duplicate,
   repetitions) and then opened: ``curator-key`` (sealed to another key), ``decrypt``
   (authentication failed: tampered ciphertext, header or ephemeral key, or sealed to another key)
   and ``plaintext`` (not a bit) are further reject reasons; a rejected ballot is counted, never
   recorded or counted as a vote;
3. at close, with n accepted ballots and c ones among them, the curator draws ``repetitions``
   independent outputs, each 1 with probability ``central_majority_mechanism(n, epsilon, delta)
   .release_one[c]`` (simulation: the round's seeded generator; deployment: exact Bernoulli from the
   OS CSPRNG, :func:`mpdp.protocols.secure.secure_bernoulli`), publishes them in a signed
   :class:`CuratorRelease`, records ciphertexts and release, and forgets the round's key and bits.

Repetitions are a simulation device: in a deployment the curator releases once per round (every
release spends privacy). The count c is never published or stored. With no ballot (n = 0) the output
is the majority of nobody, 0, and depends on no one's data.

The connection, reconnection and reject bookkeeping are :class:`mpdp.parties.rr.observer.Observer`'s.
"""

from __future__ import annotations

import collections
import logging

import numpy as np

from mpdp.analysis.central_vs_distributed import curator_release_probability
from mpdp.broker.curator_messages import CuratorAnnouncement, CuratorRelease, SealedBallot
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.topics import Topics
from mpdp.parties.curator.outcome import ReleaseOutcome
from mpdp.parties.curator.store import CuratorRecord, CuratorStore, RecordedBallot
from mpdp.parties.rr.observer import Observer
from mpdp.parties.session.seeds import round_generator
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.roster import Roster
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.secure import secure_bernoulli

__all__ = ["Curator"]

log = logging.getLogger("mpdp.curator")


def _no_rule(*_: object) -> None:
    raise ProtocolViolation("protocol", "the curator releases a mechanism's output; it has no decision rule")


class Curator(Observer):
    """The curator of one session. Run it with :func:`mpdp.parties.rr.observer.serve_observer`.

    Args:
        endpoint, topics: the broker and the session's topics.
        roster: the parties' Ed25519 public keys; every mechanism must have the same (epsilon,
            delta), the level of the central mechanism for each party's vote.
        store: a :class:`CuratorStore` with the session opened (``open_curator_session``).
        signing_key: the curator's raw Ed25519 private key (announcements and releases).
        repetitions: releases per round (a simulation device); round_timeout: seconds per round.
        seed: the curator's seed sequence (simulation); None = deployment (exact CSPRNG draws).

    Raises:
        ParameterError: heterogeneous privacy levels in the roster.
    """

    message_class = SealedBallot  # type: ignore[assignment]

    def __init__(
        self, endpoint: BrokerEndpoint, topics: Topics, roster: Roster, store: CuratorStore,
        signing_key: bytes, *, repetitions: int, round_timeout: float, seed: np.random.SeedSequence | None,
    ) -> None:
        levels = {(m.epsilon, m.delta) for m in roster.mechanisms}
        if len(levels) != 1:
            raise ParameterError("mechanisms", sorted(levels)[:3],
                                 "one (epsilon, delta) for every party in the curator protocol")
        (self.epsilon, self.delta), = levels
        super().__init__(endpoint, topics, roster, store, signing_key, function=parse_function("majority"),
                         measure=accuracy_measure("zero-one", 2), repetitions=repetitions,
                         round_timeout=round_timeout, rule_factory=_no_rule)  # type: ignore[arg-type]
        self._curator_store = store
        self._seed = seed
        self._round_private: bytes | None = None
        self._round_public = b""
        self._release: CuratorRelease | None = None

    @property
    def client_id(self) -> str:
        """The curator's MQTT client id (stable, for its persistent session)."""
        return f"mpdp-{self.topics.session}-curator"

    def _round_announcement(self, index: int, name: str) -> str:
        self._round_private, self._round_public = generate_x25519_key_pair()
        return CuratorAnnouncement.signed(
            self._coordinator, session=self.topics.session, kind="round", round=index, name=name,
            repetitions=self.repetitions, curator_key=self._round_public).model_dump_json()

    def _end_announcement(self, rounds: int) -> str:
        return CuratorAnnouncement.signed(self._coordinator, session=self.topics.session, kind="end",
                                          round=rounds, repetitions=self.repetitions).model_dump_json()

    def _payload(self, message: SealedBallot, where: str) -> np.ndarray:  # type: ignore[override]
        """The opened ballot: int64 (1,) holding the bit, or (0,) for an abstention."""
        if message.kind == "abstain":
            return np.zeros(0, dtype=np.int64)
        if self._round_private is None or message.key_bytes != self._round_public:
            raise ProtocolViolation("curator-key", f"{where}: sealed to another key")
        try:
            bit = message.open(self._round_private)
        except ProtocolViolation as exc:
            raise ProtocolViolation(exc.reason, f"{where}: {exc.detail}") from None
        return np.array([bit], dtype=np.int64)

    def _outputs(self, index: int, probability: float) -> np.ndarray:
        if self._seed is None:
            return np.array([secure_bernoulli(probability) for _ in range(self.repetitions)], dtype=np.int64)
        return (round_generator(self._seed, index).random(self.repetitions) < probability).astype(np.int64)

    async def run_round(self, index: int, name: str) -> ReleaseOutcome:  # type: ignore[override]
        """Announce round ``index`` with a fresh key, collect sealed ballots until complete or
        ``round_timeout``, release, record, and publish the release.

        Raises:
            TransportError: the announcement or the release could not be published.
        """
        outcome = await super().run_round(index, name)
        assert self._release is not None
        await self._publish(self.topics.release, self._release.model_dump_json())
        return outcome  # type: ignore[return-value]

    def _close_round(self, index: int, name: str, status: str) -> ReleaseOutcome:  # type: ignore[override]
        ballots: list[RecordedBallot] = []
        ones = 0
        for party in range(self.roster.k):
            got = self._received.get(party)
            if got is None:
                ballots.append(RecordedBallot(party, "absent", None, None))
                continue
            message, bit, text = got
            ballots.append(RecordedBallot(party, message.kind, message.reason, text))  # type: ignore[arg-type]
            ones += int(bit.sum())
        ids = {kind: np.array([b.party for b in ballots if b.kind == kind], dtype=np.int64)
               for kind in ("sealed", "abstain", "absent")}
        voters = int(ids["sealed"].size)
        outputs = self._outputs(index, curator_release_probability(ones, voters, self.epsilon, self.delta))
        self._received, self._round_private = {}, None  # forget the bits and the round key
        self._release = CuratorRelease.signed(self._coordinator, session=self.topics.session, round=index,
                                              voters=voters, outputs=outputs)
        outcome = ReleaseOutcome(
            name=name, index=index, participants=ids["sealed"], outputs=outputs,
            messages_received=len(ballots) - ids["absent"].size, messages_rejected=self._round_rejects,
            abstained=ids["abstain"], absent=ids["absent"], status=status,  # type: ignore[arg-type]
        )
        rejects, self._pending_rejects = dict(self._pending_rejects), collections.defaultdict(dict)
        self._curator_store.record_release(CuratorRecord(
            self.topics.session, outcome, tuple(ballots), self._release.model_dump_json(), rejects))
        if status == "timeout":
            log.warning("curator: round %d (%s) timed out; absent: %s", index, name, format_ranges(ids["absent"].tolist()))
        return outcome
