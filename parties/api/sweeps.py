"""``mpdp.sweep``: accuracy against epsilon over a grid, exact theory next to a measurement (Monte Carlo, or
live over a broker with ``live=True``).

The computation is :func:`mpdp.analysis.sweeps.sweep.sweep` (002 eqs. (1)-(6) per point, Clopper-Pearson
intervals, Bonferroni-corrected exact binomial verdicts), measured live by
:func:`mpdp.parties.session.live_sweep.live_sweep`; this module gives it the API's result type
(:class:`~mpdp.parties.api.result.Result`: ``to_dict``, ``to_frame``, ``plot``, notebook display).

Example:
    >>> import mpdp
    >>> r = mpdp.sweep("0.5:1:2", parties=11, rule="average", observer="central", samples=2000, seed=1)
    >>> [round(row["theoretical_accuracy"], 4) for row in r.rows()], r.consistent
    ([0.5825, 0.6608], True)

On the House votes (each bill's real votes, its voting members only; the central observer):

    >>> r = mpdp.sweep("1", dataset="house-votes-84", rule="average", samples=500, seed=1)
    >>> round(r.rows()[0]["theoretical_accuracy"], 4), round(r.rows()[0]["curator_accuracy"], 4), r.consistent
    (0.8162, 0.9638, True)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.sweeps.dataset_sweep import DatasetSweepPlan, plan_dataset_sweep
from mpdp.analysis.sweeps.grid import grid_of
from mpdp.analysis.sweeps.sweep import SweepOptions, SweepPlan, SweepResult, plan_sweep
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.guards import check_main_guard, run_blocking
from mpdp.parties.api.keywords import checked_keywords
from mpdp.parties.api.params import check_count
from mpdp.parties.api.result import Result
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.api.sweep_pool import POOL_START_SECONDS, most_processes, point_pool, point_processes
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.session.live_sweep import estimate_live_sweep, live_sweep
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import CostEstimate, check_time_limit, format_bytes, noun

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["SWEEP_TIME_LIMIT", "Sweep", "sweep", "sweep_estimate", "sweep_processes"]

#: Default time limit of a whole sweep, seconds (a sweep is many computations; a simulated session's: 1800).
SWEEP_TIME_LIMIT = 1800.0


@dataclass(frozen=True, repr=False)
class Sweep(Result):
    """A finished sweep: :attr:`result` (the points) and its ``--json`` document.

    Attributes:
        document: what ``mpdp sweep --json`` prints (``schema_version``, ``inputs``, ``points``, ...).
        result: the :class:`~mpdp.analysis.sweeps.sweep.SweepResult` (its ``points`` and ``to_csv``).
    """

    document: dict[str, Any]
    result: SweepResult

    @property
    def consistent(self) -> bool:
        """True when every point's measurement is consistent with its exact theory."""
        return self.result.consistent

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """One row per point (the fields of :class:`~mpdp.analysis.sweeps.sweep.SweepPoint`)."""
        return [asdict(p) for p in self.result.points]

    def summary(self) -> str:
        return repr(self.result)

    def draw(self, ax: Axes | None) -> Figure:
        """Theory curves and measured points with their intervals (:meth:`SweepResult.plot`)."""
        return self.result.plot(ax)


def sweep_processes(plan: SweepPlan | DatasetSweepPlan, jobs: int) -> tuple[int, str]:
    """The worker processes that run ``plan``'s points by the Monte Carlo engine for ``jobs`` asked, and why
    not ``jobs`` ("" when they are): :func:`~mpdp.parties.api.sweep_pool.point_processes` of its points and
    their estimated work (:meth:`SweepPlan.estimate`)."""
    points = plan.plan.tasks if isinstance(plan, DatasetSweepPlan) else plan.tasks
    return point_processes(jobs, len(points), plan.estimate().seconds)


