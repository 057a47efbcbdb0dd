"""``mpdp sweep``: accuracy against epsilon, exact theory against Monte Carlo, with a verdict per point.

    mpdp sweep --epsilon LO:HI:STEPS [--scale log|linear] [--parties K,...] [--delta D,...]
               [--function F,...] [--rule average,worst-case] [--observer central,party]
               [--protocol rr|curator] [--dataset NAME|PATH [--label-column]] [--samples N] [--seed S] [--alpha A]
               [--jobs N | --executor dask://HOST:PORT | --live [--broker URL] [--workers W]]
               [--out DIR [--force]] [--time-limit SECONDS] [--json [FILE]] [--quiet]

Every point of the grid (epsilon x k x delta x function x rule x observer): k parties run randomized
response at (epsilon, delta); the central observer (or party 0, who also knows its own bit) applies its
optimal rule (002). The exact theory is the rule's average accuracy over uniform inputs (002 eq. (1),
what the Monte Carlo measures) and its worst-case accuracy (eq. (3)); for a binary function (majority,
and, or, threshold:T, xor; not sum) also the optimal central mechanism of 001, the trusted curator's
curve (--protocol curator: the curator's release is the decision, measured against that curve, also
live). The Monte Carlo draws, per repetition, one binomial count per group of parties
with equal parameters and decides by the rule's table on counts; each point gets its Clopper-Pearson interval and an exact binomial test against
the theory at level alpha / points (Bonferroni). Points run in parallel with --jobs; the result is the same
bit for bit for the same --seed whatever --jobs (one SeedSequence child per point), also on a Dask cluster
(--executor dask://HOST:PORT, the optional extra mpdp[dask]).

--dataset house-votes-84 (or a CSV path, as mpdp simulate --dataset) takes each round's real input
instead of uniformly random ones: per point (central observer only) the exact accuracy of the rule on each
bill's votes (its voting members only), averaged over the bills (the worst-case column: the worst bill),
the trusted curator's on the same votes, and --samples Monte Carlo privatizations of every bill; each
bill is tested at alpha / (points x bills). With --live, each point is one session over the dataset's
rounds as mpdp simulate --dataset runs it, --samples repetitions a round.

--live measures each point by a live session instead, as mpdp simulate runs it: k parties in worker
processes with uniformly random bits, --samples rounds of one privatization each, published over a real
MQTT broker (one for the whole sweep: our own by default, or --broker URL); the same verdicts, the same
points for the same --seed. Live points run one after another (no --jobs, no --executor), each a few
seconds at least. Either way the command prints an estimate of the time and memory before it starts (the
Monte Carlo sweep's on one core, divided by its worker processes plus their start-up), and refuses a sweep
estimated over --time-limit SECONDS (default 1800). --jobs N runs at most N processes: at most one per point
and per usable core, and none (the points run here) when their start-up would cost more than they save;
the first line says so.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Iterator
from concurrent.futures import Executor
from contextlib import contextmanager
from types import TracebackType
from typing import Any

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress
from rich.table import Table

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.reports.documents import to_json_text
from mpdp.analysis.sweeps.dataset_sweep import DatasetSweepPlan, plan_dataset_sweep
from mpdp.analysis.sweeps.grid import SCALES, grid_of
from mpdp.analysis.sweeps.sweep import PROTOCOLS, SweepPlan, SweepResult, plan_sweep
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.api.sweeps import SWEEP_TIME_LIMIT, sweep, sweep_estimate, sweep_processes
from mpdp.parties.cli.args import (
    add_broker_options,
    add_label_column,
    add_time_limit,
    broker_options,
    count_value,
    emit,
    option_names,
    papers_epilog,
    parse_number_list,
    plain_text,
    seed_value,
)
from mpdp.parties.rounds.executor import dask_address, dask_client
from mpdp.parties.session.datasets import DATASET_NAMES, load_dataset
from mpdp.parties.session.live_sweep import check_live_plan, estimate_live_sweep
from mpdp.parties.session.output_paths import fresh_output_dir
from mpdp.parties.session.progress import bar_shown
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import check_time_limit, noun

__all__ = ["register"]

OUT_FILES = ("sweep.json", "sweep.csv", "sweep.png")
#: Default --samples: Monte Carlo repetitions, and live rounds per point.
SAMPLES, LIVE_SAMPLES = 100_000, 200

EPILOG = """\
examples:
  mpdp sweep --function majority --parties 101 --epsilon 0.05:2:20 --out sweep-101
  mpdp sweep --epsilon 0.1:3:12 --parties 11,101,435 --rule average --observer central --jobs 2
  mpdp sweep --epsilon 0:2:9 --scale linear --function xor --delta 0,0.01 --parties 21 --json
  mpdp sweep --epsilon 0.5:2:3 --parties 7 --rule average --observer central --live --samples 300
  mpdp sweep --epsilon 0.5:2:3 --parties 7 --protocol curator --live --samples 300
  mpdp sweep --epsilon 0.1:3:8 --parties 15 --function and,xor,threshold:5 --protocol curator
  mpdp sweep --dataset house-votes-84 --epsilon 0.1:2:5 --samples 2000 --out house-sweep

