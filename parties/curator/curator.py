"""The trusted curator of the central model: it opens sealed ballots and publishes only the output of
the optimal (epsilon, delta)-DP mechanism for its binary symmetric function f (majority, and, or, xor,
threshold:T; 001 §I, Theorems 2-5; :func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`).

Per round:

1. a fresh X25519 key pair; the public key goes out in a :class:`CuratorAnnouncement` signed with
   the curator's Ed25519 key (the parties hold its public key);
2. each party's :class:`SealedBallot` is validated like a randomized-response message by the
   observer (topic, schema, session, unknown-party, signature, round, late, double-release,
   repetitions) and then opened: ``curator-key`` (sealed to another key), ``decrypt``
   (authentication failed: tampered ciphertext, header or ephemeral key, or sealed to another key)
   and ``plaintext`` (not a bit) are further reject reasons; a rejected ballot is counted, never
   recorded or counted as a vote;
3. at close, with n accepted ballots and c ones among them, the curator draws ``repetitions``
   independent outputs, each 1 with probability ``central_mechanism(f, n, epsilon, delta)
   .release_one[c]`` (:func:`mpdp.analysis.theory.central_vs_distributed.curator_release_probability`;
   simulation: the round's seeded generator; deployment: exact Bernoulli from the
   OS CSPRNG, :func:`mpdp.protocols.randomization.secure.secure_bernoulli`), publishes them in a signed
   :class:`CuratorRelease`, records ciphertexts and release, and forgets the round's key and bits.

Repetitions are a simulation device: in a deployment the curator releases once per round (every
release spends privacy). The count c is never published or stored. With no ballot (n = 0) the output
is f of nobody (majority: 0), exactly, and depends on no one's data.

:class:`Curator` is a :class:`mpdp.parties.rounds.engine.RoundProtocol` plug-in: the round engine
announces, collects, validates (the reasons above before ``curator-key``), records and counts rejects.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.theory.central_vs_distributed import curator_release_probability
from mpdp.broker.curator_messages import (
    CuratorAnnouncement,
    CuratorRelease,
    SealedBallot,
)
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.store import BallotRows, recorded_ballots
from mpdp.parties.rounds.engine import ClosedRound, Closing
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import round_generator
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.randomization.secure import secure_bernoulli

__all__ = ["Curator"]


class Curator:
    """The curator protocol of the round engine (the trusted curator's side).

    Args:
        topics: the session's topics.
        roster: the parties' mechanisms; every one must have the same (epsilon, delta), the level of
            the central mechanism for each party's vote.
        seed: the curator's seed sequence (simulation); None = deployment (exact CSPRNG draws).
        function: the name of the binary symmetric f it releases (:func:`mpdp.protocols.functions
            .parse_function`: majority, and, or, xor, threshold:T).

    Raises:
        ParameterError: heterogeneous privacy levels in the roster (the function is checked by the
            session: :func:`mpdp.parties.ballots.central.check_central_function`).
    """

    role = "curator"
    decode = staticmethod(SealedBallot.from_wire)  # JSON, validated (the engine verifies)
    filters: tuple[str, ...] = ()

    def __init__(self, topics: Topics, roster: Roster, *, seed: np.random.SeedSequence | None,
                 function: str = "majority") -> None:
        levels = {(m.epsilon, m.delta) for m in roster.mechanisms}
        if len(levels) != 1:
            raise ParameterError("mechanisms", sorted(levels)[:3],
                                 "one (epsilon, delta) for every party in the curator protocol")
        (self.epsilon, self.delta), = levels
        self.function = function
        self._topics = topics
        self._seed = seed
        self._round_private: bytes | None = None
        self._round_public = b""

    def announcement(self, signer: PrivateKey, session: str, index: int, name: str,
                     repetitions: int, lifetime: float) -> CuratorAnnouncement:
        """The signed announcement of round ``index`` with a fresh X25519 key, valid for ``lifetime`` s."""
        self._round_private, self._round_public = generate_x25519_key_pair()
        return CuratorAnnouncement.signed(signer, session=session, kind="round", round=index, name=name,
                                          repetitions=repetitions, curator_key=self._round_public,
                                          lifetime=lifetime)

    def signal(self, signer: PrivateKey, session: str, kind: Literal["end", "heartbeat"], index: int,
               repetitions: int, name: str = "") -> CuratorAnnouncement:
        """The signed end of the session (``index`` = the number of rounds; ``name``: why it failed, "" when
        complete), or a heartbeat."""
        return CuratorAnnouncement.signed(signer, session=session, kind=kind, round=index, repetitions=repetitions, name=name)

    def payload(self, message: SealedBallot, where: str) -> NDArray[np.int64]:
        """The opened ballot: int64 (1,) holding the bit, or (0,) for an abstention.

        Raises:
            ProtocolViolation: ``curator-key``, ``decrypt`` or ``plaintext`` (module docstring).
        """
        if message.kind == "abstain":
            return np.zeros(0, dtype=np.int64)
        if self._round_private is None or message.key_bytes != self._round_public:
            raise ProtocolViolation("curator-key", f"{where}: sealed to another key")
        try:
            bit = message.open(self._round_private)
        except ProtocolViolation as exc:
            raise ProtocolViolation(exc.reason, f"{where}: {exc.detail}") from None
        return np.array([bit], dtype=np.int64)

    def receive(self, topic: str, text: str) -> None:
        """The curator reads party topics only.

        Raises:
            ProtocolViolation: ``topic``, always.
        """
        raise ProtocolViolation("topic", topic)

    def ready(self, status: WorkerStatus) -> None:
        """Nothing: the curator's parties seal each ballot under a fresh key (none announced ahead)."""

    def _outputs(self, index: int, probability: float, repetitions: int) -> NDArray[np.int64]:
        if self._seed is None:
            return np.array([secure_bernoulli(probability) for _ in range(repetitions)], dtype=np.int64)
        return (round_generator(self._seed, index).random(repetitions) < probability).astype(np.int64)

    def close(self, closed: ClosedRound[SealedBallot, NDArray[np.int64]], signer: PrivateKey) -> Closing:
        """Draw the central mechanism's outputs for the opened ballots, forget the round's key, and
        publish the signed release."""
        ballots = recorded_ballots(closed)
        ones = sum(int(got.payload.sum()) for got in closed.received.values())
        voters = int(closed.participants.size)
        probability = curator_release_probability(ones, voters, self.epsilon, self.delta, self.function)
        outputs = self._outputs(closed.index, probability, closed.repetitions)
        self._round_private = None  # forget the round key (the engine forgets the bits)
        release = CuratorRelease.signed(signer, session=closed.session, round=closed.index, voters=voters,
                                        outputs=outputs).model_dump_json()
        if closed.undecided:  # nothing released: no decision, nothing published
            return Closing(closed.outcome(closed.no_decisions(), None), BallotRows(ballots, voters, release))
        return Closing(closed.outcome(outputs, None), BallotRows(ballots, voters, release),
                       ((self._topics.release, release),))

    def load(self, store: TranscriptStore, session: str, index: int) -> RoundOutcome:
        """A recorded round: the released outputs (no symbols: ballots are sealed)."""
        return store.load_round(session, index, symbols=False)

    async def conclude(self) -> None:
        """Nothing to wait for after the last round."""
