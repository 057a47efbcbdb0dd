"""``mpdp.simulate``: a live run over a real MQTT broker (the ``mpdp simulate`` command, from Python).

Parties privatize their bits by randomized response in worker processes and publish over the broker (an
embedded one by default, or a URL); the central observer decides f with its optimal rule; each round's
measured accuracy is compared with the exact theory. Everything is validated before any process starts.

``mpdp.simulate`` works in a script (under ``if __name__ == "__main__":``: spawned workers re-import the
main script, so a top-level call is refused with one line, before anything starts), in a terminal and in
Jupyter: inside a running event loop it runs the session on a worker thread with its own loop and returns
the result. ``await mpdp.simulate_async(...)`` is the same run for code that is itself async.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
import sys
import uuid
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import numpy as np
from numpy.typing import ArrayLike

from mpdp.analysis.privacy.accounting import Budget
from mpdp.analysis.reports.documents import to_json_text
from mpdp.analysis.reports.evaluation import UNDECIDED, RoundEvaluation
from mpdp.analysis.reports.report import RoundResult, plot_rounds, results_document
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.guards import check_main_guard, run_blocking
from mpdp.parties.api.params import function_of
from mpdp.parties.api.result import Result, strict_document
from mpdp.parties.api.run_folder import PreviousRun, RunFolder, RunStatus, data_digest
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.api.topology import Topology
from mpdp.parties.curator.arguments import check_curator_arguments
from mpdp.parties.mpc.sharing import check_servers
from mpdp.parties.rounds.config import PROTOCOLS, RunConfig
from mpdp.parties.rounds.outcome import RunOutcome
from mpdp.parties.rounds.privacy import check_privacy_options, ledgers_from_rounds, privacy_section
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.session.datasets import Dataset, load_dataset, parse_csv, random_dataset
from mpdp.parties.session.epsilons import parse_mechanisms, warn_if_no_privacy
from mpdp.parties.session.estimate import (
    LARGE_RUN,
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
from mpdp.parties.session.sizing import session_cost
from mpdp.protocols.errors import MpdpError, ParameterError
from mpdp.protocols.functions import accuracy_measure
from mpdp.protocols.numerics.cost import check_time_limit
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, check_delta
from mpdp.protocols.randomization.secure import rng_mode
from mpdp.protocols.rules.rule_factory import RuleCache, check_rule_size, zero_one_rules

if TYPE_CHECKING:
    from dp_accounting import DpEvent
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["OUT_FILES", "Simulation", "check_run_options", "simulate", "simulate_async"]

P = ParamSpec("P")
T = TypeVar("T")

#: The files of one run in ``out``.
OUT_FILES = run_files("transcripts.sqlite", "results.json", "accuracy.png")


@dataclass(frozen=True, slots=True, repr=False)
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
        """Where the run ran (the document's ``topology``: brokers, executor, connections, processes)."""
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
        return (f"{self.title}: {len(self.rounds)} rounds{undecided}, {sum(r.consistent for r in decided)} consistent "
                "with theory, "
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


def check_run_options(repetitions: int, seed: int | None, secure: bool, workers: int | None, alpha: float,
                      round_timeout: float, protocol: str, rule: str = "average",
                      party_decisions: bool = False) -> None:
    """The options every live run shares (:func:`simulate_async`, ``mpdp compare``), each in its range.

    Raises:
        ParameterError: the first value out of its range (named by its keyword, with what is allowed).
    """
    if protocol not in PROTOCOLS:
        raise ParameterError("protocol", protocol, "rr (randomized response), curator or mpc")
    if rule not in ("average", "worst-case"):
        raise ParameterError("rule", rule, "average or worst-case")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ParameterError("repetitions", repetitions, "an integer >= 1")
    if seed is not None and seed < 0:
        raise ParameterError("seed", seed, "an integer >= 0")
    if seed is not None and secure:
        raise ParameterError("seed", seed, "no seed in secure mode (secure=True, --secure)",
                             hint="deployment mode draws from the OS CSPRNG and cannot be reproduced")
    if workers is not None and workers < 1:
        raise ParameterError("workers", workers, "an integer >= 1")
    if not 0 < alpha < 1:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    if not round_timeout > 0:
        raise ParameterError("round_timeout", round_timeout, "a number of seconds > 0")
    if protocol != "rr" and (rule != "average" or party_decisions):
        raise ParameterError("rule" if rule != "average" else "party_decisions",
                             rule if rule != "average" else True,
                             f"the defaults with protocol {protocol} (the central mechanism has no decision rule)")


async def simulate_async(config: SimulationConfig | str | None = None, /, *, progress: bool = True,
                         **options: Any) -> Simulation:
    """Run parties and the central observer over a real MQTT broker and measure accuracy against theory.

    ``mpdp.simulate(...)`` blocks until the run is done; ``await mpdp.simulate_async(...)`` is the same run
    for code that already runs an event loop. Both take these arguments and return the same result.

    Args:
        config: the run's options (:class:`mpdp.parties.api.simulation_config.SimulationConfig`, whose fields
            are described there), or a dataset name or CSV path (as ``dataset=``), or None (every default).
        progress: a progress bar on standard error (and the run's folder named there).
        options: options by keyword, over ``config``'s: ``dataset`` (``"house-votes-84"``, the default, or a
            CSV of 1/0, ``?`` = takes no part), ``votes`` (an int array (parties, rounds) of 1, 0, -1) or
            ``parties`` (K with random bits over ``rounds`` R); ``label_column``; ``epsilon`` (nats: one value,
            ``"LO:HI"``, a file, or one per party), ``delta``, ``repetitions``, ``function`` (``majority``,
            ``sum``, ``xor``, ``and``, ``or``, ``threshold:T``), ``rule`` (``average`` 002 eq. (4) or
            ``worst-case`` eq. (6)), ``seed``; ``protocol`` (``rr``, ``curator`` 001, ``mpc`` with ``servers`` M
            and ``threshold`` T < M/2); ``broker``, ``party_broker``, ``reconnect_window``; ``out`` (the run's
            folder, refused if it holds an earlier run's unless ``force``; ``resume`` continues the run there
            with the same inputs, only ``round_timeout`` may change; a complete run's result is returned as recorded,
            nothing started or written); ``workers``, ``connections``
            (``per-party``, ``per-worker``), ``validators``, ``executor`` (``dask://HOST:PORT``: the workers as tasks
            on that Dask cluster, the broker by URL); ``secure`` (deployment mode: the OS CSPRNG, no
            seed), ``party_decisions``, ``alpha`` (family-wise level of the consistency tests),
            ``round_timeout`` (seconds of quiet after the last answer; None: 60, or thrice a large round's
            estimated time, :func:`mpdp.parties.session.estimate.round_timeout_floor`), ``budget`` ((epsilon,
            delta) or ``"EPS,DELTA"``), ``delta_slack``, ``time_limit`` (seconds; a session estimated to take
            longer, or more memory than the machine has, is refused before any process starts).

    Returns:
        :class:`Simulation` (``to_dict()`` is ``mpdp simulate --json``; its ``inputs`` are
        :meth:`SimulationConfig.inputs`).

    Raises:
        ParameterError: a bad value (named, one line), an unknown option (the known ones listed), before any
            process starts; with ``resume``, inputs other than the folder's run's.
        UnguardedMainError: called from a script's top level without ``if __name__ == "__main__":``.
        TransportError, WorkerError: the broker or a worker process failed (``results.json`` says so).

    Example (a live run; not run as a doctest)::

        import mpdp
        r = mpdp.simulate(dataset="house-votes-84", epsilon=1.0, repetitions=50, seed=3)
        r.to_dict()["rounds"][0]["empirical_accuracy"]
        r.plot()
        again = mpdp.simulate(mpdp.SimulationConfig(dataset="house-votes-84", epsilon=1.0), seed=4)
    """
    check_main_guard("mpdp.simulate")
    if isinstance(config, str):
        config, options = None, {"dataset": config} | options
    run = SimulationConfig.of(config, options)
    dataset, votes, parties, rounds, label_column = run.dataset, run.votes, run.parties, run.rounds, run.label_column
    epsilon, delta, repetitions, function, rule, seed = (run.epsilon, run.delta, run.repetitions, run.function,
                                                         run.rule, run.seed)
    protocol, servers, threshold = run.protocol, run.servers, run.threshold
    broker, party_broker, reconnect_window = run.broker, run.party_broker, run.reconnect_window
    out, force, resume, workers, connections, validators = (run.out, run.force, run.resume, run.workers,
                                                            run.connections, run.validators)
    executor = run.executor
    secure, party_decisions, alpha, round_timeout = run.secure, run.party_decisions, run.alpha, run.round_timeout
    budget, delta_slack, time_limit = run.budget, run.delta_slack, run.time_limit
    if dataset is None and votes is None and parties is None:
        dataset = "house-votes-84"
    check_run_options(repetitions, seed, secure, workers, alpha, DEFAULT_ROUND_TIMEOUT if round_timeout is None
                      else round_timeout, protocol, rule, party_decisions)
    parsed_budget = (None if budget is None else Budget.parse(budget) if isinstance(budget, str)
                     else Budget(*budget))
    delta_slack = check_privacy_options(parsed_budget, delta_slack)
    previous = PreviousRun.read(out, force) if resume else None
    f = function_of(function)
    if f.count_values(1) is None:
        raise ParameterError("function", f.name, "a symmetric function for the live run (majority, sum, xor, "
                             "and, or, threshold:T)", hint="truth tables: see mpdp.accuracy")
    epsilon_text = epsilon if isinstance(epsilon, str) else repr(epsilon) if isinstance(epsilon, (int, float)) else ""
    if protocol != "rr":
        check_curator_arguments(f, epsilon_text or "per-party:list", protocol)
        if parsed_budget is not None:
            raise ParameterError("budget", budget, "per-party budgets with protocol rr only",
                                 hint=f"with protocol {protocol} the parties release nothing themselves")
    if protocol == "mpc":
        check_servers(servers, threshold, "servers", "threshold")
    settings = broker if isinstance(broker, BrokerSettings) else BrokerSettings.from_url(broker)
    party_settings = (party_broker if party_broker is None or isinstance(party_broker, BrokerSettings)
                      else party_broker_settings(party_broker, "party_broker"))
    seeds = SeedTree.from_seed(seed if previous is None else previous.seed)
    data = _dataset(dataset, votes, parties, rounds, label_column, seeds.dataset())
    connections, connections_why = resolve_connections(connections, data.num_parties)
    round_timeout = round_timeout if round_timeout is not None else max(
        DEFAULT_ROUND_TIMEOUT, round_timeout_floor(data.num_parties, repetitions, connections))
    settings = settings.with_window(reconnect_window, simulation_window(round_timeout))
    if party_settings is not None:
        party_settings = party_settings.with_window(reconnect_window, simulation_window(round_timeout))
    session_cost(data.num_parties, data.num_rounds, repetitions, connections).check(check_time_limit(time_limit))
    mechanisms = _mechanisms(epsilon, delta, data.num_parties, seeds.epsilons())
    for r in range(data.num_rounds):  # the participants of a round are at most the voters
        ids = np.flatnonzero(data.bits[:, r] >= 0)
        if ids.size:
            check_rule_size([mechanisms[i] for i in ids], f, rule)
    function_name = f.name if not isinstance(function, str) else function
    inputs = run.inputs(dataset=data.name, epsilon=epsilon_text or "per party (see parties)",
                        function=function_name, round_timeout=round_timeout, delta_slack=delta_slack)
    kind = rule if protocol == "rr" else "geometric" if protocol == "mpc" and f.name == "sum" else "curator"
    parties_section = [{"id": i, "epsilon": m.epsilon, "delta": m.delta} for i, m in enumerate(mechanisms)]
    digest = data_digest(data.bits, json.loads(to_json_text(parties_section)))
    if previous is not None:
        previous.check(inputs, digest)
    cache = RuleCache()
    run_config = RunConfig(
        session=f"sim-{uuid.uuid4().hex[:12]}" if previous is None else previous.session,
        round_names=data.round_names, bits=data.bits,
        mechanisms=tuple(mechanisms), repetitions=repetitions, seed=seeds.seed, function=f,
        measure=accuracy_measure("zero-one", 2),
        rule_factory=(None if protocol != "rr" else
                      zero_one_rules(rule, engine="posterior" if rule == "average" else "auto", cache=cache)),
        party_rule=rule if party_decisions and protocol == "rr" else None, broker=settings, workers=workers,
        store_path=None, secure=secure,
        round_timeout=round_timeout, ready_timeout=ready_timeout_floor(data.num_parties, connections),
        budget=parsed_budget, delta_slack=delta_slack, protocol=protocol,
        servers=servers, threshold=threshold, party_broker=party_settings, connections=connections,
        validators=validators, executor=executor)
    folder = RunFolder.open(out, force, resume, OUT_FILES, announce=progress)  # the inputs are all checked
    run_config = dataclasses.replace(run_config, store_path=folder.store)
    started = strict_document({
        "session": run_config.session, "protocol": protocol, "dataset": data.name, "function": function_name,
        "repetitions": repetitions, "seed": seeds.seed, "seed_given": seed is not None, "mode": rng_mode(secure),
        "alpha": alpha, "rule": kind, "party_decisions": party_decisions and protocol == "rr",
        "parties": parties_section, "rounds": [],
        "topology": Topology.of_run(run_config, connections_why).to_json()}, "simulate", inputs)

    def run_section(status: RunStatus, error: str | None = None) -> dict[str, Any]:
        return folder.run_section(status, run_config.session, run_config.round_names, digest, error)

    begun = run_section("running")
    done, total = begun["rounds_decided"], len(begun["rounds"])
    if previous is not None and progress:
        print(f"mpdp: resuming the run in {folder.path} at round {done + 1} of {total}" if done < total else
              f"mpdp: the run in {folder.path} is complete ({total} of {total} rounds): nothing to run"
              if previous.complete else f"mpdp: the run in {folder.path} has its {total} rounds recorded: "
              "writing its results", file=sys.stderr)
    # a complete run resumed: its results as recorded; no broker, no process, no file written
    recorded = None if previous is None or not previous.complete else recorded_outcome(
        run_config, previous.document["broker"]["kind"], previous.document["broker"]["url"],
        float(previous.document["wall_time_s"]))
    if recorded is not None:
        outcome = recorded
    else:
        folder.write(started | {"run": begun})
        if progress and run_config.k * (total - done) >= LARGE_RUN:  # before a long wait, say how long
            print(estimate_run(run_config.k, total - done, repetitions, connections).describe()
                  + f"; connections {connections} ({connections_why})", file=sys.stderr)
        try:
            with Progress(data, enabled=progress, rounds_done=done,
                          messages_done=folder.messages_recorded(run_config.session)) as bar:
                outcome = await run_async(run_config, progress=bar.update)
        except (MpdpError, asyncio.CancelledError, KeyboardInterrupt) as exc:
            failed = isinstance(exc, MpdpError)
            section = run_section("failed" if failed else "interrupted",
                                  str(exc) if failed else "stopped by a signal (Ctrl-C, SIGTERM or SIGHUP)")
            if not folder.discard_if_empty(section):
                folder.write(started | {"run": section})
            print(folder.stopped(section), file=sys.stderr)
            raise
    evaluations = evaluate_run(outcome, data.bits, mechanisms, f, rule=kind, alpha=alpha, rng=seeds.theory(),
                               rules=cache)
    privacy = None
    if outcome.protocol == "rr":  # the curator protocol releases no per-party answers
        privacy = privacy_section(outcome.spent, outcome.rounds, parsed_budget, outcome.delta_slack, repetitions)
    document = results_document(
        session=outcome.session, protocol=protocol, dataset=data.name, function=function_name,
        repetitions=repetitions, seed=seeds.seed, seed_given=seed is not None,
        secure=secure, broker_kind=outcome.broker_kind, broker_url=outcome.broker_url, alpha=alpha, rule=kind,
        party_decisions=party_decisions and protocol == "rr", wall_time=outcome.wall_time, mechanisms=mechanisms,
        rounds=evaluations, privacy=privacy)
    document["topology"] = Topology.of_run(run_config, connections_why, outcome.broker_url).to_json()
    document["run"] = run_section("complete")
    title = (f"{data.name}: {'' if protocol == 'rr' else protocol + ', '}{document['function']}, epsilon "
             f"{epsilon_text or 'per party'}, {repetitions} repetitions")
    if recorded is not None:  # the document as the run wrote it, unchanged
        assert previous is not None
        return Simulation(previous.document, tuple(evaluations), outcome, title, folder.path)
    result = Simulation(strict_document(document, "simulate", inputs), tuple(evaluations), outcome, title,
                        folder.path)
    from mpdp.analysis.plot_style import save_figure

    save_figure(result.plot(), folder.path / "accuracy.png")
    folder.write(result.document)
    return result


def _blocking(run_async: Callable[P, Coroutine[Any, Any, T]]) -> Callable[P, T]:
    """The blocking twin of ``run_async``: ``asyncio.run`` it, or, inside a running event loop (Jupyter),
    run it on a worker thread with its own loop and wait for the result."""

    @functools.wraps(run_async)
    def run(*args: P.args, **kwargs: P.kwargs) -> T:
        check_main_guard("mpdp.simulate")
        return run_blocking(run_async(*args, **kwargs))

    return run


simulate = _blocking(simulate_async)
"""The blocking live run: ``mpdp.simulate(...)`` takes the arguments of :func:`simulate_async` and returns its
:class:`Simulation`; works in scripts under a ``__main__`` guard, in a terminal and in Jupyter (there on a worker
thread)."""