--out DIR writes sweep.json (the --json document), sweep.csv (one row per point) and sweep.png (theory
curves, measured points with their intervals). JSON: schema_version, mpdp_version, inputs, and a list
points, each with epsilon, rule, observer, theoretical_accuracy, empirical_accuracy, ci_low, ci_high,
consistent, curator_accuracy (a binary function, central observer: the trusted curator's exact
accuracy, 001's optimal central mechanism; else null); source:
monte-carlo or live. Exit code 1 when some point is inconsistent with theory.
""" + papers_epilog("001", "002")


class _Progress:
    """The sweep's size (its inputs checked) on entry, then a rich bar over the work in ``unit`` (points, or
    live rounds), shown once the sweep has run for a second (short sweeps stay quiet). ``console`` None:
    silent."""

    def __init__(self, console: Console | None, header: str, unit: str) -> None:
        self._console = console
        self._header = header
        bar_console = Console(stderr=True)
        self._enabled = console is not None and bar_shown(bar_console)  # Jupyter without ipywidgets: no bar
        self._started = time.monotonic()
        self._bar = RichProgress(TextColumn("[bold]sweep"), BarColumn(), MofNCompleteColumn(), TextColumn(unit),
                                 TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
                                 console=bar_console, transient=False)
        self._task = self._bar.add_task("sweep", total=None)
        self._live = False

    def __enter__(self) -> _Progress:
        if self._console is not None:
            self._console.print(self._header, highlight=False)
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self._live:
            self._bar.stop()

    def update(self, done: int, total: int) -> None:
        """The sweep's progress callback."""
        self._bar.update(self._task, completed=done, total=total)
        if self._enabled and not self._live and time.monotonic() - self._started > 1.0:
            self._bar.start()
            self._live = True


def _check_live(args: argparse.Namespace) -> None:
    """--live runs points one after another; the live options need --live."""
    if args.live and (args.jobs != 1 or args.executor is not None):
        given = f"--jobs {args.jobs}" if args.jobs != 1 else f"--executor {args.executor}"
        raise ParameterError("--live", given, "points one after another: --live without --jobs or --executor",
                             hint="each live session already runs its parties on every core (--workers)")
    if not args.live:
        for name, default in (("workers", None), ("round_timeout", 60.0), ("broker", None), ("cafile", None),
                              ("cert", None), ("key", None), ("mqtt_version", None), ("reconnect_window", None)):
            if getattr(args, name) != default:
                raise ParameterError(f"--{name.replace('_', '-')}", getattr(args, name), "only with --live")


