"""Accuracy against epsilon on a dataset's real inputs (the House votes): exact theory per bill, Monte Carlo.

The sweep of :mod:`mpdp.analysis.sweeps.sweep` measures uniformly random inputs; this one takes the inputs of a
dataset, ``bits`` (k x R, int8; 1, 0 or -1 for a party that takes no part), one input per round (a bill),
as ``mpdp simulate --dataset`` runs it: in round b only the n_b participating parties (bit != -1) run
randomized response at (epsilon, delta), and the central observer applies its optimal rule of 002 for n_b
identical parties (average: eq. (5); worst case: eq. (6)) of a symmetric f. Per point
(epsilon x delta x f x rule kind; the central observer only):

* theory, exact: per bill, the rule's accuracy on the bill's real input x_b
  (:func:`mpdp.analysis.theory.accuracy.input_accuracy`, the term of 002 eq. (3)); ``theoretical_accuracy`` is
  its mean over the bills (what is measured), ``theoretical_worst_case`` its minimum over the bills (the
  worst bill: a worst case over the dataset's inputs, not eq. (3)'s over all 2^n inputs);
* ``curator_accuracy`` (a binary f): the trusted curator's exact accuracy on each bill (001's optimal central
  mechanism for n_b votes, :attr:`mpdp.protocols.colorings.majority_mechanism.CentralMechanism.truthful` at the
  bill's count of ones), averaged over the bills; ``protocol="curator"`` measures the curator itself;
* measurement: per bill, ``samples`` independent privatizations of the real votes: the observed count of
  reported ones is Bin(a_b, p) + Bin(n_b - a_b, 1 - p) (four-output: the count classes of
  :mod:`mpdp.analysis.statistics.monte_carlo`), decided by the rule's table on count classes
  (:meth:`mpdp.analysis.statistics.monte_carlo.CountTable.correct_on_input`); the curator's right releases are
  Bin(samples, truthful). ``successes`` and ``samples`` of a point add up over the bills (each bill has
  the same ``samples``), so ``empirical_accuracy`` is the mean over bills of the per-bill rates;
* verdict: per bill the exact binomial test of its successes against its exact theory
  (:func:`mpdp.analysis.statistics.stats.consistency_test`) at level alpha / (points x bills) (Bonferroni over every
  bill of every point: a correct engine has a point flagged with probability at most alpha); a point is
  consistent iff all its bills are. Its ``p_value`` is the Bonferroni-adjusted min(1, bills x smallest
  per-bill p-value), so that, as in the uniform sweep, consistent iff p_value >= alpha / points;
* interval of the mean: the mean over bills of the per-bill Clopper-Pearson bounds at level
  1 - alpha / bills. These intervals hold simultaneously with probability >= 1 - alpha (Bonferroni), and
  when every bill's rate lies in its interval the mean of the rates lies between the means of the bounds:
  the interval of the mean has level >= 1 - alpha.

:meth:`DatasetSweepPlan.result` turns per-bill counts into these verdicts for any source: the live sweep
(:mod:`mpdp.parties.session.live_sweep`, ``mpdp sweep --dataset --live``) measures the same points by one
session per point over the dataset's rounds.

Randomness: point i draws from ``default_rng(SeedSequence(seed).spawn(points)[i])`` (the bills one after
another), as :func:`mpdp.analysis.sweeps.sweep.plan_sweep` lays it out: the same result whatever the executor.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, replace
from typing import Unpack

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.statistics.monte_carlo import count_table
from mpdp.analysis.statistics.stats import measured_verdict
from mpdp.analysis.sweeps.sweep import (
    SweepOptions,
    SweepPlan,
    SweepPoint,
    SweepResult,
    SweepTask,
    binary_curator,
    plan_sweep,
    run_points,
)
from mpdp.analysis.theory.accuracy import input_accuracy
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.numerics.cost import CostEstimate
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.table_rule import TableRule

__all__ = ["BillTheory", "DatasetSweepPlan", "bill_theory", "dataset_sweep", "plan_dataset_sweep"]

#: The value of ``bits`` for a party that takes no part in a round.
ABSENT = -1


@dataclass(frozen=True, slots=True)
class BillTheory:
    """Exact accuracies of one point on every bill (round) of the dataset.

    Attributes:
        accuracy: float64 (R,): per bill, P(decision = f(x_b)) of the point's decision (the observer's rule,
            or the curator's release).
        curator: float64 (R,): per bill, the trusted curator's P(release = f(x_b)) (a binary f), else None.
    """

    accuracy: NDArray[np.float64]
    curator: NDArray[np.float64] | None


def _check_bits(bits: NDArray[np.integer], round_names: Sequence[str]) -> NDArray[np.int8]:
    array = np.asarray(bits)
    if array.ndim != 2 or array.shape[0] < 1 or array.shape[1] < 1 or not np.isin(array, (0, 1, ABSENT)).all():
        raise ParameterError("bits", f"shape {array.shape}", "a (k, R) array of 1, 0 or -1 (takes no part), "
                             "k, R >= 1")
    if len(round_names) != array.shape[1]:
        raise ParameterError("round_names", len(round_names), f"one name per round ({array.shape[1]})")
    empty = np.flatnonzero((array == ABSENT).all(axis=0))
    if empty.size:
        raise ParameterError("round", round_names[int(empty[0])], "a round with at least one participant")
    return array.astype(np.int8)


def _counts(bits: NDArray[np.int8]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Per round: participants n_b and ones a_b, int64 (R,) each."""
    return (bits != ABSENT).sum(axis=0).astype(np.int64), (bits == 1).sum(axis=0).astype(np.int64)


