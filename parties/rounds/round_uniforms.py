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

Batches: the parties of one process (a simulation worker's thousands) answer the same round one after the other,
so a party's draw of a round computes that round's first uniforms for its whole chunk of :data:`CHUNK` parties of
the process at once (:class:`_Batches`: the same arithmetic on numpy uint64 arrays, 128-bit products in 32-bit
limbs) and the others read theirs: ~1 us a party instead of ~10-20 us. Each party still gets exactly its own
generator's numbers (the tests compare with numpy); only draws of up to :data:`BATCH_DRAWS` uniforms are batched,
and a few chunks' results are kept (:data:`KEPT_CHUNKS`), so memory stays ~40 bytes a party.
"""

from __future__ import annotations

import collections
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["BATCH_DRAWS", "CHUNK", "KEPT_CHUNKS", "RoundUniforms"]

#: Parties of a process whose draws of a round are computed together.
CHUNK = 4096
#: Most uniforms per party a batched draw computes (16 repetitions of two uniforms each).
BATCH_DRAWS = 32
#: Chunks whose latest round is kept (the parties of a worker answer in order: a few are enough).
KEPT_CHUNKS = 4

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
        self._index = -1  # in the process's batches (:class:`_Batches`), once covered
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
        self._index = _BATCHES.add(pool, hasher.const)

    def draws(self, round_index: int, n: int) -> list[float] | None:
        """``round_generator(seed, round_index).random(n)`` as floats, or None (a sequence not covered, or a
        round index above 32 bits); up to :data:`BATCH_DRAWS` with the party's chunk (module docstring)."""
        if self._pool is None or not 0 <= round_index <= _M32:
            return None
        if n <= BATCH_DRAWS:
            return _BATCHES.draws(self._index, round_index, n)
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


_LIMB_SHIFTS = (0, 32, 64, 96)
_MASK, _WORD = np.uint64(_M32), np.uint64(32)
Limbs = list[NDArray[np.uint64]]  # a 128-bit value per party: four 32-bit limbs, least significant first


def _limbs(value: int) -> list[int]:
    """A 128-bit integer as four 32-bit limbs, least significant first."""
    return [(value >> shift) & _M32 for shift in _LIMB_SHIFTS]


def _carried(acc: Limbs) -> Limbs:
    """Limb sums (each below 2^63) reduced to 32-bit limbs, the carry out of the top one dropped (mod 2^128)."""
    out, carry = [], np.zeros_like(acc[0])
    for limb in acc:
        total = limb + carry
        out.append(total & _MASK)
        carry = total >> _WORD
    return out


def _times(a: Limbs, k: list[int]) -> Limbs:
    """``a * k mod 2^128`` in limbs: each 32x32-bit product split into its low half (limb i + j) and high half
    (limb i + j + 1), at most 8 halves below 2^32 a limb, then carried."""
    acc = [np.zeros_like(a[0]) for _ in range(4)]
    for i in range(4):
        for j in range(4 - i):
            if k[j]:
                product = a[i] * np.uint64(k[j])
                acc[i + j] += product & _M32
                if i + j < 3:
                    acc[i + j + 1] += product >> 32
    return _carried(acc)


def _plus(a: list[NDArray[np.uint64]], b: Limbs) -> Limbs:
    """``a + b mod 2^128`` in limbs."""
    return _carried([x + y for x, y in zip(a, b, strict=True)])


def _batch_draws(pools: NDArray[np.uint64], consts: NDArray[np.uint64], round_index: int, n: int
                 ) -> NDArray[np.float64]:
    """:meth:`RoundUniforms.draws` of ``round_index`` for many parties: pools uint64 (m, 4) and their hash
    constants uint64 (m,) (each below 2^32) -> float64 (m, n), the same operations as the scalar code."""
    mask, mult_a = _MASK, np.uint64(_MULT_A)
    words: NDArray[Any] = pools  # uint64 throughout (numpy's stubs widen mixed uint64 arithmetic)
    const: NDArray[Any] = consts.copy()
    pool: Limbs = []
    state: Limbs = []
    value: NDArray[Any]
    for w in range(_POOL):
        value = np.uint64(round_index) ^ const
        const = (const * mult_a) & mask
        value = (value * const) & mask
        mixed: NDArray[Any] = words[:, w] * np.uint64(_MIX_L) - (value ^ (value >> np.uint64(16))) * np.uint64(_MIX_R)
        value = mixed & mask
        pool.append(value ^ (value >> np.uint64(16)))
    scalar = _INIT_B
    for i in range(8):
        value = pool[i & 3] ^ np.uint64(scalar)
        scalar = (scalar * _MULT_B) & _M32
        value = (value * np.uint64(scalar)) & mask
        state.append(value ^ (value >> np.uint64(16)))
    # initstate = w0 << 64 | w1, initseq = w2 << 64 | w3 with w_j = state[2j] | state[2j+1] << 32: in limbs
    initstate = [state[2], state[3], state[0], state[1]]
    initseq = [state[6], state[7], state[4], state[5]]
    shifted: list[NDArray[Any]] = [(limb << np.uint64(1)) & mask for limb in initseq]  # (initseq << 1) | 1, mod 2^128
    for j in range(1, 4):
        shifted[j] |= initseq[j - 1] >> np.uint64(31)
    shifted[0] |= np.uint64(1)
    inc, mult = shifted, _limbs(_PCG_MULT)
    lcg = _plus(_times(_plus(inc, initstate), mult), inc)
    out = np.empty((pools.shape[0], n), dtype=np.float64)
    for column in range(n):
        lcg = _plus(_times(lcg, mult), inc)
        high = lcg[2] | (lcg[3] << np.uint64(32))
        value = high ^ (lcg[0] | (lcg[1] << np.uint64(32)))
        turn = high >> np.uint64(58)
        value = (value >> turn) | (value << ((np.uint64(64) - turn) & np.uint64(63)))
        out[:, column] = (value >> np.uint64(11)).astype(np.float64) * _UNIT
    return out


class _Batches:
    """The process's covered sequences in order of creation (pools and hash constants in growing uint64 arrays,
    ~40 bytes a party), and the latest round's uniforms of the last :data:`KEPT_CHUNKS` chunks used."""

    def __init__(self) -> None:
        self._pools = np.zeros((CHUNK, _POOL), dtype=np.uint64)
        self._consts = np.zeros(CHUNK, dtype=np.uint64)
        self._count = 0
        #: chunk -> (round, n, members computed, float64 (members, n)), least recently used first
        self._kept: collections.OrderedDict[int, tuple[int, int, int, NDArray[np.float64]]] = collections.OrderedDict()

    def add(self, pool: list[int], const: int) -> int:
        """Register one sequence's pool and hash constant; its index."""
        if self._count == len(self._consts):
            self._pools = np.concatenate([self._pools, np.zeros_like(self._pools)])
            self._consts = np.concatenate([self._consts, np.zeros_like(self._consts)])
        index, self._count = self._count, self._count + 1
        self._pools[index], self._consts[index] = pool, const
        return index

    def draws(self, index: int, round_index: int, n: int) -> list[float]:
        """The first ``n`` uniforms of round ``round_index`` of sequence ``index``, its chunk computed at once."""
        chunk, at = divmod(index, CHUNK)
        kept = self._kept.get(chunk)
        if kept is None or kept[:2] != (round_index, n) or at >= kept[2]:
            start = chunk * CHUNK
            members = min(self._count - start, CHUNK)
            kept = (round_index, n, members, _batch_draws(self._pools[start:start + members],
                                                          self._consts[start:start + members], round_index, n))
            self._kept[chunk] = kept
            while len(self._kept) > KEPT_CHUNKS:
                self._kept.popitem(last=False)
        self._kept.move_to_end(chunk)
        return kept[3][at].tolist()


_BATCHES = _Batches()
