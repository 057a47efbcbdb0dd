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

from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.curator.party import CuratorParty
from mpdp.parties.mpc.sealed_shares import seal_shares
from mpdp.parties.mpc.sharing import share_bits
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rr.party import ABSTAIN_DID_NOT_VOTE, PartySpec, policy_reason, spec_bit

__all__ = ["MpcParty", "start_mpc_party"]


class MpcParty(CuratorParty):
    """One party of the mpc protocol (arguments as :class:`mpdp.parties.curator.party.CuratorParty`;
    ``coordinator_key`` is the coordinator's raw Ed25519 public key)."""

    announcement_class = MpcAnnouncement  # type: ignore[assignment]

    def respond(self, announcement: MpcAnnouncement) -> SharedBallot:  # type: ignore[override]
        """The signed ballot of sealed shares answering one round announcement (no network I/O).

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
        keys = announcement.key_bytes
        shares = share_bits(np.array([bit], dtype=np.uint8), len(keys), announcement.threshold)
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
