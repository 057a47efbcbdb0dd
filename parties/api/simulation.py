"""``mpdp.simulate``: a live run over a real MQTT broker (the ``mpdp simulate`` command, from Python).

Parties privatize their bits by randomized response in worker processes and publish over the broker (an
embedded one by default, or a URL); the central observer decides f with its optimal rule; each round's
measured accuracy is compared with the exact theory. Everything is validated before any process starts.

``mpdp.simulate`` works in a script (under ``if __name__ == "__main__":``: spawned workers re-import the
main script, so a top-level call is refused with one line, before anything starts), piped to ``python -``
(the workers do not re-run ``<stdin>``), in a terminal and in Jupyter: inside a running event loop it runs the session on a worker thread with its own loop and returns
the result. ``await mpdp.simulate_async(...)`` is the same run for code that is itself async.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from mpdp.analysis.privacy.accounting import Budget
from mpdp.analysis.reports.documents import to_json_text
from mpdp.analysis.reports.evaluation import UNDECIDED, RoundEvaluation
from mpdp.analysis.reports.report import RoundResult, plot_rounds, results_document
from mpdp.broker.decision_messages import check_transcript_size
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.config_checks import budget_of, epsilon_text
from mpdp.parties.api.guards import check_main_guard, run_blocking
from mpdp.parties.api.params import function_of
from mpdp.parties.api.result import Result, strict_document
from mpdp.parties.api.run_folder import PreviousRun, RunFolder, RunStatus, data_digest
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.api.topology import Topology
from mpdp.parties.rounds.config import RunConfig, default_workers
from mpdp.parties.rounds.outcome import RunOutcome
from mpdp.parties.rounds.privacy import check_privacy_options, ledgers_from_rounds, privacy_section
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.session.datasets import Dataset, load_dataset, parse_csv, random_dataset
from mpdp.parties.session.epsilons import parse_mechanisms, warn_if_no_privacy
from mpdp.parties.session.estimate import (
    LARGE_RUN,
    ROUND_MARGIN,
    Machine,
    estimate_run,
    ready_timeout_floor,
    resolve_connections,
    round_timeout_floor,
)
from mpdp.parties.session.evaluate import evaluate_run
from mpdp.parties.session.external_broker import party_broker_settings, simulation_window
from mpdp.parties.session.output_paths import run_files
from mpdp.parties.session.progress import Progress
from mpdp.parties.session.runner import recorded_outcome, run_async
from mpdp.parties.session.sizing import party_decisions_cost, party_decisions_wait, session_cost
from mpdp.protocols.errors import MpdpError, ParameterError
from mpdp.protocols.functions import BooleanFunction, accuracy_measure
from mpdp.protocols.numerics.cost import CostEstimate, check_time_limit, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, check_delta
from mpdp.protocols.randomization.secure import rng_mode
from mpdp.protocols.rules.rule_factory import RuleCache, check_rule_size, zero_one_rules

if TYPE_CHECKING:
    from dp_accounting import DpEvent
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OUT_FILES", "Simulation", "simulate", "simulate_async"]

#: The files of one run in ``out``.
OUT_FILES = run_files("transcripts.sqlite", "results.json", "accuracy.png")


@dataclass(frozen=True, repr=False)
class Simulation(Result):
    """A finished live run.

    Attributes:
        document: ``results.json`` (``mpdp simulate --json``): configuration, ``rounds``, ``privacy``, ``topology``
            (:attr:`topology`), ``run``.
        evaluations: each round measured against theory (:class:`mpdp.analysis.reports.evaluation.RoundEvaluation`);
            with ``function="sum"`` (randomized response) also its debiased count (``.debiased``,
            :class:`mpdp.analysis.theory.debiased.DebiasedRound`; the ``debiased`` object of each round).
        outcome: the run as the runner returned it (rounds, broker, wall time, what each party spent).
        title: what was run, in words (the plot's title).
        out: the run's folder, holding ``transcripts.sqlite``, ``results.json`` and ``accuracy.png`` (``out``,
            or a new ``mpdp-run-XXXX`` under the temporary directory: :mod:`mpdp.parties.api.run_folder`).
    """

    document: dict[str, Any]
    evaluations: tuple[RoundEvaluation, ...]
    outcome: RunOutcome
    title: str
    out: Path

    @property
    def topology(self) -> Topology:
        """Where the run ran (the document's ``topology``: brokers, executor, connections, processes).

        Raises:
            KeyError: a document written by an mpdp without the section (a complete run of it resumed).
        """
        return Topology.from_json(self.document["topology"])

    @property
    def rounds(self) -> tuple[RoundResult, ...]:
        """Each round's figures (measured accuracy, interval, theory, consistency)."""
        return tuple(e.result for e in self.evaluations)

    @property
    def consistent(self) -> bool:
        """Every decided round's measured accuracy is consistent with its theory (Bonferroni at ``alpha``; a round
        not decided, :data:`mpdp.analysis.reports.evaluation.UNDECIDED`, measured nothing)."""
        return all(e.result.consistent for e in self.evaluations if e.status not in UNDECIDED)

    def to_dp_event(self, party: int) -> DpEvent:
        """Party ``party``'s privacy ledger of this run (the rounds the transcript shows it answered,
        :func:`mpdp.parties.rounds.privacy.ledgers_from_rounds`) as a dp_accounting ``DpEvent``, for its PLD or RDP
        accountant (``NeighboringRelation.REPLACE_ONE``): :meth:`mpdp.analysis.privacy.accounting.PrivacyLedger.to_dp_event`.

        Raises:
            ParameterError: a party id outside ``0..k-1``, a protocol other than ``rr`` (its parties release no
                randomized response), a party that answered no round, or one with delta > 0.
            ImportError: dp_accounting is not installed (``pip install 'mpdp[interop]'``).
        """
        parties = self.document["parties"]
        if self.outcome.protocol != "rr":
            raise ParameterError("protocol", self.outcome.protocol, "rr: only its parties release randomized response")
        if isinstance(party, bool) or not isinstance(party, int | np.integer) or not 0 <= party < len(parties):
            raise ParameterError("party", party, f"a party id in 0..{len(parties) - 1}")
        mechanisms = [RandomizedResponse(p["epsilon"], p["delta"]) for p in parties]
        ledgers = ledgers_from_rounds(self.outcome.rounds, mechanisms, int(self.document["repetitions"]),
                                      self.outcome.delta_slack)
        return ledgers[party].to_dp_event()

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """The ``rounds`` entries of the document, one per round; a nested object becomes dotted columns
        (``debiased.estimate``, ``debiased.post_processed.clipped``, ...)."""
        return [_flat(entry) for entry in self.document["rounds"]]

    def summary(self) -> str:
        decided = [e.result for e in self.evaluations if e.status not in UNDECIDED]
        undecided = f" ({len(self.rounds) - len(decided)} not decided)" if len(decided) < len(self.rounds) else ""
        return (f"{self.title}: {len(self.rounds)} {noun(len(self.rounds), 'round')}{undecided}, "
                f"{sum(r.consistent for r in decided)} consistent with theory, "
                f"{self.outcome.wall_time:.1f} s on {self.outcome.broker_kind}")

    def draw(self, ax: Axes | None) -> Figure:
        """Measured accuracy with its 95% interval and the theory, per round
        (:func:`mpdp.analysis.reports.report.plot_rounds`)."""
        return plot_rounds(self.rounds, ax, self.title)


#: Seconds a simulated round waits for its parties unless ``round_timeout`` says otherwise (a large run: longer).
DEFAULT_ROUND_TIMEOUT = 60.0


def _flat(entry: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``entry`` with nested mappings spread into ``outer.inner`` keys, in order.

    Example:
        >>> _flat({"round": "a", "debiased": {"estimate": 2.5, "post_processed": {"clipped": 2}}})
        {'round': 'a', 'debiased.estimate': 2.5, 'debiased.post_processed.clipped': 2}
    """
    flat: dict[str, Any] = {}
    for key, value in entry.items():
        if isinstance(value, Mapping):
            flat |= _flat(value, f"{prefix}{key}.")
        else:
            flat[f"{prefix}{key}"] = value
    return flat


def _dataset(dataset: str | None, votes: ArrayLike | None, parties: int | None, rounds: int | None,
             label_column: bool | None, rng: np.random.Generator) -> Dataset:
    given = [name for name, value in (("dataset", dataset), ("votes", votes), ("parties", parties))
             if value is not None]
    if len(given) != 1:
        raise ParameterError("input", ", ".join(given) or None,
                             "exactly one of dataset=NAME|PATH, votes=ARRAY or parties=K (with rounds=R)")
    if rounds is not None and parties is None:
        raise ParameterError("rounds", rounds, "only with parties=K")
    if label_column is not None and (dataset is None or dataset == "house-votes-84"):
        raise ParameterError("label_column", label_column, "only with dataset=PATH")
    if dataset is not None:
        return load_dataset(dataset, label_column)
    if votes is not None:
        bits = np.asarray(votes)
        if bits.ndim == 1:
            bits = bits[:, None]
        if bits.ndim != 2 or bits.size == 0 or not np.isin(bits, (-1, 0, 1)).all():
            raise ParameterError("votes", f"an array of shape {bits.shape}",
                                 "a non-empty (parties, rounds) array of 1, 0 or -1 (takes no part)")
        text = "\n".join(",".join(str(int(v)) for v in row).replace("-1", "?") for row in bits)
        return parse_csv(text, "votes", label_column=False)
    assert parties is not None
    return random_dataset(parties, rounds if rounds is not None else 1, rng)


def _mechanisms(epsilon: float | str | Sequence[float], delta: float, k: int,
                rng: np.random.Generator) -> list[RandomizedResponse]:
    if isinstance(epsilon, str):
        return parse_mechanisms(epsilon, delta, k, rng)
    if isinstance(epsilon, (int, float)):
        return parse_mechanisms(repr(float(epsilon)), delta, k, rng)
    values = [float(e) for e in epsilon]
    if len(values) != k:
        raise ParameterError("epsilon", f"{len(values)} values", f"one value, or {k} (one per party)")
    mechanisms = [RandomizedResponse(e, check_delta(delta, "delta")) for e in values]
    warn_if_no_privacy(values)
    return mechanisms


def _config_of(config: SimulationConfig | str | os.PathLike[str] | None, options: Mapping[str, Any]) -> SimulationConfig:
    """The run's :class:`SimulationConfig`: ``config`` with ``options`` over it; a path ending in ``.toml`` is
    read as a config (:meth:`SimulationConfig.from_toml`), another text as the dataset (``dataset=``)."""
    if config is None or isinstance(config, SimulationConfig):
        return SimulationConfig.of(config, options)
    if Path(config).suffix.lower() == ".toml":
        return SimulationConfig.from_toml(Path(config), **options)
    return SimulationConfig.of(None, {"dataset": os.fspath(config)} | dict(options))


@dataclass(frozen=True)
class _Plan:
    """One run resolved and checked, before any process starts: what :func:`simulate_async` runs and
    records."""

    run: SimulationConfig
    data: Dataset
    f: BooleanFunction
    mechanisms: list[RandomizedResponse]
    budget: Budget | None
    seeds: SeedTree
    inputs: dict[str, Any]
    parties: list[dict[str, Any]]
    digest: str
    previous: PreviousRun | None
    rules: RuleCache
    config: RunConfig
    connections_why: str
    party_cost: CostEstimate | None = None

    @property
    def epsilon_text(self) -> str:
        """The epsilon as one text (a number or its spec), or "" for one value per party."""
        return epsilon_text(self.run.epsilon)

    @property
    def function_name(self) -> str:
        """f as the user named it (a name given), else its own name."""
        return self.f.name if not isinstance(self.run.function, str) else self.run.function

    @property
    def kind(self) -> str:
        """The decision rule in the document: the observer's (rr) or the central mechanism's."""
        if self.run.protocol == "rr":
            return self.run.rule
        return "geometric" if self.run.protocol == "mpc" and self.f.name == "sum" else "curator"


def _brokers(run: SimulationConfig, round_timeout: float) -> tuple[BrokerSettings, BrokerSettings | None]:
    """The observer's broker and the parties' (None: the same), with their reconnect windows."""
    window = simulation_window(round_timeout)
    settings = run.broker if isinstance(run.broker, BrokerSettings) else BrokerSettings.from_url(run.broker)
    party = (run.party_broker if run.party_broker is None or isinstance(run.party_broker, BrokerSettings)
             else party_broker_settings(run.party_broker))
    return (settings.with_window(run.reconnect_window, window),
            None if party is None else party.with_window(run.reconnect_window, window))


def _plan(run: SimulationConfig) -> _Plan:
    """Resolve ``run`` against its data and this machine and check what the model could not (the dataset,
    an epsilon file, each round's rule size, the estimated cost, a resumed run's inputs).

    Raises:
        ParameterError: the first refusal (named by its keyword), before any process starts.
    """
    budget = budget_of(run.budget)
    delta_slack = check_privacy_options(budget, run.delta_slack)
    previous = PreviousRun.read(run.out, run.force) if run.resume else None
    f = function_of(run.function)
    seeds = SeedTree.from_seed(run.seed if previous is None else previous.seed)
    default = run.dataset is None and run.votes is None and run.parties is None
    data = _dataset("house-votes-84" if default else run.dataset, run.votes, run.parties, run.rounds, run.label_column, seeds.dataset())
    if run.party_decisions and run.protocol == "rr":  # each round's transcript goes to the parties
        check_transcript_size(int((data.bits >= 0).sum(axis=0).max(initial=0)), run.repetitions)
    connections, connections_why = resolve_connections(run.connections, data.num_parties)
    machine = Machine.now()  # the printed estimate and the run's waits: one model, one measurement
    round_timeout = run.round_timeout if run.round_timeout is not None else max(
        DEFAULT_ROUND_TIMEOUT, round_timeout_floor(data.num_parties, run.repetitions, connections,
                                                   machine=machine))
    settings, party_settings = _brokers(run, round_timeout)
    session = session_cost(data.num_parties, data.num_rounds, run.repetitions, connections, machine=machine)
    session.check(check_time_limit(run.time_limit), memory_here=run.executor is None)
    mechanisms = _mechanisms(run.epsilon, run.delta, data.num_parties, seeds.epsilons())
    for r in range(data.num_rounds):  # the participants of a round are at most the voters
        ids = np.flatnonzero(data.bits[:, r] >= 0)
        if ids.size:
            check_rule_size([mechanisms[i] for i in ids], f, run.rule)
    party_cost, workers = None, run.workers or default_workers()
    if run.party_decisions and run.protocol == "rr":  # the parties' rules: refused before any process starts
        party_cost = party_decisions_cost(mechanisms, f, run.repetitions, data.num_rounds, workers,
                                          session.memory_bytes, run.rule)
        party_cost.check(check_time_limit(run.time_limit), memory_here=run.executor is None)
    parties = [{"id": i, "epsilon": m.epsilon, "delta": m.delta} for i, m in enumerate(mechanisms)]
    digest = data_digest(data.bits, json.loads(to_json_text(parties)))
    cache = RuleCache()
    config = RunConfig(
        session=f"sim-{uuid.uuid4().hex[:12]}" if previous is None else previous.session,
        round_names=data.round_names, bits=data.bits,
        mechanisms=tuple(mechanisms), repetitions=run.repetitions, seed=seeds.seed, function=f,
        measure=accuracy_measure("zero-one", 2),
        rule_factory=(None if run.protocol != "rr" else
                      zero_one_rules(run.rule, engine="posterior" if run.rule == "average" else "auto", cache=cache)),
        party_rule=run.rule if run.party_decisions and run.protocol == "rr" else None, broker=settings,
        workers=run.workers, store_path=None, secure=run.secure,
        round_timeout=round_timeout, ready_timeout=ready_timeout_floor(data.num_parties, connections, machine=machine),
        budget=budget, delta_slack=delta_slack, protocol=run.protocol,
        servers=run.servers, threshold=run.threshold, party_broker=party_settings, connections=connections,
        validators=run.validators, executor=run.executor,
        # the workers build the parties' rules once the transcript arrives: wait for that too, on this machine
        decision_timeout=None if party_cost is None else
        round_timeout + ROUND_MARGIN * party_decisions_wait(party_cost, workers, machine))
    plan = _Plan(run, data, f, mechanisms, budget, seeds, {}, parties, digest, previous, cache, config,
                 connections_why, party_cost)
    inputs = run.inputs(dataset=data.name, epsilon=plan.epsilon_text or "per party (see parties)",
                        function=plan.function_name, round_timeout=round_timeout, delta_slack=delta_slack)
    if previous is not None:
        previous.check(inputs, digest)
    return dataclasses.replace(plan, inputs=inputs)


def _started(plan: _Plan) -> dict[str, Any]:
    """The run's document as written when it starts (no rounds yet)."""
    run = plan.run
    return strict_document({
        "session": plan.config.session, "protocol": run.protocol, "dataset": plan.data.name,
        "function": plan.function_name, "repetitions": run.repetitions, "seed": plan.seeds.seed,
        "seed_given": run.seed is not None, "mode": rng_mode(run.secure), "alpha": run.alpha, "rule": plan.kind,
        "party_decisions": run.party_decisions and run.protocol == "rr", "parties": plan.parties, "rounds": [],
        "topology": Topology.of_run(plan.config, plan.connections_why).to_json()}, "simulate", plan.inputs)


def _announce(plan: _Plan, folder: RunFolder, begun: Mapping[str, Any]) -> None:
    """On standard error: where a resumed run goes on, and how long a large run will take (the rounds left)."""
    done, total = begun["rounds_decided"], len(begun["rounds"])
    if plan.previous is not None:
        print(f"mpdp: resuming the run in {folder.path} at round {done + 1} of {total}" if done < total else
              f"mpdp: the run in {folder.path} is complete ({total} of {total} {noun(total, 'round')}): nothing to run"
              if plan.previous.complete else
              f"mpdp: the run in {folder.path} has its {total} {noun(total, 'round')} recorded: writing its results",
              file=sys.stderr)
    config = plan.config
    if config.k * (total - done) >= LARGE_RUN:  # before a long wait, say how long
        print(estimate_run(config.k, total - done, plan.run.repetitions, config.connections).describe()
              + f"; connections {config.connections} ({plan.connections_why})"
              + ("" if plan.party_cost is None else f"; besides, {plan.party_cost.summary()}"), file=sys.stderr)


def _recorded(plan: _Plan) -> RunOutcome | None:
    """A complete run resumed: its outcome as its store holds it (:func:`mpdp.parties.session.runner.recorded_outcome`:
    no broker, no process, nothing written), with the broker and wall time it recorded; else None (a run to run)."""
    previous = plan.previous
    if previous is None or not previous.complete:
        return None
    broker = previous.document["broker"]
    return recorded_outcome(plan.config, broker["kind"], broker["url"], float(previous.document["wall_time_s"]))


def _finished(plan: _Plan, outcome: RunOutcome, folder: RunFolder, recorded: bool = False) -> Simulation:
    """The finished run measured against theory (:func:`mpdp.parties.session.evaluate.evaluate_run`), its
    document, plot and files written (``recorded``: a complete run resumed, its document as it is, nothing
    written)."""
    run = plan.run
    evaluations = evaluate_run(outcome, plan.data.bits, plan.mechanisms, plan.f, rule=plan.kind, alpha=run.alpha,
                               rng=plan.seeds.theory(), rules=plan.rules)
    privacy = None
    if outcome.protocol == "rr":  # the curator protocol releases no per-party answers
        privacy = privacy_section(outcome.spent, outcome.rounds, plan.budget, outcome.delta_slack, run.repetitions)
    document = results_document(
        session=outcome.session, protocol=run.protocol, dataset=plan.data.name, function=plan.function_name,
        repetitions=run.repetitions, seed=plan.seeds.seed, seed_given=run.seed is not None,
        secure=run.secure, broker_kind=outcome.broker_kind, broker_url=outcome.broker_url, alpha=run.alpha,
        rule=plan.kind, party_decisions=run.party_decisions and run.protocol == "rr", wall_time=outcome.wall_time,
        mechanisms=plan.mechanisms, rounds=evaluations, privacy=privacy)
    document["topology"] = Topology.of_run(plan.config, plan.connections_why, outcome.broker_url).to_json()
    document["run"] = folder.run_section("complete", plan.config.session, plan.config.round_names, plan.digest)
    title = (f"{plan.data.name}: {'' if run.protocol == 'rr' else run.protocol + ', '}{document['function']}, "
             f"epsilon {plan.epsilon_text or 'per party'}, {run.repetitions} repetitions")
    if recorded:  # resumed complete: the document as the run wrote it, unchanged
        assert plan.previous is not None
        return Simulation(plan.previous.document, tuple(evaluations), outcome, title, folder.path)
    result = Simulation(strict_document(document, "simulate", plan.inputs), tuple(evaluations), outcome, title,
                        folder.path)
    from mpdp.analysis.plot_style import save_figure

    save_figure(result.plot(), folder.path / "accuracy.png")
    folder.write(result.document)
    return result


async def simulate_async(config: SimulationConfig | str | os.PathLike[str] | None = None, /, *,
                         progress: bool = True, **options: Any) -> Simulation:
    """The live run of :func:`simulate`, for code that already runs an event loop (``await
    mpdp.simulate_async(...)``): the same arguments, checks, files and result.

    Raises:
        ParameterError, UnguardedMainError, TransportError, WorkerError: as :func:`simulate`.
    """
    check_main_guard("mpdp.simulate")
    plan = _plan(_config_of(config, options))
    folder = RunFolder.open(plan.run.out, plan.run.force, plan.run.resume, OUT_FILES, announce=progress)
    plan = dataclasses.replace(plan, config=dataclasses.replace(plan.config, store_path=folder.store))
    started = _started(plan)

    def run_section(status: RunStatus, error: str | None = None) -> dict[str, Any]:
        return folder.run_section(status, plan.config.session, plan.config.round_names, plan.digest, error)

    begun = run_section("running")
    if progress:
        _announce(plan, folder, begun)
    recorded = _recorded(plan)
    if recorded is not None:
        return _finished(plan, recorded, folder, recorded=True)
    folder.write(started | {"run": begun})
    try:
        with Progress(plan.data, enabled=progress, rounds_done=begun["rounds_decided"],
                      messages_done=folder.messages_recorded(plan.config.session)) as bar:
            outcome = await run_async(plan.config, progress=bar.update)
    except (MpdpError, asyncio.CancelledError, KeyboardInterrupt) as exc:
        failed = isinstance(exc, MpdpError)
        section = run_section("failed" if failed else "interrupted",
                              str(exc) if failed else "stopped by a signal (Ctrl-C, SIGTERM or SIGHUP)")
        if not folder.discard_if_empty(section):
            folder.write(started | {"run": section})
        line = folder.stopped(section)
        if line is not None:
            print(line, file=sys.stderr)
        raise
    return _finished(plan, outcome, folder)


def simulate(config: SimulationConfig | str | os.PathLike[str] | None = None, /, *, progress: bool = True,
             **options: Any) -> Simulation:
    """Run parties and the central observer over a real MQTT broker and measure accuracy against theory.

    Blocks until the run is done: in a script (under ``if __name__ == "__main__":``), a terminal, or Jupyter
    (inside a running event loop the run goes on a worker thread with its own loop). ``await
    mpdp.simulate_async(...)`` is the same run for async code.

    Args:
        config: the run's options: a :class:`mpdp.parties.api.simulation_config.SimulationConfig` (its fields
            are the options, each described there), a path ending in ``.toml`` (read as ``mpdp simulate
            --config`` reads it, :meth:`SimulationConfig.from_toml`), another text or path (the dataset: a name
            or a CSV path, as ``dataset=``), or None (every default).
        progress: a progress bar and the run's folder on standard error.
        options: any field of :class:`SimulationConfig` by keyword, over ``config``'s: the input (``dataset``,
            ``votes`` or ``parties`` with ``rounds``), privacy (``epsilon`` in nats, ``delta``, ``budget``,
            ``delta_slack``), what is computed (``function``, ``rule``, ``protocol``, ``servers``,
            ``threshold``, ``repetitions``, ``seed``, ``secure``, ``party_decisions``, ``alpha``), where it runs
            (``broker``, ``party_broker``, ``reconnect_window``, ``workers``, ``connections``: ``"auto"`` by
            default, per-party while the sockets fit, else per-worker; ``validators``, ``executor``) and its
            files and time (``out``, ``force``, ``resume``: a complete run's result as recorded, nothing started
            or written; ``round_timeout``, ``time_limit``).

    Returns:
        :class:`Simulation`: ``document`` (``results.json``, ``mpdp simulate --json``; its ``inputs`` are
        :meth:`SimulationConfig.inputs`), ``rounds`` (measured accuracy, interval and exact theory per round),
        ``consistent``, ``out`` (the run's folder with ``transcripts.sqlite``, ``results.json``,
        ``accuracy.png``), ``to_dict()``, ``to_frame()``, ``plot()``.

    Raises:
        ParameterError: before any process starts, one line naming the keyword, its value and what is
            allowed: an unknown option (the closest name suggested), a wrong type, a value out of range, a bad
            combination, a dataset or epsilon file that cannot be read, a run estimated to take longer than
            ``time_limit``; with ``resume``, inputs other than the folder's run's.
        UnguardedMainError: called from a script's top level without ``if __name__ == "__main__":``.
        TransportError, WorkerError: the broker or a worker process failed (``results.json`` says so).

    Example (a live run; not run as a doctest)::

        import mpdp
        r = mpdp.simulate(dataset="house-votes-84", epsilon=1.0, repetitions=50, seed=3)
        r.to_dict()["rounds"][0]["empirical_accuracy"]
        r.plot()
        again = mpdp.simulate(mpdp.SimulationConfig(dataset="house-votes-84", epsilon=1.0), seed=4)
        from_file = mpdp.simulate("run.toml", seed=5)
    """
    check_main_guard("mpdp.simulate")
    return run_blocking(simulate_async(config, progress=progress, **options))