def _rules(task: SweepTask, sizes: NDArray[np.int64]) -> dict[int, TableRule]:
    """The central observer's rule of the point's kind for each participant count, built once per count."""
    f = parse_function(task.function)
    rules = {}
    for n in sorted({int(v) for v in sizes}):
        rule = decision_rule([RandomizedResponse(task.epsilon, task.delta)] * n, f, np.eye(f.output_size(n)),
                             kind=task.rule)
        assert isinstance(rule, TableRule)  # plan_sweep checked that an exact engine holds every count
        rules[n] = rule
    return rules


def _truths(task: SweepTask, sizes: NDArray[np.int64], ones: NDArray[np.int64]) -> list[int]:
    f = parse_function(task.function)
    truths = []
    for n, a in zip(sizes, ones):
        values = f.count_values(int(n))
        assert values is not None  # plan_sweep admits symmetric functions only
        truths.append(int(values[int(a)]))
    return truths


def _curator(task: SweepTask, sizes: NDArray[np.int64], ones: NDArray[np.int64]) -> NDArray[np.float64] | None:
    """Per bill, the trusted curator's P(release = f(x_b)) by 001's optimal central mechanism of the bill's
    participants (a binary f), else None."""
    truthful = {}
    for n in sorted({int(v) for v in sizes}):
        curator = binary_curator(task.function, n, task.epsilon, task.delta)
        if curator is None:
            return None
        truthful[n] = curator.truthful
    return np.array([truthful[int(n)][int(a)] for n, a in zip(sizes, ones)])


def _theory(task: SweepTask, bits: NDArray[np.int8], rules: dict[int, TableRule] | None) -> BillTheory:
    sizes, ones = _counts(bits)
    curator = _curator(task, sizes, ones)
    if rules is None:  # the curator protocol: its release is the decision
        assert curator is not None  # plan_sweep: the curator decides a binary function
        return BillTheory(curator, curator)
    f = parse_function(task.function)
    accuracy = np.array([input_accuracy(rules[int(n)], f, np.eye(f.output_size(int(n))), bits[bits[:, b] != ABSENT, b])
                         for b, n in enumerate(sizes)])
    return BillTheory(accuracy, curator)


def bill_theory(task: SweepTask, bits: NDArray[np.integer]) -> BillTheory:
    """The exact accuracies of one point on every bill (:class:`BillTheory`).

    Args:
        task: a point as :func:`plan_dataset_sweep` made it (central observer, or the curator).
        bits: int8 (k, R): 1, 0, or -1 for a party that takes no part; every round with a participant.

    Raises:
        ParameterError: bits not so.
    """
    data = _check_bits(bits, [str(b) for b in range(np.asarray(bits).shape[-1])])
    return _theory(task, data, None if task.rule == "curator" else _rules(task, _counts(data)[0]))


