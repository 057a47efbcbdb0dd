"""The servers' bisection finds G = #{j : u < t_j} exactly for every u (issue 23: fewer secure comparisons,
the same released distribution as GeometricTable's, 000 §4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from mpdp.parties.mpc.server import geometric_by_bisection
from mpdp.protocols.randomization.threshold_release import geometric_table


def _less(a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.int64]:
    return (a < b).astype(np.int64)


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("bits", [1, 2, 6, 12])
def test_every_uniform_gets_the_count_of_the_thresholds_above_it(epsilon: float, bits: int) -> None:
    thresholds = geometric_table(epsilon, bits).thresholds
    u = np.arange(2**bits, dtype=np.int64)
    found = geometric_by_bisection(_less, u, [int(t) for t in thresholds])
    assert found.tolist() == (u[:, None] < thresholds[None, :]).sum(axis=1).tolist()


def test_tied_thresholds_and_the_comparisons_it_makes() -> None:
    """t = (5, 5, 3, 1): 3 comparisons per u (bit length of J = 4), not 4; ties and u = 0..6 checked by hand."""
    calls: list[int] = []

    def counting(a: NDArray[np.int64], b: NDArray[np.int64]) -> NDArray[np.int64]:
        calls.append(a.size)
        return _less(a, b)

    u = np.arange(7, dtype=np.int64)
    assert geometric_by_bisection(counting, u, [5, 5, 3, 1]).tolist() == [4, 3, 3, 2, 2, 0, 0]
    assert calls == [7, 7, 7]