def sweep_estimate(plan: SweepPlan | DatasetSweepPlan, *, live: bool = False, jobs: int = 1,
                   executor: bool = False) -> CostEstimate:
    """The up-front time and peak memory of running ``plan``, as its time limit is checked.

    Args:
        plan: from :func:`~mpdp.analysis.sweeps.sweep.plan_sweep` or
            :func:`~mpdp.analysis.sweeps.dataset_sweep.plan_dataset_sweep`.
        live: the live sessions' estimate (:func:`mpdp.parties.session.live_sweep.estimate_live_sweep`), else
            the Monte Carlo engine's on one core (:meth:`SweepPlan.estimate`) divided by the processes that run
            the points (:func:`~mpdp.parties.api.sweep_pool.point_processes`), plus a pool's start-up where
            there is one.
        jobs: worker processes asked for; executor: the points run on an executor of unknown width (counted as
            one).

    Returns:
        a :class:`~mpdp.protocols.numerics.cost.CostEstimate` (seconds of wall clock; bytes: a point's peak times
        the processes that run points at once, each may hold one), its alternative in keywords (``jobs=N``, ``time_limit=SECONDS``; the command line names them as its options).
    """
    points = plan.plan.tasks if isinstance(plan, DatasetSweepPlan) else plan.tasks
    if live:
        runs = f"{len(points):,} {noun(len(points), 'point')} x {points.samples:,} " + (
            noun(points.samples, "round") if isinstance(plan, SweepPlan) else f"repetitions of {len(plan.round_names):,} rounds")
        cost = estimate_live_sweep(plan)
        return CostEstimate("the live sweep", runs, cost.seconds, cost.peak_bytes,
                            "fewer points or samples, or time_limit=SECONDS")
    estimate = plan.estimate()
    processes = 1 if executor else sweep_processes(plan, jobs)[0]
    start = POOL_START_SECONDS if processes > 1 else 0.0
    more = "" if executor or jobs >= most_processes(len(points)) else "jobs=N, "  # only what would change it
    memory_alternative = "" if processes == 1 else (  # each process may hold its point's peak at the same time
        f"jobs=1 (each of the {processes} processes may hold {format_bytes(estimate.memory_bytes)} at once), "
        "or fewer samples")
    return dataclasses.replace(estimate, seconds=estimate.seconds / processes + start,
                               memory_bytes=estimate.memory_bytes * processes,
                               alternative=f"fewer points or samples, {more}or time_limit=SECONDS",
                               memory_alternative=memory_alternative)


