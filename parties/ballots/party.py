"""A party of a central protocol (curator, mpc): it answers each round with a sealed ballot of its true bit.

What the two protocols' parties share is here, once: the connection and round loop
(:class:`mpdp.parties.rounds.answering.PartyLoop`), one answer per round, the party's own repetition cap (each
of the ``repetitions`` releases is a release of its bit: a round asking for more gets an abstention
``policy``), ``did-not-vote`` for a bit it does not hold, and the budget check of a party that charges its own
ledger. What differs is a :class:`BallotMaker`: the curator's seals the bit to the curator's round key
(:class:`mpdp.parties.curator.party.SealedBallots`), the mpc protocol's splits it into Shamir shares sealed to
the compute servers (:class:`mpdp.parties.mpc.party.SharedBallots`). No noise is added by the party.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, Protocol

from pydantic import BaseModel

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.signing import PrivateKey, load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE, PartyLoop, Publishable
from mpdp.parties.rounds.liveness import AnnouncementT
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED
from mpdp.parties.rounds.party_spec import ABSTAIN_DID_NOT_VOTE, PartySpec, policy_reason, spec_bit
from mpdp.protocols.errors import ParameterError

__all__ = ["BallotMaker", "BallotParty"]


class BallotMaker(Protocol[AnnouncementT]):
    """What a central protocol's party seals, and how it accounts for it."""

    @property
    def announcement_class(self) -> type[AnnouncementT]:
        """The announcement the coordinator (curator) signs."""
        ...

    @property
    def sealing_key(self) -> bytes:
        """The raw X25519 public key the party endorses in its "ready" (the mpc protocol's session sealing
        key), or b"" for none."""
        ...

    @property
    def charges_ledger(self) -> bool:
        """True: the party charges each round it answers to its own ledger at its (epsilon, delta) per release,
        and abstains ``budget-exhausted`` past its budget (mpc); False: its ledger stays ``spec.ledger`` (the
        curator accounts for the release)."""
        ...

    def ballot(self, key: PrivateKey, session: str, party: int, announcement: AnnouncementT,
               bit: int | None, reason: str | None) -> Publishable:
        """The signed ballot of party ``party`` answering ``announcement``: ``bit`` (0 or 1) sealed, or, with
        ``bit`` None, an abstention for ``reason``."""
        ...


class BallotParty(Generic[AnnouncementT]):
    """One party of a central protocol: its :class:`mpdp.parties.rounds.answering.PartyProtocol` run by a
    :class:`mpdp.parties.rounds.answering.PartyLoop`.

    Args:
        spec: the party's private state; ``spec.mechanism`` carries its privacy level only (the central
            mechanism is (epsilon, delta)-DP for each party's vote); ``spec.seed`` is unused (the party
            draws nothing seeded).
        connector, topics, idle_timeout, connect_gate, observer_grace: as :class:`mpdp.parties.rr.party.Party`.
        coordinator_key: the coordinator's (curator's) raw Ed25519 public key (announcements signed by anyone
            else are ignored).
        maker: the protocol's ballots (:class:`BallotMaker`).
        record: the host's durable answer record (None: in memory only).
    """

    filters: tuple[str, ...] = ()

    def __init__(self, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes,
                 maker: BallotMaker[AnnouncementT], *, idle_timeout: float,
                 connect_gate: asyncio.Semaphore | None = None, record: AnswerRecord | None = None,
                 observer_grace: float = OBSERVER_GRACE) -> None:
        self.spec = spec
        self.maker = maker
        self._topics = topics
        self._key = load_private_key(spec.private_key)
        self._charged: PrivacyLedger | None = None
        self._loop = PartyLoop(spec.party, self, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                               connect_gate=connect_gate, record=record, observer_grace=observer_grace)

    @property
    def announcement_class(self) -> type[AnnouncementT]:
        """The maker's announcement."""
        return self.maker.announcement_class

    @property
    def loop(self) -> PartyLoop[Any]:
        """The party's round loop (a worker serving many parties on one connection drives it)."""
        return self._loop

    @property
    def sealing_key(self) -> bytes:
        """The maker's key for the party's "ready" (:attr:`BallotMaker.sealing_key`)."""
        return self.maker.sealing_key

    @property
    def ledger(self) -> PrivacyLedger:
        """``spec.ledger`` (the host's answer record), and, when the maker charges the party's ledger, each
        round whose release included this party's vote at its roster (epsilon, delta) per release."""
        return self.spec.ledger if self._charged is None else self._charged

    def respond(self, announcement: AnnouncementT) -> Publishable:
        """The signed ballot answering one round announcement (no network I/O).

        A round asking for more than the party's repetition cap gets an abstention ``policy``; a bit the party
        does not hold ``did-not-vote``; with a charging maker, a round whose releases would take the party past
        its budget (exact optimal composition, 000 Theorem 3.3) ``budget-exhausted``, else the round is charged
        to :attr:`ledger` (once: answering it again charges nothing).

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        index, reps = announcement.round, announcement.repetitions
        bit = spec_bit(self.spec, index)
        reason = policy_reason(self.spec, reps) or (ABSTAIN_DID_NOT_VOTE if bit < 0 else None)
        if reason is None and self.maker.charges_ledger and index not in self.ledger.rounds:
            eps, delta = self.spec.mechanism.epsilon, self.spec.mechanism.delta
            if self.spec.budget is not None and self.ledger.would_exceed(self.spec.budget, eps, delta, reps):
                reason = ABSTAIN_BUDGET_EXHAUSTED
            else:
                self._charged = self.ledger.record(index, eps, delta, reps)
        return self.maker.ballot(self._key, self._topics.session, self.spec.party, announcement,
                                 None if reason is not None else bit, reason)

    async def receive(self, topic: str, payload: bytes) -> BaseModel | None:
        """Nothing: a central protocol's party listens to announcements only."""
        return None

    async def run(self, on_ready: Callable[[], None] = lambda: None) -> int:
        """Serve the session until the end announcement; return the number of rounds answered.

        Raises:
            TransportError: the broker went away for good, or no announcement for ``idle_timeout`` seconds.
        """
        return await self._loop.run(on_ready)

    @classmethod
    def started(cls, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes,
                maker: BallotMaker[AnnouncementT], *, idle_timeout: float, connect_gate: asyncio.Semaphore,
                decider: object | None, record: AnswerRecord | None,
                observer_grace: float = OBSERVER_GRACE) -> BallotParty[AnnouncementT]:
        """A party as a worker starts it (the parties of the central protocols decide nothing).

        Raises:
            ParameterError: a decider given.
        """
        if decider is not None:
            raise ParameterError("party_rule", decider, "None with a central protocol (its parties decide nothing)")
        return cls(spec, connector, topics, coordinator_key, maker, idle_timeout=idle_timeout,
                   connect_gate=connect_gate, record=record, observer_grace=observer_grace)
