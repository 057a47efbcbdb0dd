"""A party of the secure-computation protocol: it secret-shares its bit among the compute servers.

It answers each round announcement signed by the coordinator's Ed25519 key
(:class:`mpdp.broker.mpc_messages.MpcAnnouncement`, listing the m servers' X25519 keys and T) with a
:class:`mpdp.broker.mpc_messages.SharedBallot`: m fresh Shamir shares of its bit (degree T,
:func:`mpdp.parties.mpc.sharing.share_bits`, OS CSPRNG), share i sealed to server i's key under the party's
session key (:func:`mpdp.parties.mpc.sealed_shares.seal_shares`), signed with its own key. No noise is added
by the party: the servers jointly draw the optimal central mechanism's release, and any T of them, the broker and
the coordinator see only values independent of the bit. Everything else (the connection, one answer per
round, the repetition cap ``policy``, abstentions, the budget) is the central protocols' party
(:class:`mpdp.parties.ballots.party.BallotParty`) with :class:`SharedBallots`.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot
from mpdp.broker.signing import PrivateKey
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.ballots.party import BallotParty
from mpdp.parties.mpc.sealed_shares import ShareSealer, seal_shares
from mpdp.parties.mpc.sharing import share_bits
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.session_files import ServerRoster
from mpdp.protocols.errors import ParameterError

__all__ = ["SharedBallots", "start_mpc_party", "start_pinned_mpc_party"]


@dataclass(frozen=True, slots=True)
class SharedBallots:
    """The mpc protocol's ballots (a :class:`mpdp.parties.ballots.party.BallotMaker`): Shamir shares of the
    bit, share i sealed to server i. The party charges its ledger per answered round (the servers' central
    mechanism is (epsilon, delta)-DP for its vote per release) and keeps its budget.

    Attributes:
        servers: a deployment's compute servers pinned in the roster; the party seals to these X25519 keys
            with this T whatever an announcement lists (a coordinator announcing its own keys learns nothing).
            None (a simulation, where the run starts the servers): the announced keys.
        sealer: the party's session sealing key (:class:`mpdp.parties.mpc.sealed_shares.ShareSealer`: one
            X25519 exchange per server for the session; in this process' memory only). Its public half
            (:attr:`sealing_key`) goes in the worker's signed "ready", so the servers derive their keys with
            the party before the first round.
    """

    servers: ServerRoster | None = None
    sealer: ShareSealer = field(default_factory=ShareSealer, repr=False, compare=False)
    announcement_class = MpcAnnouncement
    charges_ledger = True

    @property
    def sealing_key(self) -> bytes:
        """The public key of :attr:`sealer`, which the party signs in its "ready": the servers derive its share
        keys before the first round (:meth:`mpdp.parties.mpc.sealed_shares.ShareOpener.expect`)."""
        return self.sealer.public_key

    def ballot(self, key: PrivateKey, session: str, party: int, announcement: MpcAnnouncement,
               bit: int | None, reason: str | None) -> SharedBallot:
        """The signed ballot of sealed shares (or abstention for ``reason``)."""
        signed = partial(SharedBallot.signed, key, session=session, round=announcement.round, party=party,
                         repetitions=announcement.repetitions)
        if bit is None:
            return signed(reason=reason)
        keys, threshold = ((announcement.key_bytes, announcement.threshold) if self.servers is None
                           else (list(self.servers.sealing_keys), self.servers.threshold))
        shares = share_bits(np.array([bit], dtype=np.uint8), len(keys), threshold)
        sealed = seal_shares(self.sealer, [row[0] for row in shares], keys, session=session, round_index=announcement.round,
                             party=party)
        return signed(shares=sealed)


def start_mpc_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                    idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                    decider: object | None, record: AnswerRecord | None = None,
                    observer_grace: float = OBSERVER_GRACE) -> BallotParty[MpcAnnouncement]:
    """An mpc party as a worker starts it (:class:`mpdp.parties.rounds.plan.PartyStarter`). ``secure``
    changes nothing (shares always come from the OS CSPRNG).

    Raises:
        ParameterError: a decider given (the mpc protocol's parties do not decide f).
    """
    return BallotParty.started(spec, connector, topics, coordinator_key, SharedBallots(), idle_timeout=idle_timeout,
                               connect_gate=connect_gate, decider=decider, record=record,
                               observer_grace=observer_grace)


def start_pinned_mpc_party(spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
                           idle_timeout: float, connect_gate: asyncio.Semaphore, secure: bool,
                           decider: object | None, record: AnswerRecord | None = None,
                           observer_grace: float = OBSERVER_GRACE,
                           servers: ServerRoster | None = None) -> BallotParty[MpcAnnouncement]:
    """A deployed mpc party (``mpdp party --protocol mpc``): it seals to ``servers``, the compute servers
    pinned in the roster (bind them with :func:`functools.partial`).

    Raises:
        ParameterError: no servers; a decider given.
    """
    if servers is None:
        raise ParameterError("servers", servers, "the roster's compute servers (mpdp keys --protocol mpc)")
    return BallotParty.started(spec, connector, topics, coordinator_key, SharedBallots(servers),
                               idle_timeout=idle_timeout, connect_gate=connect_gate, decider=decider, record=record,
                               observer_grace=observer_grace)
