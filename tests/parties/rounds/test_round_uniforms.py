"""RoundUniforms gives numpy's round generator's first uniforms bit for bit; the symbols drawn from them are
the mechanism's ``sample`` of that generator; a party answering a few repetitions sends those symbols."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.parties.rounds.round_uniforms import BATCH_DRAWS, CHUNK, KEPT_CHUNKS, RoundUniforms
from mpdp.parties.rounds.seeds import SeedTree, round_generator
from mpdp.protocols.randomization.exact_bernoulli import first_bits_bernoulli
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


@pytest.mark.parametrize("seed", [0, 1, 1984, 2**40 + 7, 2**63 - 1, 2**130 + 3])
def test_draws_are_the_round_generators_random(seed: int) -> None:
    root = np.random.SeedSequence(seed)
    for party in (0, 1, 2, 999, 2**31 - 1):
        sequence = np.random.SeedSequence(root.entropy, spawn_key=(party,))
        uniforms = RoundUniforms(sequence)
        for index in (0, 1, 5, 19, 2**31 - 1):
            assert uniforms.draws(index, 6) == list(round_generator(sequence, index).random(6)), (party, index)


def test_the_seed_trees_party_sequences_and_spawned_children_agree() -> None:
    tree, spawned = SeedTree(7), np.random.SeedSequence(7).spawn(4)
    for party in range(4):
        expected = np.random.default_rng(spawned[party].spawn(3)[2]).random(2)
        assert RoundUniforms(tree.party(party)).draws(2, 2) == list(expected)


def test_sequences_it_does_not_cover_give_none() -> None:
    assert RoundUniforms(np.random.SeedSequence([1, 2], spawn_key=(3,))).draws(0, 1) is None
    assert RoundUniforms(np.random.SeedSequence(1, spawn_key=(3,), pool_size=8)).draws(0, 1) is None
    assert RoundUniforms(np.random.SeedSequence(1, spawn_key=(3,))).draws(2**32, 1) is None


@pytest.mark.parametrize("mechanism", [RandomizedResponse(1.0), RandomizedResponse(0.3, 0.2),
                                       RandomizedResponse(37.0, 1e-3)])
def test_symbols_from_uniforms_are_the_mechanisms_sample(mechanism: RandomizedResponse) -> None:
    sequence = SeedTree(5).party(3)
    uniforms = RoundUniforms(sequence)
    for index in range(40):
        for repetitions in (1, 3, 16):
            bit = index % 2
            drawn = uniforms.draws(index, 2 * repetitions)
            assert drawn is not None
            got = mechanism.sample_from_uniforms(bit, drawn)
            expected = mechanism.sample(bit, repetitions, round_generator(sequence, index))
            assert got is not None and got.dtype == np.uint8 and np.array_equal(got, expected)


def test_a_draw_tied_on_its_first_53_bits_is_left_to_the_generator() -> None:
    p = 0.1  # 0.1 * 2^53 is not an integer: a uniform equal to its first 53 bits needs the next ones
    tied = np.floor(np.ldexp(p, 53)) * 2.0**-53
    assert first_bits_bernoulli(p, [0.5, tied]) is None
    assert first_bits_bernoulli(p, [0.5, tied - 2.0**-53, 0.05]) == [False, True, True]
    assert first_bits_bernoulli(0.5, [0.5, 0.25, 0.75]) == [False, True, False]  # 0.5 has 53 bits: exact
    mechanism = RandomizedResponse(2.0)  # its flip probability times 2^53 ends in .75
    assert np.ldexp(mechanism.channel[0, 1], 53) % 1 == 0.75
    flip = float(np.floor(np.ldexp(mechanism.channel[0, 1], 53)) * 2.0**-53)
    assert mechanism.sample_from_uniforms(1, [flip, 0.5]) is None
    assert np.array_equal(mechanism.sample_from_uniforms(1, [0.0, 0.5, 0.99, 0.5]), [0, 1])


def test_batched_draws_across_chunks_rounds_and_lengths_are_each_partys_own_generators() -> None:
    """More parties than a chunk, answering rounds in turn, out of order and with other lengths in between (each
    recomputes or reads its chunk's batch): every draw is numpy's ``round_generator(seed, r).random(n)`` of the
    party's own sequence, also past :data:`BATCH_DRAWS` (the scalar path)."""
    root = np.random.SeedSequence(2**70 + 11)
    sequences = [np.random.SeedSequence(root.entropy, spawn_key=(party,)) for party in range(CHUNK + 300)]
    uniforms = [RoundUniforms(sequence) for sequence in sequences]
    checked = (0, 1, CHUNK - 1, CHUNK, CHUNK + 299)
    for index, n in [(0, 2), (1, 2), (0, 2), (7, BATCH_DRAWS), (2**32 - 1, 1), (3, BATCH_DRAWS + 1), (1, 2)]:
        for party, (sequence, party_uniforms) in enumerate(zip(sequences, uniforms, strict=True)):
            got = party_uniforms.draws(index, n)
            if party in checked or party % 211 == 0:
                assert got == list(round_generator(sequence, index).random(n)), (party, index, n)
    later = [RoundUniforms(np.random.SeedSequence(5, spawn_key=(p,))) for p in range(KEPT_CHUNKS * CHUNK)]
    for party_uniforms in later[::CHUNK // 2]:  # every kept chunk replaced by later parties' chunks
        party_uniforms.draws(4, 2)
    assert later[-1].draws(4, 2) == list(round_generator(np.random.SeedSequence(5, spawn_key=(KEPT_CHUNKS * CHUNK - 1,)),
                                                         4).random(2))
    assert uniforms[CHUNK + 299].draws(9, 4) == list(round_generator(sequences[CHUNK + 299], 9).random(4))
