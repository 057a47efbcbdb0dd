"""The points of a sweep measured live: one session per point over one broker, one point after another.

A sweep point (:class:`mpdp.analysis.sweeps.sweep.SweepTask`: epsilon, delta, k, f, rule, observer, samples)
becomes one live session of the runner (:func:`mpdp.parties.session.runner.run_async`, what
``mpdp simulate`` runs): k parties with uniformly random bits over ``samples`` rounds, each party
privatizing its bit once per round (one repetition), so that every round is one independent draw of a
uniform input and of the privatization, and the round's decision is right with probability the rule's
average accuracy (002 eq. (1)): the successes over the rounds are Binomial(samples, theory), the same
law as the Monte Carlo engine's, tested the same way (:meth:`mpdp.analysis.sweeps.sweep.SweepPlan.result`).

* observer ``central``: the central observer's decisions (its optimal rule of the point's kind);
* observer ``party``: party 0's own decisions (the parties decide too, each with its optimal rule of the
  same kind from the published transcript and its own bit, 002 eqs. (2), (4));
* rule ``curator``: the curator protocol: the parties seal their bits to a trusted curator, who releases
  f by 001's optimal central mechanism (:func:`mpdp.protocols.colorings.majority_mechanism.central_mechanism`, the
  same one the Monte Carlo curator samples); the release is the decision. The live curator
  (:mod:`mpdp.parties.curator`) releases the functions of
  :data:`mpdp.parties.curator.session.CENTRAL_FUNCTIONS`; others (one voter's sum, binary for the Monte
  Carlo curator) are refused before any process starts (:func:`check_live_plan`; their curator is measured
  by the Monte Carlo engine).

On a dataset (:class:`mpdp.analysis.sweeps.dataset_sweep.DatasetSweepPlan`, ``mpdp sweep --dataset --live``) a
point is one session over the dataset's rounds, as ``mpdp simulate --dataset`` runs it: each round's
participating parties privatize their real bit ``samples`` times (``repetitions = samples``), the central
observer (or the curator) decides each repetition, and the right decisions of each round are
Binomial(samples, that round's exact theory), tested per round as the Monte Carlo engine's
(:meth:`DatasetSweepPlan.result`).

Seeds: point i's ``SeedSequence`` (:attr:`mpdp.analysis.sweeps.sweep.SweepPlan.seeds`) gives a 63-bit root seed of
its session (:func:`session_seed`), whose :class:`mpdp.parties.rounds.seeds.SeedTree` draws the bits
(:meth:`SeedTree.dataset`), the privatizations, the randomized decisions and the curator's releases: the
same sweep seed gives the same points. One broker serves every point (started once, or the running one
at ``broker``); each point's worker processes start and stop with its session.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.sweeps.dataset_sweep import BillTheory, DatasetSweepPlan, bill_theory
from mpdp.analysis.sweeps.sweep import PointTheory, SweepPlan, SweepResult, SweepTask, point_theory
from mpdp.broker.launch import open_broker
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.ballots.central import check_central_function
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RunOutcome
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.session.datasets import random_dataset
from mpdp.parties.session.estimate import Machine, RunEstimate, estimate_run
from mpdp.parties.session.runner import ProgressCallback, run_async
from mpdp.protocols.errors import ParameterError, WorkerError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, zero_one_rules

__all__ = ["check_live_plan", "estimate_live_sweep", "live_sweep", "session_seed"]


def check_live_plan(plan: SweepPlan | DatasetSweepPlan) -> None:
    """Refuse a plan the live sessions cannot measure: the curator protocol with a function the live
    curator does not release (:func:`mpdp.parties.curator.session.check_central_function`).

    Raises:
        ParameterError: names the function, the allowed ones and the alternative (the Monte Carlo
            curator, without live).
    """
    for task in (plan.plan if isinstance(plan, DatasetSweepPlan) else plan).tasks:
        if task.rule == "curator":
            try:
                check_central_function(parse_function(task.function).name, "curator")
            except ParameterError as exc:
                raise ParameterError("function", task.function, f"{exc.allowed} live",
                                     hint="the Monte Carlo curator measures it, without --live") from None


def session_seed(seed: np.random.SeedSequence) -> int:
    """The root seed (an integer in [0, 2^63)) of the session measuring the point of ``seed``."""
    return int(seed.generate_state(1, np.uint64)[0] >> np.uint64(1))


def estimate_live_sweep(plan: SweepPlan | DatasetSweepPlan) -> RunEstimate:
    """The up-front estimate of a live sweep: the sum of its sessions' times
    (:func:`mpdp.parties.session.estimate.estimate_run` of k parties, ``samples`` rounds of one repetition;
    on a dataset, its R rounds of ``samples`` repetitions) and the largest session's memory."""
    machine = Machine.now()
    points = plan.plan.tasks if isinstance(plan, DatasetSweepPlan) else plan.tasks
    rounds = len(plan.round_names) if isinstance(plan, DatasetSweepPlan) else None
    runs = [estimate_run(t.parties, t.samples, 1, machine=machine) if rounds is None
            else estimate_run(t.parties, rounds, t.samples, machine=machine)
            for t in points.settings()]  # a session's cost does not depend on its epsilon
    return RunEstimate(sum(r.seconds for r in runs) * len(points.grid), max(r.peak_bytes for r in runs),
                       sum(r.cpu_seconds for r in runs) * len(points.grid), machine)


