"""The first few uniforms of a party's round generator, without building the generator (a simulated party's
hot path: one round, one or a few repetitions, 1,000s of parties per worker).

``RoundUniforms(seed).draws(r, n)`` equals ``round_generator(seed, r).random(n)`` (:mod:`mpdp.parties.rounds.seeds`)
bit for bit: numpy's ``SeedSequence`` hash (``mix_entropy``, ``generate_state``) and its PCG64 (XSL-RR 128/64,
seeded by ``pcg64_set_seed``; ``random()`` = the top 53 bits of a 64-bit output times 2^-53) are computed
here with Python integers. The pool of a party's sequence with its own spawn key mixed in is kept, so a round
mixes only its round index (the last spawn-key word) and seeds the 128-bit LCG: ~10 us against ~45 us for
``SeedSequence`` + ``default_rng`` + ``random``. ``tests/parties/test_round_uniforms.py`` compares it
with numpy over many seeds, parties and rounds. Sequences this module does not cover (an entropy that is not
an int, a pool size other than 4, a spawn-key word above 32 bits) give None and the caller uses numpy.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RoundUniforms"]

_M32 = 0xFFFFFFFF
_INIT_A, _MULT_A, _INIT_B, _MULT_B = 0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED
_MIX_L, _MIX_R = 0xCA01F9DD, 0x4973F715
_POOL = 4
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645
_M64, _M128 = (1 << 64) - 1, (1 << 128) - 1
_UNIT = 1.0 / 9007199254740992.0  # 2^-53


def _words(value: int) -> list[int]:
    """numpy's ``_int_to_uint32_array``: little-endian 32-bit words, [0] for 0."""
    words = [value & _M32]
    value >>= 32
    while value:
        words.append(value & _M32)
        value >>= 32
    return words


class _Hash:
    """numpy's ``hashmix`` with its running constant."""

    def __init__(self, const: int = _INIT_A) -> None:
        self.const = const

    def mix(self, value: int) -> int:
        value ^= self.const
        self.const = (self.const * _MULT_A) & _M32
        value = (value * self.const) & _M32
        return value ^ (value >> 16)


def _mix(x: int, y: int) -> int:
    result = (_MIX_L * x - _MIX_R * y) & _M32
    return result ^ (result >> 16)


class RoundUniforms:
    """The uniforms of ``round_generator(seed, r)`` for a party's ``seed`` (module docstring).

    Args:
        seed: the party's ``SeedSequence`` (its ``entropy`` an int, pool size 4); any other sequence makes
            :meth:`draws` return None.
    """

    def __init__(self, seed: np.random.SeedSequence) -> None:
        self._pool: list[int] | None = None
        self._const = 0
        entropy, key = seed.entropy, tuple(seed.spawn_key)
        if not isinstance(entropy, int | np.integer) or seed.pool_size != _POOL or entropy < 0 \
                or any(not 0 <= int(word) <= _M32 for word in key):
            return
        run = _words(int(entropy))
        assembled = [*run, *[0] * (_POOL - len(run)), *map(int, key)] if len(run) < _POOL else [*run, *map(int, key)]
        hasher = _Hash()
        pool = [hasher.mix(assembled[i] if i < len(assembled) else 0) for i in range(_POOL)]
        for src in range(_POOL):
            for dst in range(_POOL):
                if src != dst:
                    pool[dst] = _mix(pool[dst], hasher.mix(pool[src]))
        for word in assembled[_POOL:]:
            for dst in range(_POOL):
                pool[dst] = _mix(pool[dst], hasher.mix(word))
        self._pool, self._const = pool, hasher.const

    def draws(self, round_index: int, n: int) -> list[float] | None:
        """``round_generator(seed, round_index).random(n)`` as floats, or None (a sequence not covered, or a
        round index above 32 bits)."""
        if self._pool is None or not 0 <= round_index <= _M32:
            return None
        const, pool = self._const, []
        for word in self._pool:  # the round's spawn-key word mixed into each pool word (hashmix, then mix)
            value = round_index ^ const
            const = (const * _MULT_A) & _M32
            value = (value * const) & _M32
            value = (_MIX_L * word - _MIX_R * (value ^ (value >> 16))) & _M32
            pool.append(value ^ (value >> 16))
        const, state = _INIT_B, []
        for i in range(8):  # generate_state(4, uint64): 8 uint32 words, the pool cycled
            value = pool[i & 3] ^ const
            const = (const * _MULT_B) & _M32
            value = (value * const) & _M32
            state.append(value ^ (value >> 16))
        w = [state[2 * j] | state[2 * j + 1] << 32 for j in range(4)]
        initstate, initseq = w[0] << 64 | w[1], w[2] << 64 | w[3]
        inc = ((initseq << 1) | 1) & _M128
        lcg = inc  # state 0, one step: 0 * M + inc
        lcg = ((lcg + initstate) * _PCG_MULT + inc) & _M128
        out = []
        for _ in range(n):
            lcg = (lcg * _PCG_MULT + inc) & _M128
            high = lcg >> 64
            value, turn = (high ^ lcg) & _M64, high >> 58
            value = ((value >> turn) | (value << (64 - turn))) & _M64
            out.append((value >> 11) * _UNIT)
        return out
