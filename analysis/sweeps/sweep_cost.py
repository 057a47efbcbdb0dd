"""The up-front cost of a sweep (:mod:`mpdp.analysis.sweeps.sweep`, :mod:`mpdp.analysis.sweeps.dataset_sweep`), from the
work its points will do, stated (and, for one exact rule too large, refused) before any point runs.

A point of the rr protocol, for each number n of participants it solves (the sweep's k, or each distinct
participant count of a dataset's rounds), builds the observer's exact rule with the symmetric engine
(:func:`mpdp.protocols.decision.engine_cost.symmetric_rule_cost`; the worst-case kind also solves its LP,
:func:`mpdp.protocols.decision.worst_case.symmetric_lp_cost`), then evaluates its exact accuracy once per input it
is measured on (uniform inputs: once, :func:`mpdp.analysis.theory.accuracy.rule_accuracy`; a dataset: once per
round, :func:`mpdp.analysis.theory.accuracy.input_accuracy`, the engine tables built again and every input class
evaluated: :data:`DATASET_INPUT_RULES` rules' worth), and draws ``samples`` repetitions per input on the
count-table path of :mod:`mpdp.analysis.statistics.monte_carlo` (per repetition
:data:`~mpdp.analysis.theory.monte_carlo_cost.REPETITION_SECONDS` and one group's draws,
:data:`~mpdp.analysis.theory.monte_carlo_cost.PURE_DRAW_SECONDS` or
:data:`~mpdp.analysis.theory.monte_carlo_cost.FOUR_DRAW_SECONDS`: the constants of ``mpdp accuracy``'s Monte Carlo
estimate). A curator point costs its draws only (001's mechanism is O(k)).

The exact engine's time and memory are :func:`mpdp.protocols.decision.engine_cost.symmetric_rule_cost`'s
(its calibration there). Whole sweeps of 3 points
(epsilon 0.5, 1, 2), measured / estimate over two runs under different load: House (16 bills, 13
distinct participant counts) sum average 2.2 and 2.2 (13 s the second time), majority both rules 1.9
and 1.1, xor and and average 1.8 and 0.65, sum worst-case on its first 120 members 1.45 and 1.9 (106 s),
the curator 0.47 and 0.76; uniform majority at k = 101 and 435 both rules 0.97 and 1.3, sum at k = 200
average 1.55 and 2.4, sum at k = 60 worst-case 1.2 and 1.3 (the first run counted a round's accuracy as
one rule: :data:`DATASET_INPUT_RULES` 2 since).
Memory: the largest point's exact rule, or the Monte Carlo's batches
(:data:`~mpdp.analysis.theory.monte_carlo_cost.MEMORY_BYTES`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from mpdp.analysis.theory.monte_carlo_cost import (
    FOUR_DRAW_SECONDS,
    MEMORY_BYTES,
    PURE_DRAW_SECONDS,
    REPETITION_SECONDS,
    SETUP_SECONDS,
)
from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.protocols.decision.factors import lazy_imports, symmetric_groups
from mpdp.protocols.decision.worst_case import symmetric_lp_cost
from mpdp.protocols.functions import parse_function
from mpdp.protocols.numerics.cost import CostEstimate, import_seconds, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

if TYPE_CHECKING:
    from mpdp.analysis.sweeps.sweep import SweepTask, SweepTasks

__all__ = ["DATASET_INPUT_RULES", "check_exact_rules", "distinct_problems", "sweep_cost"]

#: Exact rules' worth of one round's exact accuracy on a dataset (the problem built again, every input
#: class evaluated: :func:`mpdp.analysis.theory.accuracy.input_accuracy`); measured, module docstring.
DATASET_INPUT_RULES = 2.0


def _point_seconds(task: SweepTask, rounds: Sequence[int], per_input: float) -> tuple[float, float]:
    """Seconds and peak bytes of one point that solves each distinct size of ``rounds`` once and measures
    one input per entry of ``rounds``, its exact accuracy there costing ``per_input`` exact rules."""
    draws = task.samples * len(rounds) * (REPETITION_SECONDS + (PURE_DRAW_SECONDS if task.delta == 0
                                                                   else FOUR_DRAW_SECONDS))
    if task.rule == "curator":
        return SETUP_SECONDS + draws, MEMORY_BYTES
    f = parse_function(task.function)
    observer = None if task.observer == "central" else 0
    seconds, memory = SETUP_SECONDS + draws, MEMORY_BYTES
    for n in sorted(set(rounds)):
        mechanisms = [RandomizedResponse(task.epsilon, task.delta)] * n
        exact = symmetric_rule_cost(mechanisms, f, observer, first_imports=False)  # sweep_cost counts them once
        lp = symmetric_lp_cost(mechanisms, f, observer, first_imports=False) if task.rule == "worst-case" else None
        for cost, times in ((exact, 1 + per_input * rounds.count(n)), (lp, 1)):  # rule, accuracy per input, LP
            if cost is not None:
                seconds += cost.seconds * times
                memory = max(memory, cost.memory_bytes)
    return seconds, memory


def _first_imports(task: SweepTask, sizes: Sequence[int]) -> set[str]:
    """The modules a point of ``task``'s setting loads on first use (what
    :func:`~mpdp.protocols.decision.engine_cost.symmetric_rule_cost` and
    :func:`~mpdp.protocols.decision.worst_case.symmetric_lp_cost` count when not ``first_imports=False``)."""
    if task.rule == "curator":
        return set()
    modules = {"scipy.optimize"} if task.rule == "worst-case" else set()
    for n in set(sizes):
        groups = symmetric_groups([RandomizedResponse(task.epsilon, task.delta)] * n, parse_function(task.function),
                                  None if task.observer == "central" else 0)
        modules |= {m for g in groups or () for m in lazy_imports(g.n, g.mechanism)}
    return modules


def sweep_cost(tasks: SweepTasks, rounds: Sequence[int] | None = None) -> CostEstimate:
    """The estimated time (on one core) and peak memory of running every point of a sweep, from one
    estimate per setting (:meth:`~mpdp.analysis.sweeps.sweep.SweepTasks.settings`: a point's cost does not
    depend on its epsilon) times the grid's length: a grid of 10^7 epsilons is estimated at once. The first
    imports of what the points load (scipy.signal, scipy.stats, scipy.optimize: ~0.4 s each) count once,
    not once a point (a cold process estimated a 10^7-point grid at 581 days, 60 of them its work).

    Args:
        tasks: the points (:attr:`mpdp.analysis.sweeps.sweep.SweepPlan.tasks`).
        rounds: a dataset's participant count per round (each point measures every round), or None:
            each point measures uniform inputs of its k parties.

    Returns:
        a :class:`mpdp.protocols.numerics.cost.CostEstimate`: seconds summed over the points, bytes the largest
        point's.

    Raises:
        SizeLimitError: a four-output group larger than a likelihood factor holds (as the sweep's own checks).
    """
    seconds, memory, modules = 0.0, 0.0, set()
    for task in tasks.settings():
        sizes = [task.parties] if rounds is None else list(rounds)
        s, m = _point_seconds(task, sizes, 1.0 if rounds is None else DATASET_INPUT_RULES)
        seconds += s * len(tasks.grid)
        memory = max(memory, m)
        modules |= _first_imports(task, sizes)
    seconds += import_seconds(modules)  # once in the process that runs the points, not once a point
    points = len(tasks)
    size = f"{points:,} {noun(points, 'point')}" + ("" if rounds is None else f" x {len(rounds):,} {noun(len(rounds), 'round')}")
    return CostEstimate("the sweep", f"{size} x {tasks.samples:,} samples", seconds, memory,
                        "fewer points or samples, or jobs=N")


def check_exact_rules(tasks: Sequence[SweepTask], sizes: Sequence[int] | None = None) -> None:
    """Refuse, before any point runs, a point whose exact rule alone is estimated over the default time
    limit or the machine's memory (:meth:`mpdp.protocols.numerics.cost.CostEstimate.check`), at every number of
    participants it solves (``sizes``; None: its k).

    Raises:
        CostLimitError: naming the estimate and the alternative.
    """
    for task, n in distinct_problems((t for t in tasks if t.rule != "curator"), sizes):
        cost = symmetric_rule_cost([RandomizedResponse(task.epsilon, task.delta)] * n,
                                   parse_function(task.function), None if task.observer == "central" else 0)
        if cost is not None:
            dataclasses.replace(cost, task=f"the exact rule of {task.function}").check()


def distinct_problems(tasks: Iterable[SweepTask], sizes: Sequence[int] | None) -> Iterator[tuple[SweepTask, int]]:
    """Each ``(task, participants)`` once per (function, participants, delta, observer): the size of an exact
    problem (rule, LP) depends on these, not on epsilon. ``sizes``: the numbers of participants a point solves
    (None: its k)."""
    seen: set[tuple[str, int, float, str]] = set()
    for task in tasks:
        for n in (task.parties,) if sizes is None else sizes:
            key = (task.function, n, task.delta, task.observer)
            if key not in seen:
                seen.add(key)
                yield task, n
