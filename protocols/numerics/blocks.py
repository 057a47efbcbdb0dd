"""Per-party passes in blocks: no single C call over all k parties, so a stop signal is handled promptly.

CPython runs a Python signal handler (SIGTERM, SIGHUP and Ctrl-C are all KeyboardInterrupt in ``mpdp``:
:mod:`mpdp.parties.cli.signals`) only between bytecodes, so one numpy call over k = 10^7 parties holds it
as long as the call runs: converting a list of 10^7 floats took 0.6 s of CPU, listing 10^7 objects' ids
0.36 s, sorting 10^7 labels ~1 s (issue 23; load ~10). Here every such pass is a loop over blocks of
:data:`BLOCK_ITEMS` items, each a few milliseconds of CPU, so the number of blocks grows with k and the
longest call does not.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["BLOCK_ITEMS", "block_slices", "float_array", "object_ids", "stable_group_order"]

#: Items per block: 2^18 = 262,144 (a float conversion of that many list items ~5 ms of CPU, a stable sort
#: of that many labels ~10 ms on the 2-core machine; ``tests/protocols/numerics/test_blocks.py`` bounds it).
BLOCK_ITEMS = 1 << 18


def block_slices(size: int, block: int = BLOCK_ITEMS) -> Iterator[slice]:
    """Consecutive slices of at most ``block`` items covering 0..size - 1 (none for size 0).

    Raises:
        ValueError: ``block`` < 1."""
    if block < 1:
        raise ValueError(f"block must be at least 1 item, not {block}")
    for start in range(0, size, block):
        yield slice(start, min(start + block, size))


def float_array(values: Sequence[float], block: int = BLOCK_ITEMS) -> NDArray[np.float64]:
    """``np.array(values, dtype=float64)`` of a sequence of numbers, one block at a time: float64 (len,).

    Raises:
        TypeError, ValueError: an item that is not a number (as numpy raises them)."""
    out = np.empty(len(values))
    for s in block_slices(out.size, block):
        out[s] = np.asarray(values[s], dtype=np.float64)
    return out


def object_ids(objects: Sequence[object], block: int = BLOCK_ITEMS) -> NDArray[np.uintp]:
    """``id`` of every object (their identity, e.g. parties sharing one mechanism object): uintp (len,)."""
    out = np.empty(len(objects), dtype=np.uintp)
    for s in block_slices(out.size, block):
        out[s] = np.fromiter(map(id, objects[s]), dtype=np.uintp, count=s.stop - s.start)
    return out


def stable_group_order(labels: NDArray[np.int64], groups: int, block: int = BLOCK_ITEMS
                       ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(np.argsort(labels, kind="stable"), group sizes)`` by a counting sort in blocks: each block is
    sorted stably (small sorts) and its items written after those of the earlier blocks with the same label.

    Args:
        labels: int64 (n,), each in 0..groups - 1.
        groups: the number of labels (>= 1).

    Returns:
        order: int64 (n,), the positions with label 0 first, then 1, ..., each label's ascending;
        sizes: int64 (groups,), how many positions have each label.

    Raises:
        ValueError: a label outside 0..groups - 1.
    """
    if labels.size and (int(labels.min()) < 0 or int(labels.max()) >= groups):
        raise ValueError(f"labels must lie in 0..{groups - 1}, not {int(labels.min())}..{int(labels.max())}")
    sizes = np.zeros(groups, dtype=np.int64)
    for s in block_slices(labels.size, block):
        sizes += np.bincount(labels[s], minlength=groups)
    next_free = np.concatenate([[0], np.cumsum(sizes)[:-1]])  # where each label's next item goes
    order = np.empty(labels.size, dtype=np.int64)
    for s in block_slices(labels.size, block):
        local = np.argsort(labels[s], kind="stable")
        ordered = labels[s][local]
        counts = np.bincount(ordered, minlength=groups)
        rank = np.arange(ordered.size) - np.repeat(np.cumsum(counts) - counts, counts)  # within its label
        order[next_free[ordered] + rank] = local + s.start
        next_free += counts
    return order, sizes
