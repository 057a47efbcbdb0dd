"""A party of the secure-computation protocol: it secret-shares its bit among the compute servers.

It answers each round announcement signed by the coordinator's Ed25519 key
(:class:`mpdp.broker.mpc_messages.MpcAnnouncement`, listing the m servers' X25519 keys and T) with a
:class:`mpdp.broker.mpc_messages.SharedBallot`: m fresh Shamir shares of its bit (degree T,
:func:`mpdp.parties.mpc.sharing.share_bits`, OS CSPRNG), share i sealed to server i's key
(:func:`mpdp.parties.mpc.sealed_shares.seal_shares`), signed with its own key. No noise is added by the
party: the servers jointly draw the optimal central mechanism's release, and any T of them, the broker and
the coordinator see only values independent of the bit. Everything else (the connection, one answer per
round, the repetition cap ``policy``, abstentions) is the curator party's
(:class:`mpdp.parties.curator.party.CuratorParty`).
"""

from __future__ import annotations

import asyncio
from functools import partial

import numpy as np

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.curator.party import CuratorParty
from mpdp.parties.mpc.sealed_shares import seal_shares
from mpdp.parties.mpc.sharing import share_bits
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED
from mpdp.parties.rounds.party_spec import ABSTAIN_DID_NOT_VOTE, PartySpec, policy_reason, spec_bit
from mpdp.parties.rounds.session_files import ServerRoster
from mpdp.protocols.errors import ParameterError

__all__ = ["MpcParty", "start_mpc_party", "start_pinned_mpc_party"]


class MpcParty(CuratorParty):
    """One party of the mpc protocol (arguments as :class:`mpdp.parties.curator.party.CuratorParty`;
    ``coordinator_key`` is the coordinator's raw Ed25519 public key).

    ``servers``: a deployment's compute servers pinned in the roster; the party seals to these X25519 keys
    with this T whatever an announcement lists (a coordinator announcing its own keys learns nothing).
    None (a simulation, where the run starts the servers): the announced keys.
    """

    announcement_class = MpcAnnouncement
    servers: ServerRoster | None = None
    _charged: PrivacyLedger | None = None

    @property
    def ledger(self) -> PrivacyLedger:
        """The rounds whose release included this party's vote, each charged at its roster (epsilon, delta)
        per release (the servers' central mechanism is (epsilon, delta)-DP for its vote); starts from
        ``spec.ledger`` (the host's answer record)."""
        return self.spec.ledger if self._charged is None else self._charged

    def respond(self, announcement: MpcAnnouncement) -> SharedBallot:  # type: ignore[override]
        """The signed ballot of sealed shares answering one round announcement (no network I/O).

        A round asking for more than the party's repetition cap gets an abstention ``policy``; one whose
        releases would take it past its budget (exact optimal composition, 000 Theorem 3.3) gets
        ``budget-exhausted``; otherwise the round is charged to :attr:`ledger` and answered.

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        index = announcement.round
        bit = spec_bit(self.spec, index)
        reason = policy_reason(self.spec, announcement.repetitions) or (ABSTAIN_DID_NOT_VOTE if bit < 0 else None)
        signed = partial(SharedBallot.signed, self._key, session=self._topics.session, round=index,
                         party=self.spec.party, repetitions=announcement.repetitions)
        if reason is not None:
            return signed(reason=reason)
        eps, delta, reps = self.spec.mechanism.epsilon, self.spec.mechanism.delta, announcement.repetitions
        if index not in self.ledger.rounds:
            if self.spec.budget is not None and self.ledger.would_exceed(self.spec.budget, eps, delta, reps):
                return signed(reason=ABSTAIN_BUDGET_EXHAUSTED)
            self._charged = self.ledger.record(index, eps, delta, reps)
        keys, threshold = ((announcement.key_bytes, announcement.threshold) if self.servers is None
                           else (list(self.servers.sealing_keys), self.servers.threshold))
        shares = share_bits(np.array([bit], dtype=np.uint8), len(keys), threshold)
        sealed = seal_shares([row[0] for row in shares], keys, session=self._topics.session, round_index=index,
                             party=self.spec.party)
        return signed(shares=sealed)


def start_mpc_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                    idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                    decider: object | None, record: AnswerRecord | None = None,
                    observer_grace: float = OBSERVER_GRACE) -> MpcParty:
    """An mpc party as a worker starts it (:class:`mpdp.parties.session.worker.PartyStarter`). ``secure``
    changes nothing (shares always come from the OS CSPRNG).

    Raises:
        ParameterError: a decider given (the mpc protocol's parties do not decide f).
    """
    return MpcParty.started(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                            connect_gate=connect_gate, decider=decider, record=record, observer_grace=observer_grace)


def start_pinned_mpc_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                           idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                           decider: object | None, record: AnswerRecord | None = None,
                           observer_grace: float = OBSERVER_GRACE, servers: ServerRoster | None = None) -> MpcParty:
    """A deployed mpc party (``mpdp party --protocol mpc``): it seals to ``servers``, the compute servers
    pinned in the roster (bind them with :func:`functools.partial`).

    Raises:
        ParameterError: no servers; a decider given.
    """
    if servers is None:
        raise ParameterError("servers", servers, "the roster's compute servers (mpdp keys --protocol mpc)")
    party = MpcParty.started(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                             connect_gate=connect_gate, decider=decider, record=record, observer_grace=observer_grace)
    party.servers = servers
    return party
