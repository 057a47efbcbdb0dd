"""Per-party passes in blocks (:mod:`mpdp.protocols.numerics.blocks`): the same results as numpy's one-call
forms, and one block's CPU bounded whatever k (issue 23: a stop signal waits for the running C call)."""

from __future__ import annotations

import time

import numpy as np
import pytest

from mpdp.protocols.numerics.blocks import BLOCK_ITEMS, block_slices, float_array, object_ids, stable_group_order


def test_block_slices_cover_the_range_once_in_order() -> None:
    assert list(block_slices(7, 3)) == [slice(0, 3), slice(3, 6), slice(6, 7)]
    assert list(block_slices(0, 3)) == []
    with pytest.raises(ValueError, match="at least 1"):
        list(block_slices(5, 0))


@pytest.mark.parametrize("block", [1, 2, 5, 1000])
def test_blocked_passes_equal_numpy_in_one_call(block: int) -> None:
    rng = np.random.default_rng(23)
    values = rng.normal(size=37).tolist()
    np.testing.assert_array_equal(float_array(values, block), np.array(values))
    objects = [object(), object(), object()]
    picks = [objects[i] for i in rng.integers(0, 3, 37)]
    np.testing.assert_array_equal(object_ids(picks, block), np.array([id(o) for o in picks], dtype=np.uintp))
    labels = rng.integers(0, 4, 37)
    order, sizes = stable_group_order(labels, 5, block)
    np.testing.assert_array_equal(order, np.argsort(labels, kind="stable"))
    np.testing.assert_array_equal(sizes, np.bincount(labels, minlength=5))


def test_stable_group_order_names_a_bad_label() -> None:
    with pytest.raises(ValueError, match=r"0\.\.2"):
        stable_group_order(np.array([0, 3]), 3)


def test_one_block_is_milliseconds_of_cpu_so_a_signal_waits_no_longer() -> None:
    """Each pass over one block of BLOCK_ITEMS items, the longest C call the passes make whatever k, in CPU
    time: ~5-15 ms measured on the 2-core machine; bounded at 0.25 s, a quarter of the second SIGTERM has."""
    values = [0.5] * BLOCK_ITEMS
    labels = np.random.default_rng(1).integers(0, 3, BLOCK_ITEMS)
    for call in (lambda: float_array(values), lambda: object_ids(values), lambda: stable_group_order(labels, 3)):
        start = time.process_time()
        call()
        assert time.process_time() - start < 0.25
