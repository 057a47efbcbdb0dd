"""A party host's signed presence claim: "host instance ``host`` serves ``parties`` in ``session``".

A host publishes its claim on ``mpdp/{session}/presence`` (:attr:`mpdp.broker.topics.Topics.presence`)
from its start until it leaves, and refuses to start while another instance's claim for any of its parties
arrives (:mod:`mpdp.parties.session.presence`): two hosts of one party would release every bit twice with
fresh randomness. The claim is signed by the key of every party it lists (:class:`PartiesSigned`), so a
client without a party's private key cannot keep that party's host from starting.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from mpdp.broker.messages import PartiesSigned, Session
from mpdp.broker.signing import PrivateKey

__all__ = ["PresenceClaim"]


class PresenceClaim(PartiesSigned):
    """One host instance's claim to serve some parties of a session.

    Fields:
        session: the session. host: the instance's random id (16 hex digits, fresh per process start).
        started_ms: unix milliseconds when the instance started claiming; of two instances claiming one
            party, the earlier (``(started_ms, host)`` smaller) keeps it and the later refuses to start.
        label: who the instance is, for the operator (``pid 4242 on machine-a``; at most 200 characters).
        parties, signatures, sequence, expires_ms: :class:`PartiesSigned`.
    """

    SIGNING_DOMAIN: ClassVar[str] = "mpdp/presence-claim/v1"

    version: Literal[1] = 1
    session: Session
    host: Annotated[str, Field(pattern=r"^[0-9a-f]{16}$")]
    started_ms: Annotated[int, Field(ge=0, le=2**53, strict=True)]
    label: Annotated[str, Field(max_length=200)] = ""

    @classmethod
    def signed(cls, private_keys: list[PrivateKey] | tuple[PrivateKey, ...], *, session: str, host: str,
               started_ms: int, label: str, parties: tuple[int, ...], lifetime: float) -> PresenceClaim:
        """A claim valid for ``lifetime`` seconds, signed with ``private_keys[j]`` for ``parties[j]``.

        Raises:
            pydantic.ValidationError: a field out of its domain (no parties, not ascending, not one key each).
        """
        return cls._sign(private_keys, lifetime, session=session, host=host, started_ms=int(started_ms),
                         label=label[:200], parties=tuple(int(p) for p in parties))
