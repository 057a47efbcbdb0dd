"""The roster: every party's public mechanism and Ed25519 public key, indexed by party id."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mpdp.broker.signing import generate_key_pair
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["Roster"]


@dataclass(frozen=True, slots=True)
class Roster:
    """Public facts about the k parties.

    Attributes:
        mechanisms: party i's randomized response (public: the observer's decision rule needs it).
        public_keys: party i's raw 32-byte Ed25519 public key.

    Raises:
        ParameterError: lengths differ, or a key is not 32 bytes.
    """

    mechanisms: tuple[RandomizedResponse, ...]
    public_keys: tuple[bytes, ...]

    def __post_init__(self) -> None:
        if len(self.mechanisms) != len(self.public_keys):
            raise ParameterError(
                "public_keys", len(self.public_keys), f"one key per party ({len(self.mechanisms)})"
            )
        for i, key in enumerate(self.public_keys):
            if not isinstance(key, bytes) or len(key) != 32:
                raise ParameterError(f"public_keys[{i}]", key, "32 raw bytes (Ed25519)")

    @property
    def k(self) -> int:
        """The number of parties."""
        return len(self.mechanisms)

    @classmethod
    def generate(cls, mechanisms: Sequence[RandomizedResponse]) -> tuple[Roster, tuple[bytes, ...]]:
        """Fresh key pairs for every party: (the roster, the private keys in party order).

        Each private key must go to its own party's process only."""
        pairs = [generate_key_pair() for _ in mechanisms]
        return cls(tuple(mechanisms), tuple(pub for _, pub in pairs)), tuple(priv for priv, _ in pairs)
