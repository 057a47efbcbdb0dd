"""The seed tree of a simulation: every random stream of a run, derived from its one ``--seed``.

Each stream is a child of ``SeedSequence(seed)`` at a fixed spawn key (numpy's ``SeedSequence``
mixes the key into the pool, so streams at distinct keys are independent)::

    key                  stream                                              numpy equivalent
    (i,)                 party i (i = 0..k-1)                                SeedSequence(seed).spawn(k)[i]
    (i, r)                 its privatization of round r                      (i,) .spawn(R)[r]
    (i, r, 1)              its randomized decisions in round r (002 eq. 4)   (i, r) .spawn(2)[1]
    (0,)                 the curator (curator protocol, whose parties draw   SeedSequence(seed).spawn(1)[0]
                         nothing: it shares party 0's key)
    (0, r)                 its releases of round r
    (2**31,)             the simulate command's own draws:
    (2**31, 0)             the bits of a random dataset (--parties K)        SeedSequence(seed, spawn_key=(2**31,)).spawn(3)[0]
    (2**31, 1)             the per-party epsilons of --epsilon LO:HI           ... .spawn(3)[1]
    (2**31, 2)             the theory's Monte Carlo fallback                   ... .spawn(3)[2]
    (2**31 + 1,)         the central observer's randomized decisions         SeedSequence(seed, spawn_key=(2**31 + 1,))
    (2**31 + 1, r, 1)      its draws in round r

The keys 2**31 and 2**31 + 1 lie above every party index (the wire caps party ids below 2**31), so the
command's and the observer's streams never meet a party's. Changing a key changes every simulation
seeded with ``--seed`` (the README's House run); tests/parties/test_seeds.py pins each stream against
the numpy expression in the table.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

import numpy as np

from mpdp.protocols.errors import ParameterError

__all__ = ["COMMAND_KEY", "DECISIONS_KEY", "OBSERVER_KEY", "SeedTree", "decision_generator",
           "round_generator"]

#: Spawn key of the simulate command's draws (dataset, epsilons, theory), above every party index.
COMMAND_KEY = 2**31
#: Spawn key of the central observer's randomized decisions.
OBSERVER_KEY = 2**31 + 1
#: Last spawn-key element of a round's decision draws, under the round's key ``(..., r)``.
DECISIONS_KEY = 1
_DATASET, _EPSILONS, _THEORY = 0, 1, 2


def _child(seed: np.random.SeedSequence, *key: int) -> np.random.SeedSequence:
    """The child of ``seed`` at ``(*seed.spawn_key, *key)``, without mutating ``seed``."""
    return np.random.SeedSequence(seed.entropy, spawn_key=(*seed.spawn_key, *key), pool_size=seed.pool_size)


def round_generator(seed: np.random.SeedSequence, round_index: int) -> np.random.Generator:
    """The generator of round ``round_index`` of a party's (or the curator's) stream: key ``(..., r)``.

    Equal to ``default_rng(seed.spawn(R)[round_index])`` for a fresh ``seed`` and any R > round_index,
    without mutating ``seed``."""
    return np.random.default_rng(_child(seed, round_index))


def decision_generator(seed: np.random.SeedSequence, round_index: int) -> np.random.Generator:
    """The generator of a randomized rule's draws in round ``round_index``: key ``(..., r, 1)``."""
    return np.random.default_rng(_child(seed, round_index, DECISIONS_KEY))


@dataclass(frozen=True, slots=True)
class SeedTree:
    """The named streams of a simulation seeded with ``seed`` (see the module docstring).

    Args:
        seed: an integer >= 0 (``SeedSequence`` takes no negatives).

    Raises:
        ParameterError: a seed that is not a non-negative integer.
    """

    seed: int

    @classmethod
    def from_seed(cls, seed: int | None) -> SeedTree:
        """The tree of ``seed``, or of a fresh seed from the OS CSPRNG for None: 63 bits, so that it
        fits a signed 64-bit integer (the run records it to be repeated)."""
        return cls(secrets.randbits(63) if seed is None else seed)

    def __post_init__(self) -> None:
        if isinstance(self.seed, bool) or not isinstance(self.seed, int | np.integer) or self.seed < 0:
            raise ParameterError("seed", self.seed, "an integer >= 0")

    @property
    def root(self) -> np.random.SeedSequence:
        """``SeedSequence(seed)``, the root of the tree."""
        return np.random.SeedSequence(self.seed)

    def party(self, index: int) -> np.random.SeedSequence:
        """Party ``index``'s sequence, key ``(index,)``: rounds via :func:`round_generator`, decisions
        via :func:`decision_generator`."""
        if index < 0 or index >= COMMAND_KEY:
            raise ParameterError("party index", index, f"0..{COMMAND_KEY - 1}")
        return _child(self.root, index)

    def parties(self, k: int) -> list[np.random.SeedSequence]:
        """The sequences of parties 0..k-1 (``SeedSequence(seed).spawn(k)``)."""
        return [self.party(i) for i in range(k)]

    def curator(self) -> np.random.SeedSequence:
        """The curator's sequence, key ``(0,)``: its releases of round r via :func:`round_generator`."""
        return _child(self.root, 0)

    def observer_decisions(self) -> np.random.SeedSequence:
        """The central observer's sequence, key ``(2**31 + 1,)``: round r via :func:`decision_generator`."""
        return _child(self.root, OBSERVER_KEY)

    def _command(self, stream: int) -> np.random.Generator:
        return np.random.default_rng(_child(self.root, COMMAND_KEY, stream))

    def dataset(self) -> np.random.Generator:
        """The generator of a random dataset's bits, key ``(2**31, 0)``."""
        return self._command(_DATASET)

    def epsilons(self) -> np.random.Generator:
        """The generator of per-party epsilons drawn from a range, key ``(2**31, 1)``."""
        return self._command(_EPSILONS)

    def theory(self) -> np.random.Generator:
        """The generator of the theory's Monte Carlo fallback, key ``(2**31, 2)``."""
        return self._command(_THEORY)
