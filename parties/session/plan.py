"""What a protocol tells the runner about its parties' processes (:class:`PartyPlan`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mpdp.analysis.accounting import PrivacyLedger
from mpdp.parties.rr.party import Party

__all__ = ["PartyPlan"]


@dataclass(frozen=True, slots=True, eq=False)
class PartyPlan:
    """How the runner starts the parties of a protocol.

    Attributes:
        party_class: the party the workers run (:class:`mpdp.parties.rr.party.Party` or a subclass).
        seeds: each party's seed sequence (simulation); None in deployment mode or when unused.
        ledgers: each party's privacy ledger so far; None = fresh ledgers.
    """

    party_class: type[Party]
    seeds: Sequence[np.random.SeedSequence] | None
    ledgers: Sequence[PrivacyLedger] | None = None