def _run_point(task: SweepTask, seed: np.random.SeedSequence,
               bits: NDArray[np.int8]) -> tuple[BillTheory, NDArray[np.int64]]:
    """Theory and Monte Carlo successes per bill of one point (a top-level function: executors pickle it)."""
    rng = np.random.default_rng(seed)
    sizes, ones = _counts(bits)
    if task.rule == "curator":
        theory = _theory(task, bits, None)
        return theory, rng.binomial(task.samples, theory.accuracy).astype(np.int64)
    rules = _rules(task, sizes)
    successes = []
    for n, a, truth in zip(sizes, ones, _truths(task, sizes, ones)):
        table = count_table(rules[int(n)])
        assert table is not None  # a symmetric-engine table on one group of n_b identical parties
        successes.append(table.correct_on_input((int(a),), truth, task.samples, rng))
    return _theory(task, bits, rules), np.array(successes, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class DatasetSweepPlan:
    """A checked sweep over a dataset (from :func:`plan_dataset_sweep`).

    Attributes:
        plan: the points and their seeds (:class:`mpdp.analysis.sweeps.sweep.SweepPlan`; ``parties`` = k, the
            dataset's rows; its inputs name the dataset).
        bits: int8 (k, R), the dataset's bits (-1: takes no part); round_names: R names.
    """

    plan: SweepPlan
    bits: NDArray[np.int8]
    round_names: tuple[str, ...]

    def estimate(self) -> CostEstimate:
        """The up-front time (one core, every point) and peak memory of the Monte Carlo sweep: per point a
        rule per distinct participant count, the exact theory and ``samples`` draws per round
        (:func:`mpdp.analysis.sweeps.sweep_cost.sweep_cost`)."""
        return self.plan.estimate()

    def run(self, executor: Executor | None = None,
            progress: Callable[[int, int], None] | None = None) -> SweepResult:
        """Measure every point on every round by the Monte Carlo engine
        (:func:`mpdp.analysis.sweeps.sweep.run_points`: here, or on ``executor``) and give the
        :class:`SweepResult` (:meth:`result`); ``progress`` as :func:`dataset_sweep`'s."""
        return self.result(run_points(_run_point, self.plan, executor, progress, self.bits), "monte-carlo")

    def result(self, measured: Sequence[tuple[BillTheory, NDArray[np.int64]]], source: str) -> SweepResult:
        """The :class:`SweepResult` of the measured points (module docstring: per-bill tests at level
        alpha / (points x bills), the interval of the mean from per-bill intervals at 1 - alpha / bills).

        Args:
            measured: per task, in order, its per-bill theory and successes (int64 (R,), each out of
                ``task.samples``). source: ``monte-carlo`` or ``live``.

        Raises:
            ParameterError: not one measurement per task, or not one count per bill.
        """
        tasks, alpha = self.plan.tasks, self.plan.alpha
        bills = len(self.round_names)
        if len(measured) != len(tasks):
            raise ParameterError("measured", len(measured), f"one measurement per point ({len(tasks)})")
        points = []
        for task, (theory, successes) in zip(tasks, measured):
            if np.shape(successes) != (bills,):
                raise ParameterError("successes", np.shape(successes), f"one count per bill ({bills})")
            n = task.samples
            verdicts = [measured_verdict(int(s), n, float(t), alpha=alpha, interval_alpha=alpha / bills,
                                         rounds=len(tasks) * bills) for s, t in zip(successes, theory.accuracy)]
            bounds = np.array([(v.ci_low, v.ci_high) for v in verdicts])
            p_values = [v.test.p_value for v in verdicts]
            p_value = min(1.0, bills * min(p_values))
            total = int(np.sum(successes))
            points.append(SweepPoint(
                task.epsilon, task.delta, task.parties, task.function, task.rule, "central",
                float(theory.accuracy.mean()), float(theory.accuracy.min()),
                None if theory.curator is None else float(theory.curator.mean()),
                total / (n * bills), total, n * bills, float(bounds[:, 0].mean()), float(bounds[:, 1].mean()),
                p_value, all(v.test.consistent for v in verdicts)))
        return SweepResult(tuple(points), self.plan.inputs, alpha, source)


def plan_dataset_sweep(
    epsilon: Sequence[float] | NDArray[np.float64],
    bits: NDArray[np.integer],
    round_names: Sequence[str],
    *,
    dataset: str,
    **options: Unpack[SweepOptions],
) -> DatasetSweepPlan:
    """Check a dataset sweep's arguments and lay out its points and their seeds.

    Args:
        epsilon: the grid, nats. bits: int8 (k, R): 1, 0, or -1 for a party that takes no part.
        round_names: R names (the bills). dataset: the dataset's name or path (recorded in ``inputs``).
        options: as :func:`mpdp.analysis.sweeps.sweep.plan_sweep`, except ``parties`` (the dataset's k) and
            ``observer``: ``central`` only (default).

    Raises:
        ParameterError: bits not a (k, R) array of 1/0/-1, a round with no participant, ``parties`` given,
            an observer other than ``central``; or as :func:`mpdp.analysis.sweeps.sweep.plan_sweep`.
        SizeLimitError: as :func:`mpdp.analysis.sweeps.sweep.plan_sweep` at the rounds' participant counts (the
            sizes whose rules are solved; the worst-case LP checked at each distinct count).
    """
    data = _check_bits(bits, round_names)
    if "parties" in options:
        raise ParameterError("parties", options["parties"], "none with a dataset (its rows are the parties)")
    observer = options.get("observer")
    observers = [observer] if isinstance(observer, str) else list(observer or [])
    if any(o != "central" for o in observers):
        raise ParameterError("observer", ",".join(map(str, observers)), "central with a dataset (a party's view "
                             "of a bill depends on which member it is; not defined for a dataset sweep)")
    if options.get("protocol", "rr") == "rr":
        options["observer"] = "central"
    options["parties"] = int(data.shape[0])
    sizes, _ = _counts(data)
    plan = plan_sweep(epsilon, **options, solved=sorted({int(n) for n in sizes}))
    settings = plan.settings | {"dataset": dataset, "rounds": list(round_names),
                                "participants": [int(n) for n in sizes]}
    return DatasetSweepPlan(replace(plan, settings=settings), data, tuple(round_names))


def dataset_sweep(
    epsilon: Sequence[float] | NDArray[np.float64],
    bits: NDArray[np.integer],
    round_names: Sequence[str],
    *,
    dataset: str,
    executor: Executor | None = None,
    progress: Callable[[int, int], None] | None = None,
    **options: Unpack[SweepOptions],
) -> SweepResult:
    """Exact accuracy of the central observer's optimal rules on a dataset's real inputs, against Monte Carlo
    privatizations of those inputs, over a grid (module docstring).

    Args:
        epsilon, bits, round_names, dataset, options: as :func:`plan_dataset_sweep` (``samples``: per bill).
        executor: a :class:`concurrent.futures.Executor` to run points on; None runs them here.
        progress: called as ``progress(0, total)`` once the inputs are checked, then ``progress(done, total)``
            after each point.

    Returns:
        a :class:`mpdp.analysis.sweeps.sweep.SweepResult` (one point per setting; inputs name the dataset).

    Raises:
        ParameterError, SizeLimitError: as :func:`plan_dataset_sweep`.

    Example:
        >>> import numpy as np
        >>> bits = np.array([[1, 0], [1, 1], [0, -1]], dtype=np.int8)
        >>> r = dataset_sweep([1.0], bits, ["a", "b"], dataset="toy", rule="average", samples=2000, seed=1)
        >>> round(r.points[0].theoretical_accuracy, 4), r.consistent
        (0.7218, True)
    """
    return plan_dataset_sweep(epsilon, bits, round_names, dataset=dataset, **options).run(executor, progress)
