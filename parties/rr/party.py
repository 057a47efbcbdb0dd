"""A party: holds one private bit per round, privatizes it with its own randomized response, and
broadcasts the signed symbols over its own connection (a :class:`mpdp.broker.transport.Transport`).

Simulation mode: round r of party i draws from ``default_rng(SeedSequence(seed).spawn(k)[i].spawn(R)[r])``
(a per-round child of the party's sequence, so a resumed run draws what a full run would).
Deployment mode (``secure=True``): :func:`mpdp.protocols.randomization.secure.sample_secure` (exact sampling from the OS
CSPRNG). The raw bit stays in this process: it is in no message, log line or repr.

Privacy policy (the party's own, from its :class:`mpdp.parties.rounds.party_spec.PartySpec`, never from the wire): a round announcing more
repetitions than ``max_repetitions`` gets an abstention with reason ``policy``. Privacy accounting: the
party keeps an :class:`mpdp.analysis.PrivacyLedger` of the rounds it answered (each repetition one release).
With a budget, before it answers a round it asks whether the answer would take it past the budget by the
exact optimal composition (000 Theorem 3.3; heterogeneous where needed); if so it abstains with reason
``budget-exhausted`` instead. Either way nothing is released.

Own decisions (a :class:`mpdp.parties.rr.decisions.PartyDecider` given): the party also subscribes to the
session's transcript topic; for each round it answered with symbols, it verifies the transcript the
observer published (coordinator signature), decides f with its own optimal rule over the round's
participants and its own bit (002 eqs. (2), (4); randomized draws from
:func:`mpdp.parties.rounds.seeds.decision_generator` of its seed, or the CSPRNG in deployment mode) and
publishes a signed :class:`mpdp.broker.decision_messages.DecisionMessage`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.decision_messages import DecisionMessage
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.broker.wire import WireAnswer, sign_answer
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE, PartyLoop
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED
from mpdp.parties.rounds.party_spec import ABSTAIN_DID_NOT_VOTE, PartySpec, policy_reason, spec_bit
from mpdp.parties.rounds.plan import Decider
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.rounds.round_uniforms import RoundUniforms
from mpdp.parties.rounds.secure_sampling import Sampler, secure_sampler
from mpdp.parties.rounds.seeds import decision_generator, round_generator
from mpdp.protocols.errors import ParameterError

__all__ = ["Party", "Sampler", "secure_sampler", "start_party"]  # the sampler: mpdp.parties.rounds.secure_sampling

log = logging.getLogger("mpdp.party")
#: Repetitions up to which a simulated party draws from :class:`RoundUniforms` (Python floats, one per
#: draw) rather than building the round's numpy generator (faster below a few dozen draws).
_DIRECT_REPETITIONS = 16

class Party:
    """One randomized-response party: the :class:`mpdp.parties.rounds.answering.PartyProtocol` it speaks
    (privatize, account, sign; decide f from the published transcript) run by a
    :class:`mpdp.parties.rounds.answering.PartyLoop` (connect, verify announcements, answer each round once).

    Args:
        spec: the party's private state.
        connector: the broker (a :class:`mpdp.broker.endpoint.BrokerEndpoint`, or an in-memory one).
        topics: the session's topics.
        coordinator_key: raw Ed25519 public key that signs announcements (others are ignored).
        idle_timeout: seconds to wait for the first announcement before giving up.
        observer_grace: seconds of coordinator silence (no announcement, no heartbeat) after which the
            party leaves (:class:`mpdp.parties.rounds.answering.PartyLoop`).
        sampler: deployment-mode sampler (from :func:`secure_sampler`); None = simulation mode
            (``spec.seed`` must be set).
        connect_gate: bounds how many parties of a worker connect at once.
        decider: the worker's shared deciding machinery; None = the party does not decide f itself.
        record: the host's durable answer record (None: in memory only).

    Raises:
        ParameterError: neither a sampler nor a seed.
    """

    announcement_class = Announcement

    def __init__(
        self,
        spec: PartySpec,
        connector: Connector,
        topics: Topics,
        coordinator_key: bytes,
        *,
        idle_timeout: float,
        sampler: Sampler | None = None,
        connect_gate: asyncio.Semaphore | None = None,
        decider: Decider | None = None,
        record: AnswerRecord | None = None,
        observer_grace: float = OBSERVER_GRACE,
    ) -> None:
        if sampler is None and spec.seed is None:
            raise ParameterError("seed", None, "a SeedSequence in simulation mode (or a secure sampler)")
        self.spec = spec
        self._topics = topics
        self._key = load_private_key(spec.private_key)
        self._sampler = sampler
        self._decider = decider
        #: the rounds of :attr:`ledger`, each answered with symbols (a set: looked up every round; one set for
        #: both, ~216 bytes a party: 10^6 parties kept three per party)
        self._charged = set(spec.ledger.rounds)
        self._uniforms = None if spec.seed is None or sampler is not None else RoundUniforms(spec.seed)
        #: rounds this party decided f in (only a deciding party keeps a set)
        self._decided: set[int] | None = None if decider is None else set()
        self.ledger = spec.ledger  #: the rounds this party answered and what they cost
        self._loop = PartyLoop(spec.party, self, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                               connect_gate=connect_gate, record=record, observer_grace=observer_grace)

    @property
    def loop(self) -> PartyLoop[Announcement]:
        """The party's round loop (a worker serving many parties on one connection drives it)."""
        return self._loop

    @property
    def sealing_key(self) -> bytes:
        """b"": a randomized-response party seals nothing (its "ready" lists no sealing key)."""
        return b""

    @property
    def client_id(self) -> str:
        """The client id: unique per session and party (a restarted party takes its session over)."""
        return self._loop.client_id

    @property
    def rejections(self) -> RejectLog:
        """The announcements this party refused, counted by reason."""
        return self._loop.rejections

    @property
    def filters(self) -> tuple[str, ...]:
        """The transcript topic when the party decides f itself."""
        return () if self._decider is None else (self._topics.transcript,)

    def bit(self, index: int) -> int:
        """The party's private bit in round ``index``: 0, 1, or -1 (takes no part).

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        return spec_bit(self.spec, index)

    def respond(self, announcement: Announcement) -> WireAnswer:
        """The signed message answering one round announcement (no I/O), built straight into the binary
        layout (:func:`mpdp.broker.wire.sign_answer`: the bytes ``PartyMessage.signed`` would give; its
        ``to_wire()`` is what the party publishes and records); unsigned when ``spec.bundled`` (its worker's
        signed bundle authenticates it).

        A round asking for more than ``spec.max_repetitions`` gets an abstention ``policy``; a round with
        bit -1 gets ``did-not-vote``; a round whose answer would exceed the budget gets ``budget-exhausted``;
        otherwise the round is charged to :attr:`ledger` (once per
        round id: answering a charged round again releases the same simulation sample) and answered.

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        index = announcement.round
        bit = self.bit(index)
        sign = functools.partial(sign_answer, None if self.spec.bundled else self._key,
                                 session=self._topics.session, round=index,
                                 party=self.spec.party, repetitions=announcement.repetitions)
        refusal = policy_reason(self.spec, announcement.repetitions) or (ABSTAIN_DID_NOT_VOTE if bit < 0 else None)
        if refusal is not None:
            return sign(reason=refusal)
        eps, delta, reps = self.spec.mechanism.epsilon, self.spec.mechanism.delta, announcement.repetitions
        if index not in self._charged:
            if self.spec.budget is not None and self.ledger.would_exceed(self.spec.budget, eps, delta, reps):
                return sign(reason=ABSTAIN_BUDGET_EXHAUSTED)
            self.ledger = self.ledger.record(index, eps, delta, reps)
            self._charged.add(index)  # with the ledger: a charged round is one answered with symbols
        if self._sampler is not None:
            symbols = self._sampler(self.spec.mechanism, bit, reps)
        else:
            symbols = self._seeded_symbols(bit, index, reps)
        return sign(symbols=symbols)

    def _seeded_symbols(self, bit: int, index: int, repetitions: int) -> NDArray[np.uint8]:
        """The simulation's draw of round ``index`` from ``round_generator(spec.seed, index)``: for a few
        repetitions from its first uniforms computed directly (:class:`RoundUniforms`, the same numbers),
        else (or when a draw needs more than 53 bits) from the generator itself."""
        assert self.spec.seed is not None and self._uniforms is not None
        if repetitions <= _DIRECT_REPETITIONS:
            uniforms = self._uniforms.draws(index, 2 * repetitions)
            symbols = None if uniforms is None else self.spec.mechanism.sample_from_uniforms(bit, uniforms)
            if symbols is not None:
                return symbols
        return self.spec.mechanism.sample(bit, repetitions, round_generator(self.spec.seed, index))

    async def receive(self, topic: str, payload: bytes) -> DecisionMessage | None:
        """The signed decisions answering the transcript published on ``topic`` (no I/O; rules not built yet are
        built in a thread: :meth:`mpdp.parties.rr.decisions.PartyDecider.decide`), or None when
        there is nothing to decide: no decider, an unverified transcript, a round this party did not release
        symbols in or already decided.

        Raises:
            ParameterError: the transcript omits this party although it released symbols (from the decider).
        """
        if self._decider is None or self._decided is None:
            return None
        verified = self._decider.transcript(payload)
        if verified is None:
            return None
        message, symbols = verified
        index = message.round
        if (index not in self._charged or index in self._decided
                or not self._decider.participates(message, self.spec.party)):
            return None
        rng = None if self._sampler is not None or self.spec.seed is None else decision_generator(self.spec.seed, index)
        decisions = await self._decider.decide(message, symbols, self.spec.party, self.bit(index), rng)
        self._decided.add(index)
        return DecisionMessage.signed(self._key, session=self._topics.session, round=index,
                                      party=self.spec.party, decisions=decisions)

    async def run(self, on_ready: Callable[[], None] = lambda: None) -> int:
        """Serve the session until the end announcement; return the number of rounds answered.

        Raises:
            TransportError: the broker went away for good, or no announcement for ``idle_timeout`` seconds.
        """
        return await self._loop.run(on_ready)


def start_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                decider: Decider | None, record: AnswerRecord | None = None,
                observer_grace: float = OBSERVER_GRACE) -> Party:
    """A randomized-response party as a worker starts it (:class:`mpdp.parties.session.worker.PartyStarter`):
    the secure sampler in deployment mode, the seeded generator of ``spec`` in simulation."""
    return Party(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                 sampler=secure_sampler() if secure else None, connect_gate=connect_gate, decider=decider,
                 record=record, observer_grace=observer_grace)
