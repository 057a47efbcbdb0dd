"""Sequences made when read (:mod:`mpdp.protocols.numerics.lazy`): indexing and slicing as a list's of the same
items, each item made only when it is taken, and a slotted dataclass subclass stays slotted."""

from __future__ import annotations

import doctest
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

from mpdp.protocols.numerics import lazy
from mpdp.protocols.numerics.lazy import LazySequence


@dataclass(frozen=True, slots=True)
class _Cubes(LazySequence[int]):
    """i ** 3 for i < n, recording every item it makes."""

    n: int
    made: list[int]

    def __len__(self) -> int:
        return self.n

    def _item(self, index: int) -> int:
        self.made.append(index)
        return index**3


@pytest.mark.parametrize("n", [0, 1, 2, 7])
def test_indices_and_slices_are_those_of_the_list_of_items(n: int) -> None:
    cubes, listed = _Cubes(n, []), [i**3 for i in range(n)]
    assert isinstance(cubes, Sequence) and len(cubes) == n
    for i in range(-n - 2, n + 2):
        if -n <= i < n:
            assert cubes[i] == listed[i]
        else:
            with pytest.raises(IndexError):
                cubes[i]
    bounds = (None, -9, -3, -1, 0, 1, 2, 5, 9)
    for start, stop, step in itertools.product(bounds, bounds, (None, 1, 2, -1, -3)):
        taken = cubes[start:stop:step]
        assert type(taken) is list and taken == listed[start:stop:step]
    assert list(cubes) == listed and list(reversed(cubes)) == listed[::-1]
    if n:
        assert cubes.index(listed[-1]) == n - 1 and listed[-1] in cubes and cubes.count(0) == 1


def test_only_the_items_taken_are_made() -> None:
    cubes = _Cubes(10**12, [])
    assert cubes[-1] == (10**12 - 1) ** 3 and cubes[5:20:7] == [125, 1728, 6859]
    assert cubes.made == [10**12 - 1, 5, 12, 19]


def test_a_slotted_subclass_keeps_no_dict() -> None:
    assert LazySequence.__slots__ == () and not hasattr(_Cubes(3, []), "__dict__")


def test_an_item_is_required() -> None:
    class NoItem(LazySequence[int]):
        def __len__(self) -> int:
            return 1

    with pytest.raises(TypeError, match="_item"):
        NoItem()  # type: ignore[abstract]


def test_the_docstring_example_runs() -> None:
    assert doctest.testmod(lazy).failed == 0
