"""Sequences whose items are made when read: a subclass gives its length and item i, this base the indexing.

A grid of ten million epsilons, the seeds of its points, a sweep's tasks or a pool's worker specs name their
items by a few numbers; :class:`LazySequence` turns ``len`` and ``_item(i)`` into a
:class:`collections.abc.Sequence` (negative indices from the end, IndexError out of range, a slice a list of
the items it takes), so each of them holds its numbers, not its items.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TypeVar, overload

__all__ = ["LazySequence"]

T = TypeVar("T")


class LazySequence(Sequence[T]):
    """A :class:`collections.abc.Sequence` of items made when read: ``len(self)`` items, item i
    ``self._item(i)``. Subclasses define ``__len__`` and ``_item`` (and ``__iter__`` where items come cheaper
    in a run); the base keeps no state (``__slots__ = ()``: a slotted dataclass subclass stays slotted).

    Example:
        >>> class Squares(LazySequence[int]):
        ...     def __len__(self) -> int: return 4
        ...     def _item(self, index: int) -> int: return index * index
        >>> s = Squares(); s[-1], s[1:3], list(s)
        (9, [1, 4], [0, 1, 4, 9])
    """

    __slots__ = ()

    @abstractmethod
    def _item(self, index: int) -> T:
        """Item ``index``, 0 <= index < len(self) (checked by the caller)."""

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [self._item(i) for i in range(len(self))[index]]
        return self._item(range(len(self))[index])  # IndexError out of range, negative indices from the end
