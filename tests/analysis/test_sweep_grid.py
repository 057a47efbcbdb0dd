"""A sweep's grid, points and seeds are made when read: a 10^7-point grid is planned, estimated and refused
in bounded memory, and what the lazy plan gives is what the materialised one gave."""

from __future__ import annotations

import importlib
import itertools
import sys
import tracemalloc
from concurrent.futures import Future

import numpy as np
import pytest

from mpdp.analysis.sweeps.grid import EpsilonGrid, SeedChildren, grid_of, grid_range
from mpdp.analysis.sweeps.sweep import WINDOW, SweepTask, plan_sweep, run_points
from mpdp.protocols.errors import CostLimitError, ParameterError
from mpdp.protocols.numerics.cost import IMPORT_SECONDS


@pytest.mark.parametrize(("low", "high", "steps"), [(0.05, 2.0, 20), (0.1, 3.0, 12), (0.01, 7.0, 1000),
                                                    (1.7, 3.3, 97), (0.3, 0.3, 5)])
@pytest.mark.parametrize("scale", ["log", "linear"])
def test_the_grid_is_numpys_bit_for_bit_whichever_stretch_is_read(low, high, steps, scale) -> None:
    grid = grid_range(low, high, steps, scale)
    reference = np.geomspace(low, high, steps) if scale == "log" else np.linspace(low, high, steps)
    np.testing.assert_array_equal(np.asarray(grid), reference)
    np.testing.assert_array_equal(list(grid), reference)  # iterated in chunks
    for i in (0, steps // 3, steps - 1, -1):
        assert grid[i] == reference[i]
    np.testing.assert_array_equal(grid.values(steps // 2, steps), reference[steps // 2:])
    assert grid[1:4] == reference[1:4].tolist()
    with pytest.raises(IndexError):
        grid[steps]


def test_seed_children_are_the_spawned_ones() -> None:
    spawned = np.random.SeedSequence(7).spawn(50)
    children = SeedChildren(7, 50)
    assert len(children) == 50
    for mine, theirs in zip(children, spawned, strict=True):
        np.testing.assert_array_equal(mine.generate_state(8), theirs.generate_state(8))
    np.testing.assert_array_equal(children[-1].generate_state(8), spawned[-1].generate_state(8))


def test_the_lazy_points_are_the_product_of_the_axes_in_grid_order() -> None:
    grid = [0.5, 1.0, 2.0]
    plan = plan_sweep(grid, parties=[5, 7], delta=[0.0, 0.01], function=["majority", "xor"], samples=10)
    expected = [SweepTask(e, d, k, f, r, o, 10) for f, k, d, r, o, e in itertools.product(
        ["majority", "xor"], [5, 7], [0.0, 0.01], ["average", "worst-case"], ["central", "party"], grid)]
    assert list(plan.tasks) == expected and len(plan.tasks) == 96
    assert [plan.tasks[i] for i in range(-96, 96)] == expected + expected
    assert plan.tasks.settings() == tuple(expected[::3])
    assert plan.inputs["epsilon"] == grid and list(plan.inputs)[0] == "epsilon"


def test_ten_million_epsilons_are_estimated_and_refused_in_bounded_memory() -> None:
    """``--epsilon 0.1:2:10000000`` grew to 16.9 GB before it was refused: now its plan holds the grid's three
    numbers; the estimate is 10^7 times the points of one epsilon (each alone), well under 100 MB peak."""
    for module in IMPORT_SECONDS:  # paid: the first imports, counted once a sweep, are not what is compared
        importlib.import_module(module)
    single = sum(plan_sweep([0.1], parties=101, rule=r, observer=o).estimate().seconds
                 for r in ("average", "worst-case") for o in ("central", "party"))
    grid = grid_of("0.1:2:10000000")
    tracemalloc.start()
    try:
        plan = plan_sweep(grid, parties=101)
        estimate = plan.estimate()
        with pytest.raises(CostLimitError, match=r"40,000,000 points x 100,000 samples"):
            estimate.check()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(plan.tasks) == 4 * 10**7 and isinstance(plan.tasks.grid, EpsilonGrid)
    assert estimate.seconds == pytest.approx(10**7 * single, rel=1e-9)
    assert peak < 20e6  # the tasks of the materialised plan: ~100 bytes each, 4 GB
    assert plan.tasks[-1].epsilon == 2.0 and plan.tasks[10**7].epsilon == 0.1


class _Counting:
    """An executor that runs submissions at once and records how many were outstanding at most."""

    def __init__(self) -> None:
        self.outstanding = self.most = 0

    def submit(self, fn, *args):
        self.outstanding += 1
        self.most = max(self.most, self.outstanding)
        future: Future = Future()
        future.set_result(fn(*args))
        original = future.result

        def result(timeout=None):
            self.outstanding -= 1
            return original(timeout)
        future.result = result  # type: ignore[method-assign]
        return future


def test_the_first_imports_count_once_not_once_a_point(monkeypatch) -> None:
    """A cold process estimated 1.1 s of first imports a point (581 days for 10^7 points instead of 60): the
    imports a sweep's points load count once. Warm, n points cost n times one; with scipy.optimize not yet
    imported, its IMPORT_SECONDS are added once whatever n."""
    for module in IMPORT_SECONDS:
        importlib.import_module(module)
    options = dict(parties=15, rule="worst-case", observer="central", samples=100)
    warm = {n: plan_sweep(grid_range(0.5, 2.0, n), **options).estimate().seconds for n in (1, 1000)}
    assert warm[1000] == pytest.approx(1000 * warm[1])
    monkeypatch.delitem(sys.modules, "scipy.optimize")
    for n in (1, 1000):
        cold = plan_sweep(grid_range(0.5, 2.0, n), **options).estimate().seconds
        assert cold == pytest.approx(warm[n] + IMPORT_SECONDS["scipy.optimize"])


def test_an_executor_holds_a_window_of_points_not_all_of_them() -> None:
    plan = plan_sweep(grid_range(0.1, 2.0, 1000), parties=5, rule="average", observer="central", samples=1)
    executor = _Counting()
    seen = run_points(_epsilon_of, plan, executor, None)  # type: ignore[arg-type]
    assert seen == list(plan.tasks.grid) and executor.most == WINDOW < 1000


def _epsilon_of(task: SweepTask, seed: np.random.SeedSequence) -> float:
    return task.epsilon


def test_a_bad_grid_is_refused_by_name() -> None:
    with pytest.raises(ParameterError, match="steps"):
        grid_range(0.1, 2.0, 0)
    with pytest.raises(ParameterError, match="log scale"):
        grid_range(0.0, 2.0, 3)
    assert len(grid_of("0.1:2:1000000000000")) == 10**12  # a trillion steps: three numbers
