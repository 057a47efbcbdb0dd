"""What one party's process holds (:class:`PartySpec`), for every protocol: its id, private bits, mechanism, key,
seed, budget and ledger, and the party's own repetition cap; the bit of a round and the policy refusal read from it."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger
from mpdp.broker.signing import PrivateKey
from mpdp.parties.rounds.outcome import ABSTAIN_POLICY
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["ABSTAIN_DID_NOT_VOTE", "PartySpec", "policy_reason", "spec_bit"]

#: The abstention reason of a party that takes no part in a round (bit -1).
ABSTAIN_DID_NOT_VOTE = "did-not-vote"


@dataclass(frozen=True, slots=True)
class PartySpec:
    """What one party's process holds.

    Attributes:
        party: the party id (index in the roster).
        bits: int8 (R,), the private bit of each round (0, 1, or -1 = takes no part). Never leaves
            the process; not in the repr.
        mechanism: the party's randomized response.
        private_key: the raw 32-byte Ed25519 private key, or that key loaded (:func:`mpdp.broker.signing.load_private_key`:
            a worker loads each of its parties' keys once, for their answers and its signed status reports;
            each load derives the public key, as long as a signature); not in the repr.
        seed: the party's seed sequence (simulation mode); None in deployment mode.
        budget: the party's privacy budget; None = answer every round (still accounted).
        ledger: the rounds answered before this process started (a resumed session); its
            delta_slack is the delta_tilde of the accounting.
        max_repetitions: the most repetitions (releases of the bit) the party sends for one round;
            None = no cap (tests). ``mpdp party`` defaults to 1, ``mpdp simulate`` passes its
            ``--repetitions``.
        bundled: the party's answers go in its simulation worker's signed answer bundles (:mod:`mpdp.broker.bundle`)
            unsigned (:data:`mpdp.broker.wire.UNSIGNED_FORMAT`): the bundle's signature under the worker key this
            party endorsed in its signed "ready" authenticates them (a randomized-response party; a curator party
            signs its sealed ballot all the same). False: each answer carries the party's own signature.

    Raises:
        ParameterError: ``max_repetitions`` not an integer >= 1 (or None).
    """

    party: int
    bits: NDArray[np.int8] = field(repr=False)
    mechanism: RandomizedResponse
    private_key: bytes | PrivateKey = field(repr=False)
    seed: np.random.SeedSequence | None = field(default=None, repr=False)
    budget: Budget | None = None
    ledger: PrivacyLedger = PrivacyLedger(DEFAULT_DELTA_SLACK)
    max_repetitions: int | None = None
    bundled: bool = False

    def __post_init__(self) -> None:
        cap = self.max_repetitions
        if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 1):
            raise ParameterError("max_repetitions", cap, "an integer >= 1 (or None: no cap)")


def policy_reason(spec: PartySpec, repetitions: int) -> str | None:
    """:data:`ABSTAIN_POLICY` when a round of ``repetitions`` releases exceeds ``spec.max_repetitions``, else None."""
    cap = spec.max_repetitions
    return ABSTAIN_POLICY if cap is not None and repetitions > cap else None


def spec_bit(spec: PartySpec, index: int) -> int:
    """``spec``'s private bit in round ``index``: 0, 1, or -1 (takes no part).

    Raises:
        ParameterError: the round index is beyond the party's bits (one line naming the party's dataset
            rounds, e.g. ``party 1 has no bit for round 3: its dataset has 3 rounds (columns), 0..2``).
    """
    rounds = len(spec.bits)
    if index >= rounds:
        raise ParameterError("round", index, f"0..{rounds - 1}", message=(
            f"party {spec.party} has no bit for round {index}: its dataset has {rounds} "
            f"{'round' if rounds == 1 else 'rounds'} (columns), 0..{rounds - 1}"))
    return int(spec.bits[index])