def _print_table(result: SweepResult, stream: Console) -> None:
    """The points, one row each; the setting columns only where the grid varies them."""
    varying = [(name, attr) for name, attr in (("k", "parties"), ("delta", "delta"), ("f", "function"),
                                               ("rule", "rule"), ("observer", "observer"))
               if len({getattr(p, attr) for p in result.points}) > 1]
    bills = "dataset" in result.inputs  # theory: mean over the rounds; also the worst round and the curator
    tests = len(result.points) * (len(result.inputs["rounds"]) if bills else 1)
    table = Table(title=f"mpdp sweep: {_points(len(result.points))}, alpha = {result.alpha:g} "
                        f"(each {'round' if bills else 'point'} tested at {result.alpha / tests:.3g})",
                  box=box.SIMPLE_HEAD, show_edge=False)
    extra = ["worst round", "curator"] if bills else []
    for name in ["epsilon", *(n for n, _ in varying), "theory", *extra, "measured",
                 f"{100 * (1 - result.alpha):g}% interval", "ok"]:
        table.add_column(name, justify="right", no_wrap=True)
    for p in result.points:
        more = [f"{p.theoretical_worst_case:.4f}",
                "-" if p.curator_accuracy is None else f"{p.curator_accuracy:.4f}"] if bills else []
        table.add_row(f"{p.epsilon:.4g}", *(str(getattr(p, attr)) for _, attr in varying),
                      f"{p.theoretical_accuracy:.4f}", *more, f"{p.empirical_accuracy:.4f}",
                      f"{p.ci_low:.4f}-{p.ci_high:.4f}", "yes" if p.consistent else "[red]NO[/red]")
    stream.print(table)


def _where(plan: SweepPlan | DatasetSweepPlan, args: argparse.Namespace) -> str:
    """Where the points run, as the header says it: ``Dask scheduler URL``, ``here``, ``2 worker processes``,
    and why not ``--jobs`` when it is not (capped at the cores or points; a pool that would not pay)."""
    if args.executor:
        return f"Dask scheduler {args.executor}"
    processes, why = sweep_processes(plan, args.jobs)
    where = "here" if processes == 1 else f"{processes} worker processes"
    return where if not why else f"{where} (--jobs {args.jobs}: {why})"


@contextmanager
def _dask(url: str | None, jobs: int) -> Iterator[Executor | None]:
    """The executor of a Dask scheduler (``dask://HOST:PORT``), or None (the points run here or on
    ``--jobs`` worker processes, :func:`mpdp.sweep`'s own)."""
    if url is None:
        yield None
        return
    dask_address(url)
    if jobs != 1:
        raise ParameterError("--jobs", jobs, "1 with --executor (the Dask workers set the parallelism)")
    client = dask_client(url)
    with client:
        yield client.get_executor()


def _points(n: int) -> str:
    """``1 point``, ``n points``."""
    return f"{n} {noun(n, 'point')}"