async def _session(task: SweepTask, tree: SeedTree, bits: NDArray[np.int8], round_names: tuple[str, ...],
                   repetitions: int, broker: BrokerSettings, workers: int | None, round_timeout: float,
                   rules: RuleCache, progress: ProgressCallback) -> RunOutcome:
    """Run the session of ``task`` on ``bits`` (k x R; -1: takes no part) and return its outcome."""
    curator = task.rule == "curator"
    config = RunConfig(
        session=f"sweep-{uuid.uuid4().hex[:12]}", round_names=round_names, bits=bits,
        mechanisms=(RandomizedResponse(task.epsilon, task.delta),) * task.parties, repetitions=repetitions,
        seed=tree.seed, function=parse_function(task.function), measure=accuracy_measure("zero-one", 2),
        rule_factory=None if curator else zero_one_rules(task.rule, cache=rules),
        party_rule=None if curator or task.observer == "central" else task.rule, broker=broker,
        workers=workers, store_path=None, round_timeout=round_timeout, protocol="curator" if curator else "rr")
    outcome = await run_async(config, progress)
    late = [r for r in outcome.rounds if r.status != "complete"]
    if late:
        raise WorkerError(f"{len(late)} of {len(outcome.rounds)} live round(s) of the point epsilon={task.epsilon:g}, "
                          f"k={task.parties} closed with parties unheard (first: round {late[0].index}, "
                          f"{late[0].absent.size} absent): their decisions are not the k-party rule's; "
                          "allow more time per round (--round-timeout)")
    return outcome


async def _measure(task: SweepTask, seed: np.random.SeedSequence, broker: BrokerSettings, workers: int | None,
                   round_timeout: float, rules: RuleCache, progress: ProgressCallback) -> int:
    """Run the session of ``task`` (module docstring) and count its right decisions, out of ``task.samples``."""
    tree = SeedTree(session_seed(seed))
    data = random_dataset(task.parties, task.samples, tree.dataset())
    outcome = await _session(task, tree, data.bits, data.round_names, 1, broker, workers, round_timeout, rules,
                             progress)
    return _successes(outcome, data.bits, task)


async def _measure_bills(task: SweepTask, seed: np.random.SeedSequence, plan: DatasetSweepPlan,
                         broker: BrokerSettings, workers: int | None, round_timeout: float, rules: RuleCache,
                         progress: ProgressCallback) -> NDArray[np.int64]:
    """Run the session of ``task`` on the dataset (module docstring): right decisions per round, int64 (R,),
    each out of ``task.samples``."""
    outcome = await _session(task, SeedTree(session_seed(seed)), plan.bits, plan.round_names, task.samples,
                             broker, workers, round_timeout, rules, progress)
    f = parse_function(task.function)
    right = []
    for j, rnd in enumerate(outcome.rounds):
        votes = plan.bits[:, j]
        truth = f.count_values(int((votes != -1).sum()))
        assert truth is not None  # plan_sweep admits symmetric functions only
        right.append(int((np.asarray(rnd.decisions) == int(truth[int((votes == 1).sum())])).sum()))
    return np.array(right, dtype=np.int64)