@checked_keywords("mpdp.sweep", SweepOptions.__annotations__)
def sweep(
    epsilon: str | Sequence[float] | NDArray[np.float64],
    *,
    dataset: str | None = None,
    label_column: bool | None = None,
    live: bool = False,
    broker: str | BrokerSettings | None = None,
    workers: int | None = None,
    round_timeout: float = 60.0,
    executor: Executor | None = None,
    jobs: int = 1,
    time_limit: float | None = SWEEP_TIME_LIMIT,
    progress: Callable[[int, int], None] | None = None,
    **options: Unpack[SweepOptions],
) -> Sweep:
    """Exact accuracy of the optimal rules over a grid, next to its measurement: by the Monte Carlo engine
    (:func:`mpdp.analysis.sweeps.sweep.sweep`), or live over a broker (``live=True``:
    :func:`mpdp.parties.session.live_sweep.live_sweep`, one session per point, one after another).

    Args:
        epsilon: ``"LO:HI:STEPS"`` (spaced by ``scale``), one value, or the grid itself, nats.
        dataset: None (uniformly random inputs), or ``house-votes-84`` or a CSV path
            (:func:`mpdp.parties.session.datasets.load_dataset`): each point measured on the dataset's real
            inputs, one per round, by :func:`mpdp.analysis.sweeps.dataset_sweep.dataset_sweep` (the central observer;
            no ``parties``); ``samples`` privatizations per round (live: the session's repetitions).
        label_column: with a CSV dataset: its column 1 holds party labels (True) or votes (False); None guesses.
        options: ``parties``, ``delta``, ``function``, ``rule``, ``observer`` (one value or several each: the
            grid is their product), ``samples``, ``seed``, ``alpha``, ``scale``, ``protocol``: as
            :func:`mpdp.analysis.sweeps.sweep.plan_sweep`. Live, ``samples`` is each point's number of rounds
            (one privatization each).
        executor: as :func:`mpdp.analysis.sweeps.sweep.sweep` (not with ``jobs``).
        jobs: worker processes over the points (an integer >= 1; default 1: here), at most: capped at the
            points and the usable cores, and the points run here when their estimated work does not pay for a
            pool's start-up (:func:`sweep_processes`); the result is the same bit for bit whatever ``jobs``
            (``mpdp sweep --jobs``); Monte Carlo only.
        time_limit: seconds the sweep may be estimated to take (default 1800; None: no limit), on one core
            divided by the processes that run it (at most ``jobs``, the points and the usable cores; none when
            a pool's start-up would cost more than it saves: :func:`sweep_processes`), plus their start-up
            (:func:`sweep_estimate`): a sweep over it is refused before any point runs (``mpdp sweep
            --time-limit``).
        live: measure each point by a live session (parties in worker processes, over MQTT).
        broker: live only: None (``$MPDP_BROKER_URL``, else one broker of our own for the whole sweep),
            ``embedded``, ``mosquitto``, a URL of a running one, or :class:`~mpdp.broker.settings.BrokerSettings`.
        workers, round_timeout: live only: worker processes per session (None: one per core), seconds a
            round may stay open.
        progress: called as ``progress(0, total)``, then ``progress(done, total)`` as the work goes: in points
            (Monte Carlo), in rounds of every point (live).

    Returns:
        :class:`Sweep` (``to_dict()`` is ``mpdp sweep --json``; its ``source`` says ``live`` or
        ``monte-carlo``).

    Raises:
        ParameterError: a bad value, named with what is allowed (``epsilon`` not ``LO:HI:STEPS``; ``jobs`` not
            an integer >= 1, or with an executor or ``live``; ``time_limit`` not a number > 0; an
            executor, or a broker, workers or round_timeout without ``live``; live, the curator protocol
            with another function than majority, before any process starts; ``observer="party"`` or
            ``parties`` with a dataset... as the error says).
        DatasetError: an unknown dataset name that is no readable file, or a malformed CSV.
        SizeLimitError: as :func:`mpdp.analysis.sweeps.sweep.sweep`; a ``CostLimitError`` for a sweep estimated
            over ``time_limit`` or the machine's memory (:func:`sweep_estimate`).
        UnguardedMainError: live, from a script's top level without ``if __name__ == "__main__":``.
        TransportError, WorkerError: live: the broker or a session's worker process failed.
    """
    grid = grid_of(epsilon, options.get("scale", "log")) if isinstance(epsilon, str) else epsilon
    jobs = check_count("jobs", jobs)
    limit = check_time_limit(time_limit)
    if dataset is None and label_column is not None:
        raise ParameterError("label_column", label_column, "None without a CSV dataset")
    data = None if dataset is None else load_dataset(dataset, label_column)
    if not live:
        for name, value, default in (("broker", broker, None), ("workers", workers, None),
                                     ("round_timeout", round_timeout, 60.0)):
            if value != default:
                raise ParameterError(name, value, "the default without live=True (the Monte Carlo engine "
                                     "runs no broker or session)")
        if executor is not None and jobs != 1:
            raise ParameterError("jobs", jobs, "1 with an executor (the executor sets the parallelism)")
    elif executor is not None or jobs != 1:
        given: tuple[str, Any] = ("executor", executor) if executor is not None else ("jobs", jobs)
        raise ParameterError(*given, f"{'None' if executor is not None else 1} with live=True: live points "
                             "run one after another over one broker (each session's parties already use every core)")
    else:
        SimulationConfig.of(None, {"workers": workers, "round_timeout": round_timeout}, "mpdp.sweep")  # as simulate's
    plan = plan_sweep(grid, **options) if data is None else plan_dataset_sweep(
        grid, data.bits, data.round_names, dataset=data.name, **options)
    sweep_estimate(plan, live=live, jobs=jobs, executor=executor is not None).check(
        limit, memory_here=executor is None)  # an executor's points use its workers' memory
    if not live:
        with point_pool(sweep_processes(plan, jobs)[0]) as pool:
            result = plan.run(executor if pool is None else pool, progress)
        return Sweep(document=result.to_dict(), result=result)
    settings = broker if isinstance(broker, BrokerSettings) else BrokerSettings.from_url(broker)
    check_main_guard("mpdp.sweep")
    result = run_blocking(live_sweep(plan, settings, workers=workers, round_timeout=round_timeout,
                                     progress=progress))
    return Sweep(document=result.to_dict(), result=result)
