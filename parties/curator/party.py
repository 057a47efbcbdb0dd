"""A party of the curator protocol (the central model): it sends its true bit, sealed to the curator.

It answers each round announcement signed by the curator's Ed25519 key with a
:class:`mpdp.broker.curator_messages.SealedBallot`: its bit encrypted to the round's X25519 key (fresh
ephemeral key per message, :mod:`mpdp.broker.sealed`) and signed with its own Ed25519 key. No noise is
added by the party: privacy rests on the curator, who publishes only the output of the optimal central
mechanism. The broker and every other client see ciphertexts only. The connection loop is
:class:`mpdp.parties.rr.party.Party`'s.
"""

from __future__ import annotations

import asyncio

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.curator_messages import CuratorAnnouncement, SealedBallot
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Connector
from mpdp.parties.rr.party import ABSTAIN_DID_NOT_VOTE, Party, PartySpec, Sampler
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.mechanisms import RandomizedResponse

__all__ = ["CuratorParty"]


def _no_sampling(mechanism: RandomizedResponse, bit: int, size: int) -> NDArray[np.uint8]:
    raise ProtocolViolation("protocol", "a curator-protocol party sends its bit sealed, never privatized")


class CuratorParty(Party):
    """One party of the curator protocol; arguments as :class:`mpdp.parties.rr.party.Party`.

    ``coordinator_key`` is the curator's raw Ed25519 public key (announcements signed by anyone else
    are ignored). ``spec.mechanism`` carries the party's privacy level only (the curator's
    mechanism is (epsilon, delta)-DP for each party's vote); ``sampler`` and ``spec.seed`` are unused.
    """

    announcement_class = CuratorAnnouncement  # type: ignore[assignment]

    def __init__(
        self, spec: PartySpec, connector: Connector, topics: Topics, coordinator_key: bytes, *,
        idle_timeout: float, sampler: Sampler | None = None, connect_gate: asyncio.Semaphore | None = None,
    ) -> None:
        super().__init__(spec, connector, topics, coordinator_key, idle_timeout=idle_timeout,
                         sampler=_no_sampling, connect_gate=connect_gate)

    def respond(self, announcement: CuratorAnnouncement) -> SealedBallot:  # type: ignore[override]
        """The signed, sealed ballot answering one round announcement (no network I/O).

        Raises:
            ParameterError: the round index is beyond the party's bits.
        """
        index = announcement.round
        bit = self.bit(index)
        return SealedBallot.signed(
            self._key, curator_key=announcement.key_bytes, session=self._topics.session, round=index,
            party=self.spec.party, repetitions=announcement.repetitions,
            bit=None if bit < 0 else bit, reason=ABSTAIN_DID_NOT_VOTE if bit < 0 else None,
        )