def _run(args: argparse.Namespace) -> int:
    grid = grid_of(args.epsilon, args.scale, "--epsilon")
    if args.dataset is not None and args.parties is not None:
        raise ParameterError("--parties", args.parties, "none with --dataset (its rows are the parties)")
    if args.dataset is None and args.label_column is not None:
        raise ParameterError("--label-column", args.label_column, "only with a CSV --dataset")
    parties = parse_number_list(args.parties or "101", "--parties", int)
    deltas = parse_number_list(args.delta, "--delta")
    functions = parse_number_list(args.function, "--function", str)
    rules = None if args.rule is None else parse_number_list(args.rule, "--rule", str)
    observers = None if args.observer is None else parse_number_list(args.observer, "--observer", str)
    if args.jobs < 1:
        raise ParameterError("--jobs", args.jobs, "an integer >= 1")
    _check_live(args)
    samples = args.samples if args.samples is not None else LIVE_SAMPLES if args.live else SAMPLES
    options: dict[str, Any] = dict(delta=deltas, function=functions, rule=rules,
                                   observer=observers, samples=samples, seed=args.seed, alpha=args.alpha,
                                   scale=args.scale, protocol=args.protocol)
    names: dict[str, str | tuple[str, Any]] = {name: (f"--{name.replace('_', '-')}", getattr(args, name)) for name in (
        "parties", "delta", "function", "rule", "observer", "seed", "alpha", "protocol", "workers", "round_timeout")}
    names["samples"] = ("--samples", samples)
    data = None if args.dataset is None else load_dataset(args.dataset, args.label_column)
    with option_names(**names):
        plan = (plan_sweep(grid, parties=parties, **options) if data is None else
                plan_dataset_sweep(grid, data.bits, data.round_names, dataset=data.name, **options))
    tasks = plan.tasks if isinstance(plan, SweepPlan) else plan.plan.tasks
    if data is None:
        options["parties"] = parties
    else:
        options.update(dataset=args.dataset, label_column=args.label_column)
    console = Console()  # standard output, or standard error with --json alone (command_output)
    if not console.is_terminal:  # a file or a pipe: no terminal width to fit, keep rows whole
        console = Console(width=160)
    if args.live:  # each session's run options checked as mpdp simulate checks them, then the points'
        SimulationConfig.of(None, {name: getattr(args, name) for name in (
            "workers", "round_timeout", "seed", "alpha", "protocol")}, "mpdp sweep --live")
        with option_names(**names):
            check_live_plan(plan)
        runs = (f"{samples} {noun(samples, 'round')}" if data is None else f"{data.num_rounds} "
                f"{noun(data.num_rounds, 'round')} of {data.name} (k = {data.num_parties}) x {samples} "
                f"{noun(samples, 'repetition')}")
        header = (f"mpdp sweep --live: {_points(len(tasks))} x {runs}, one session after another "
                  f"over one broker; {estimate_live_sweep(plan).describe()}")
        options.update(live=True, broker=BrokerSettings.from_url(**broker_options(args)), workers=args.workers,
                       round_timeout=args.round_timeout)
    else:
        per = "" if data is None else f" x {data.num_rounds} {noun(data.num_rounds, 'round')} of {data.name} (k = {data.num_parties})"
        header = (f"mpdp sweep: {_points(len(tasks))}{per} x {samples} samples, {_where(plan, args)}; "
                  f"{sweep_estimate(plan, jobs=args.jobs, executor=args.executor is not None).describe()}")
    limit = check_time_limit(args.time_limit, "--time-limit")
    sweep_estimate(plan, live=args.live, jobs=args.jobs, executor=args.executor is not None).check(
        limit, memory_here=args.executor is None)  # an executor's points use its workers' memory
    out = fresh_output_dir(args.out, "--out", OUT_FILES, args.force) if args.out is not None else None
    with (_dask(args.executor, args.jobs) as executor,
          _Progress(console if not args.quiet else None, header, "rounds" if args.live else "points") as progress,
          option_names(**names)):
        jobs = 1 if executor is not None or args.live else args.jobs
        result = sweep(grid, executor=executor, jobs=jobs, time_limit=limit, progress=progress.update,
                       **options).result
    emit(args, result.to_dict())
    if not args.quiet:
        _print_table(result, console)
    if out is not None:
        (out / "sweep.json").write_text(to_json_text(result.to_dict(), indent=1) + "\n", encoding="utf-8")
        result.to_csv(str(out / "sweep.csv"))
        save_figure(result.plot(), out / "sweep.png")
    if not args.quiet:
        written = [str(out / f) for f in OUT_FILES] if out is not None else []
        written += [str(args.output.json_file)] if args.output.json_file is not None else []
        verdict = ("every point consistent with theory" if result.consistent else
                   f"{sum(not p.consistent for p in result.points)} point(s) INCONSISTENT with theory")
        console.print(f"{verdict} (alpha = {args.alpha:g}, Bonferroni over {_points(len(result.points))})", highlight=False)
        for path in written:
            console.print(f"wrote {path}", highlight=False)
    return 0 if result.consistent else 1


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``sweep`` sub-command."""
    p = subparsers.add_parser("sweep", description=plain_text(__doc__), epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--epsilon", required=True, metavar="LO:HI:STEPS",
                   help="the epsilon grid in nats, HI and LO included (or one value)")
    p.add_argument("--scale", choices=SCALES, default="log", help="grid spacing (default log; linear allows LO = 0)")
    p.add_argument("--parties", default=None, metavar="K,...", help="numbers of parties k (default 101)")
    p.add_argument("--delta", default="0", metavar="D,...",
                   help="delta per party (default 0; > 0: four-output randomized response, k <= 60)")
    p.add_argument("--function", default="majority", metavar="F,...",
                   help="symmetric functions: majority, xor, and, or, sum, threshold:T (default majority)")
    p.add_argument("--rule", default=None, metavar="KIND,...",
                   help="optimal rules: average (002 eqs. (2), (5)), worst-case (eqs. (4), (6)); default both")
    p.add_argument("--observer", default=None, metavar="WHO,...",
                   help="central (the central observer) and/or party (party 0, knowing its own bit); default both")
    p.add_argument("--protocol", choices=PROTOCOLS, default="rr",
                   help="rr: the parties' randomized responses and the observer's optimal rule (default); "
                        "curator: a trusted curator releases the function by 001's optimal central mechanism "
                        "(a binary function: majority, and, or, threshold:T, xor; no --rule or --observer; "
                        "also with --live)")
    data = p.add_argument_group("dataset", "--dataset: the rounds' real inputs instead of uniformly random ones")
    data.add_argument("--dataset", metavar="NAME|PATH",
                      help=f"{' or '.join(DATASET_NAMES)}, or a CSV of 1/0 (y/n, ? = takes no part) as mpdp "
                           "simulate reads it: per point, the exact accuracy on each round's votes (its "
                           "participants only) averaged over the rounds, Monte Carlo --samples per round; "
                           "central observer only, no --parties; with --live: one session per point, "
                           "--samples repetitions a round")
    add_label_column(data)
    p.add_argument("--samples", type=count_value, default=None,
                   help=f"Monte Carlo repetitions per point (default {SAMPLES}); with --live, rounds per point, "
                        f"each one privatization of fresh random bits (default {LIVE_SAMPLES})")
    p.add_argument("--seed", type=seed_value, default=0, help="root seed (default 0): same seed, same result")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="family-wise level of the verdicts; intervals at 1 - alpha (default 0.05)")
    p.add_argument("--jobs", type=count_value, default=1, help="worker processes over points, at most (default 1; capped at the points and the usable "
                        "cores; none where the points' work would not pay for their start-up)")
    p.add_argument("--executor", metavar="dask://HOST:PORT",
                   help="run the points on a running Dask distributed scheduler (the optional extra: "
                        "pip install 'mpdp[dask]'); same result as --jobs for the same --seed")
    live = p.add_argument_group("live", "--live: each point measured by a live session over a real MQTT broker, "
                                        "points one after another (not with --jobs or --executor)")
    live.add_argument("--live", action="store_true",
                      help="measure each point live (parties in worker processes, over the broker) instead of "
                           "by the Monte Carlo engine")
    live.add_argument("--workers", type=count_value, default=None, metavar="W",
                      help="--live: worker processes hosting each session's parties (default: one per core)")
    live.add_argument("--round-timeout", type=float, default=60.0, metavar="SECONDS",
                      help="--live: a round closes once no new answer came for this long (default: 60); a round closed with parties "
                           "unheard stops the sweep")
    add_broker_options(p, "URL|embedded|mosquitto", "--live: where the sessions publish (default: "
                                                    "$MPDP_BROKER_URL, else one broker of our own for the sweep)")
    add_time_limit(p, "the whole sweep (estimated before any point starts: on one core, divided by the worker processes, "
                      "plus their start-up)",
                   SWEEP_TIME_LIMIT)
    p.add_argument("--out", metavar="DIR", help="write " + ", ".join(OUT_FILES) + " here (created if missing; a folder "
                   "holding an earlier sweep or another kind of run is refused)")
    p.add_argument("--force", action="store_true", help="replace the earlier run's files in --out")
    p.set_defaults(run=_run)