def _successes(outcome: RunOutcome, bits: NDArray[np.int8], task: SweepTask) -> int:
    """Right decisions of the point's observer over the rounds (one repetition each)."""
    truth = parse_function(task.function).count_values(task.parties)
    assert truth is not None  # plan_sweep admits symmetric functions only
    right = 0
    for j, rnd in enumerate(outcome.rounds):
        if task.observer == "central":
            decision = int(rnd.decisions[0])
        else:
            assert rnd.party_decisions is not None  # the session ran with party decisions
            decision = int(rnd.party_decisions[list(rnd.participants).index(0), 0])
            if decision < 0:
                raise WorkerError(f"party 0's decision of live round {rnd.index} (epsilon={task.epsilon:g}, "
                                  f"k={task.parties}) never arrived: the point cannot be measured")
        right += decision == int(truth[int(bits[:, j].sum())])
    return right


async def live_sweep(plan: SweepPlan | DatasetSweepPlan, broker: BrokerSettings, *, workers: int | None = None,
                     round_timeout: float = 60.0, progress: Callable[[int, int], None] | None = None) -> SweepResult:
    """Measure every point of ``plan`` live (module docstring), one after another, over one broker.

    Args:
        plan: from :func:`mpdp.analysis.sweeps.sweep.plan_sweep` (uniform inputs), or
            :func:`mpdp.analysis.sweeps.dataset_sweep.plan_dataset_sweep` (a dataset's rounds).
        broker: where: ``auto``/``mosquitto``/``embedded`` start one broker for the whole sweep (stopped at
            the end); an external broker (a URL) is used as it is.
        workers: worker processes of each session (None: one per core, at most k).
        round_timeout: seconds a round may stay open (a round closed with parties unheard fails the sweep).
        progress: called as ``progress(0, rounds)`` once the broker is up (``rounds``: of every point), then
            as ``progress(done, rounds)`` about 4 times a second and after every round.

    Returns:
        the :class:`mpdp.analysis.sweeps.sweep.SweepResult` (source ``live``; its inputs name the broker's kind).

    Raises:
        TransportError: the broker is unreachable, would not start or went away.
        WorkerError: a session's worker process failed, or a round closed with parties unheard.
        ParameterError: what a session refuses (checked by :func:`mpdp.analysis.sweeps.sweep.plan_sweep` and
            :func:`check_live_plan` first, before the broker starts).
    """
    check_live_plan(plan)
    report = progress or (lambda done, total: None)
    rules = RuleCache()
    dataset = plan if isinstance(plan, DatasetSweepPlan) else None
    points = plan.plan if isinstance(plan, DatasetSweepPlan) else plan
    per_point = [t.samples if dataset is None else len(dataset.round_names) for t in points.tasks]
    measured: list[tuple[PointTheory, int]] = []
    measured_bills: list[tuple[BillTheory, NDArray[np.int64]]] = []
    total = sum(per_point)
    async with open_broker(broker) as endpoint:
        # our own broker: each session connects to its address; an external one: with the user's login and TLS
        where = broker if broker.kind == "external" else endpoint.reached()
        report(0, total)
        done = 0
        for task, seed, rounds_of_point in zip(points.tasks, points.seeds, per_point):
            def rounds(played: int, messages: int, before: int = done) -> None:
                report(before + played, total)

            if dataset is None:
                successes = await _measure(task, seed, where, workers, round_timeout, rules, rounds)
                measured.append((point_theory(task), successes))
            else:
                bills = await _measure_bills(task, seed, dataset, where, workers, round_timeout, rules, rounds)
                measured_bills.append((bill_theory(task, dataset.bits), bills))
            done += rounds_of_point
    result = dataset.result(measured_bills, "live") if dataset is not None else points.result(measured, "live")
    return replace(result, inputs=result.inputs | {"broker": endpoint.kind, "round_timeout": round_timeout})
