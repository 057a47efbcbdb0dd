"""The seed tree gives exactly the streams of the explicit SeedSequence spawns in its docstring."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.parties.rounds.seeds import SeedTree, decision_generator, round_generator
from mpdp.protocols.errors import ParameterError

SEED = 1984


def _same(a: np.random.Generator, b: np.random.Generator) -> bool:
    return bool(np.array_equal(a.integers(0, 2**63, 8), b.integers(0, 2**63, 8)))


def test_party_streams_are_the_spawned_children_of_the_root() -> None:
    tree = SeedTree(SEED)
    spawned = np.random.SeedSequence(SEED).spawn(5)
    for i, (mine, theirs) in enumerate(zip(tree.parties(5), spawned, strict=True)):
        assert _same(np.random.default_rng(mine), np.random.default_rng(theirs)), i
        assert _same(round_generator(mine, 3), np.random.default_rng(theirs.spawn(4)[3]))
    assert _same(np.random.default_rng(tree.party(2)), np.random.default_rng(spawned[2]))


def test_decisions_of_round_r_are_child_one_of_the_rounds_sequence() -> None:
    party = SeedTree(SEED).party(4)
    explicit = np.random.SeedSequence(SEED).spawn(5)[4].spawn(7)[6].spawn(2)[1]
    assert _same(decision_generator(party, 6), np.random.default_rng(explicit))
    # the round's privatization stream and its decision stream differ
    assert not _same(decision_generator(party, 6), round_generator(party, 6))


def test_curator_observer_and_command_streams() -> None:
    tree = SeedTree(SEED)
    assert _same(round_generator(tree.curator(), 2),
                 np.random.default_rng(np.random.SeedSequence(SEED).spawn(1)[0].spawn(3)[2]))
    observer = np.random.SeedSequence(SEED, spawn_key=(2**31 + 1,))
    assert _same(decision_generator(tree.observer_decisions(), 5),
                 np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(2**31 + 1, 5, 1))))
    assert _same(np.random.default_rng(tree.observer_decisions()), np.random.default_rng(observer))
    dataset, epsilons, theory = np.random.SeedSequence(SEED, spawn_key=(2**31,)).spawn(3)
    assert _same(tree.dataset(), np.random.default_rng(dataset))
    assert _same(tree.epsilons(), np.random.default_rng(epsilons))
    assert _same(tree.theory(), np.random.default_rng(theory))


def test_streams_do_not_mutate_or_depend_on_call_order() -> None:
    tree = SeedTree(SEED)
    party = tree.party(1)
    first = round_generator(party, 0).random(3)
    decision_generator(party, 0).random(3)
    assert np.array_equal(round_generator(party, 0).random(3), first)
    assert party.n_children_spawned == 0


def test_fresh_tree_for_no_seed_and_bad_seeds_refused() -> None:
    a, b = SeedTree.from_seed(None), SeedTree.from_seed(None)
    assert a.seed != b.seed and a.seed >= 0
    assert SeedTree.from_seed(7) == SeedTree(7)
    for bad in (-1, 1.5, True, "7"):
        with pytest.raises(ParameterError, match="seed"):
            SeedTree(bad)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="party index"):
        SeedTree(7).party(2**31)
