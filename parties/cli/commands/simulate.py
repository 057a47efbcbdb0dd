"""``mpdp simulate``: parties privatize their bits over a real MQTT broker; the observer decides.

Everything the user typed is validated before any process starts (dataset, function, epsilon,
delta, repetitions, broker URL). Then the runner starts the broker, the observer and the worker
processes; a progress bar follows the messages; the table compares each round's measured accuracy
with the exact theory. ``--out DIR`` keeps ``transcripts.sqlite``, ``results.json`` and
``accuracy.png`` of this one run (a directory that holds another run's is refused unless ``--force``;
without ``--out`` the transcript stays in memory); ``--json FILE`` writes the JSON alone. ``--budget EPS,DELTA`` stops each party
before an answer would take it past its budget; every party's spent privacy (exact optimum at
``--delta-slack`` next to basic composition) is in the ``privacy`` section and the last line.

``--rule worst-case`` (or ``--worst-case``) makes the observer decide with the optimal worst-case rule
(002 eq. (6), randomized; draws from a generator of the seed, or the CSPRNG with ``--secure``) and the
theory column its exact accuracy on the true input. With party decisions (``--party-decisions``) each
participant also decides f itself with its own optimal rule of the same kind (002 eqs. (2), (4)) from
the transcript the observer publishes after each round; every round reports their mean measured
accuracy and its exact theory.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from mpdp.analysis.accounting import Budget
from mpdp.analysis.evaluation import RoundEvaluation
from mpdp.analysis.report import (
    REPETITIONS_NOTE,
    RoundResult,
    plot_rounds,
    results_document,
)
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.cli.args import (
    add_label_column,
    fresh_output_dir,
    output_file,
    run_files,
    to_json_text,
)
from mpdp.parties.cli.curator_arguments import check_curator_arguments
from mpdp.parties.cli.display import Progress, party_summary, print_results
from mpdp.parties.cli.params import parse_mechanisms
from mpdp.parties.rounds.outcome import RoundOutcome, failed_rounds_text
from mpdp.parties.rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    privacy_section,
    privacy_summary,
)
from mpdp.parties.session.datasets import (
    DATASET_NAMES,
    Dataset,
    load_dataset,
    random_dataset,
)
from mpdp.parties.session.evaluate import evaluate_run
from mpdp.parties.session.runner import RunConfig, RunOutcome, run
from mpdp.parties.session.seeds import SeedTree
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import (
    FUNCTION_NAMES,
    BooleanFunction,
    accuracy_measure,
    parse_function,
)
from mpdp.protocols.mechanisms import RandomizedResponse
from mpdp.protocols.rule_factory import RuleCache, check_rule_size, zero_one_rules

__all__ = ["OUT_FILES", "register"]

#: The files of one run in ``--out DIR``.
OUT_FILES = run_files("transcripts.sqlite", "results.json", "accuracy.png")

EPILOG = f"""\
examples:
  mpdp simulate --dataset house-votes-84 --repetitions 200
  mpdp simulate --dataset house-votes-84 --epsilon 0.5:2 --delta 0.01 --out results/
  mpdp simulate --parties 50 --rounds 5 --function sum --seed 7 --broker mqtt://127.0.0.1:1883
  mpdp simulate --dataset house-votes-84 --epsilon 0.5 --repetitions 20 --budget 50,1e-5
  mpdp simulate --dataset house-votes-84 --protocol curator --epsilon 1 --repetitions 200

functions: {', '.join(FUNCTION_NAMES[:-1])}
broker: none given starts our own (mosquitto if installed, else embedded amqtt); 'embedded'
  forces the in-process broker; mqtt://HOST:PORT uses a running one (also via MPDP_BROKER_URL).
mode: by default a simulation (seeded numpy generators, reproducible with --seed); --secure makes
  each party privatize with the OS CSPRNG (deployment mode, not reproducible).

protocol: rr (default) = distributed, no one is trusted: each party publishes its randomized
  response and the observer decides. curator = central model: each party encrypts its true bit to a
  trusted curator (X25519, HKDF-SHA256, ChaCha20-Poly1305), the broker sees ciphertexts only, and the
  curator publishes only the output of the optimal (epsilon, delta) mechanism for the majority; the
  table shows the rr protocol's exact accuracy at the same epsilon beside it.

{REPETITIONS_NOTE}
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``simulate`` sub-command."""
    p = subparsers.add_parser(
        "simulate",
        description=__doc__.split("\n\n")[0].split(": ", 1)[1],
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    data = p.add_argument_group("input (one of)")
    data.add_argument("--dataset", metavar="NAME|PATH",
                      help=f"{' or '.join(DATASET_NAMES)}, or a CSV of 1/0 (y/n, ? = takes no part): "
                           "one row per party, one column per round")
    data.add_argument("--parties", type=int, metavar="K", help="K parties with random bits")
    data.add_argument("--rounds", type=int, metavar="R", default=None, help="R rounds of random bits")
    add_label_column(data)
    p.add_argument("--protocol", choices=("rr", "curator"), default="rr",
                   help="rr: randomized response, no one trusted (default); curator: a trusted curator "
                        "releases the optimal central mechanism's output (majority only, one epsilon)")
    p.add_argument("--function", default="majority", metavar="NAME",
                   help="what the observer computes over the parties taking part (default: majority "
                        "= strictly more ones than zeros; 'passed' for the House)")
    p.add_argument("--epsilon", default="1.0", metavar="E|LO:HI|FILE",
                   help="each party's epsilon: one value, a uniform range per party, or a file with one "
                        "'epsilon[,delta]' line per party (default: 1.0)")
    p.add_argument("--delta", type=float, default=0.0, metavar="D",
                   help="delta in [0, 1); > 0 selects the four-output randomized response (default: 0)")
    p.add_argument("--repetitions", type=int, default=200, metavar="N",
                   help="independent privatizations of each round (default: 200)")
    p.add_argument("--seed", type=int, default=None, help="make the run reproducible (default: OS entropy)")
    p.add_argument("--broker", default=None, metavar="URL|embedded|mosquitto",
                   help="where to publish (default: $MPDP_BROKER_URL, else start our own)")
    p.add_argument("--workers", type=int, default=None, metavar="W",
                   help="worker processes hosting the parties (default: one per core)")
    p.add_argument("--secure", action="store_true",
                   help="deployment mode: parties privatize with the OS CSPRNG")
    p.add_argument("--rule", choices=("average", "worst-case"), default="average",
                   help="the observer's decision rule: the optimal average-case rule (default) or the "
                        "optimal worst-case rule (randomized; LP over count classes)")
    p.add_argument("--worst-case", dest="rule", action="store_const", const="worst-case",
                   help="shorthand for --rule worst-case")
    p.add_argument("--party-decisions", action=argparse.BooleanOptionalAction, default=False,
                   help="each party also decides f from the published transcript and its own bit with its "
                        "own optimal rule of the same kind (default: off)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="family-wise level of the consistency tests over all rounds (default: 0.05)")
    p.add_argument("--round-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="how long the observer waits for a round's messages (default: 60)")
    p.add_argument("--budget", default=None, metavar="EPS,DELTA",
                   help="each party's privacy budget: it abstains (budget-exhausted) from a round whose "
                        "answer would take it past (EPS, DELTA) by the exact optimal composition; every "
                        "repetition counts as a release (default: no budget, spending still reported)")
    p.add_argument("--delta-slack", type=float, default=DEFAULT_DELTA_SLACK, metavar="D",
                   help=f"delta_tilde of the exact optimal composition, in [0, 1) (default: {DEFAULT_DELTA_SLACK:g})")
    p.add_argument("--out", metavar="DIR",
                   help="write this run's transcripts.sqlite, results.json and accuracy.png here (refused "
                        "if DIR holds an earlier run's; default: the transcript is not kept)")
    p.add_argument("--force", action="store_true",
                   help="with --out: replace an earlier run's files in DIR")
    p.add_argument("--json", metavar="FILE",
                   help="write the results as JSON here ('-': to standard output, the table to stderr)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(run=_run)


def _dataset(args: argparse.Namespace, rng: np.random.Generator) -> Dataset:
    if (args.dataset is None) == (args.parties is None):
        raise ParameterError("input", args.dataset or args.parties,
                             "exactly one of --dataset NAME|PATH or --parties K --rounds R")
    if args.dataset is not None:
        if args.rounds is not None:
            raise ParameterError("--rounds", args.rounds, "only with --parties")
        return load_dataset(args.dataset, args.label_column)
    if args.label_column is not None:
        raise ParameterError("--label-column", args.label_column, "only with --dataset PATH")
    return random_dataset(args.parties, args.rounds if args.rounds is not None else 1, rng)


def _check_numbers(args: argparse.Namespace) -> None:
    # parsed in place: args.budget becomes a Budget (or None), args.delta_slack a checked float
    args.budget = None if args.budget is None else Budget.parse(args.budget)
    args.delta_slack = check_privacy_options(args.budget, args.delta_slack, budget_name="--budget",
                                             slack_name="--delta-slack")
    if args.repetitions < 1:
        raise ParameterError("--repetitions", args.repetitions, "an integer >= 1")
    if args.seed is not None and args.seed < 0:
        raise ParameterError("--seed", args.seed, "an integer >= 0")
    if args.seed is not None and args.secure:
        raise ParameterError("--seed", args.seed, "no seed with --secure",
                             hint="deployment mode draws from the OS CSPRNG and cannot be reproduced")
    if args.workers is not None and args.workers < 1:
        raise ParameterError("--workers", args.workers, "an integer >= 1")
    if not 0 < args.alpha < 1:
        raise ParameterError("--alpha", args.alpha, "a level in (0, 1)")
    if not args.round_timeout > 0:
        raise ParameterError("--round-timeout", args.round_timeout, "a number of seconds > 0")
    # output paths are checked (and --out created) before any process starts: no run is lost at the end
    if args.force and args.out is None:
        raise ParameterError("--force", True, "only with --out DIR (it replaces an earlier run's files there)")
    args.out = None if args.out is None else fresh_output_dir(args.out, "--out", OUT_FILES, args.force)
    if args.json is not None and args.json != "-":
        args.json = output_file(args.json, "--json")


def _check_rule(args: argparse.Namespace, dataset: Dataset, mechanisms: list[RandomizedResponse],
                function: BooleanFunction) -> None:
    if args.protocol == "curator" and (args.rule != "average" or args.party_decisions):
        raise ParameterError("--rule" if args.rule != "average" else "--party-decisions",
                             args.rule if args.rule != "average" else True,
                             "the defaults with --protocol curator (the curator has no decision rule)")
    for r in range(dataset.bits.shape[1]):  # the participants of a round are at most the voters
        ids = np.flatnonzero(dataset.bits[:, r] >= 0)
        if ids.size:
            check_rule_size([mechanisms[i] for i in ids], function, args.rule)


def _document(args: argparse.Namespace, dataset: Dataset, seed: int, mechanisms: list[RandomizedResponse],
              outcome: RunOutcome, rounds: list[RoundEvaluation]) -> dict[str, object]:
    privacy = None
    if outcome.protocol == "rr":  # the curator protocol releases no per-party answers
        privacy = privacy_section(outcome.spent, outcome.rounds, args.budget, outcome.delta_slack, args.repetitions)
    return results_document(
        session=outcome.session, protocol=args.protocol, dataset=dataset.name, function=args.function, repetitions=args.repetitions,
        seed=seed, seed_given=args.seed is not None, secure=args.secure, broker_kind=outcome.broker_kind,
        broker_url=outcome.broker_url, alpha=args.alpha, rule=args.rule if args.protocol == "rr" else "curator",
        party_decisions=bool(args.party_decisions) and args.protocol == "rr", wall_time=outcome.wall_time,
        mechanisms=mechanisms, rounds=rounds, privacy=privacy)


def _execute(args: argparse.Namespace, dataset: Dataset, mechanisms: list[RandomizedResponse],
             function: BooleanFunction, broker: BrokerSettings, seed: int,
             store: Path | None, rules: RuleCache) -> RunOutcome:
    config = RunConfig(
        session=f"sim-{uuid.uuid4().hex[:12]}",
        round_names=dataset.round_names,
        bits=dataset.bits,
        mechanisms=tuple(mechanisms),
        repetitions=args.repetitions,
        seed=seed,
        function=function,
        measure=accuracy_measure("zero-one", 2),
        rule_factory=(None if args.protocol != "rr" else
                      zero_one_rules(args.rule, engine="posterior" if args.rule == "average" else "auto",
                                     cache=rules)),
        party_rule=args.rule if args.party_decisions and args.protocol == "rr" else None,
        broker=broker,
        workers=args.workers,
        store_path=store,
        secure=args.secure,
        round_timeout=args.round_timeout,
        budget=args.budget,
        delta_slack=args.delta_slack,
        protocol=args.protocol,
    )
    with Progress(dataset, enabled=not args.quiet) as progress:
        return run(config, progress=progress.update)


def _run(args: argparse.Namespace) -> int:
    """``--json -`` keeps standard output for the JSON: the table and summaries go to stderr."""
    json_stream = sys.stdout
    human = contextlib.redirect_stdout(sys.stderr) if args.json == "-" else contextlib.nullcontext()
    with human:
        return _simulate(args, json_stream)


def _simulate(args: argparse.Namespace, json_stream: TextIO) -> int:
    _check_numbers(args)
    function = parse_function(args.function, "--function")
    if function.count_values(1) is None:
        raise ParameterError("--function", args.function,
                             "a symmetric function for the live run (majority, sum, xor, and, or, "
                             "threshold:T)", hint="truth tables: see `mpdp accuracy`")
    if args.protocol == "curator":
        check_curator_arguments(function, args.epsilon)
        if args.budget is not None:
            raise ParameterError("--budget", args.budget, "per-party budgets with --protocol rr only",
                                 hint="the curator, not the parties, releases outputs")
    broker = BrokerSettings.from_url(args.broker)
    seeds = SeedTree.from_seed(args.seed)
    seed = seeds.seed
    dataset = _dataset(args, seeds.dataset())
    mechanisms = parse_mechanisms(args.epsilon, args.delta, dataset.num_parties, seeds.epsilons())
    _check_rule(args, dataset, mechanisms, function)
    rules = RuleCache()
    out_dir = args.out
    store = None if out_dir is None else out_dir / "transcripts.sqlite"
    outcome = _execute(args, dataset, mechanisms, function, broker, seed, store, rules)
    rule = args.rule if args.protocol == "rr" else "curator"
    rounds = evaluate_run(outcome, dataset.bits, mechanisms, function, rule=rule, alpha=args.alpha,
                          rng=seeds.theory(), rules=rules)
    document = _document(args, dataset, seed, mechanisms, outcome, rounds)
    results = [r.result for r in rounds]
    if outcome.protocol == "curator":
        print_results(document, results, [r.rr_theoretical_accuracy or 0.0 for r in rounds])
    else:
        print_results(document, results)
        if args.party_decisions:
            print(party_summary([r.parties for r in rounds if r.parties is not None], args.rule))
        privacy = document["privacy"]
        assert isinstance(privacy, dict)  # a randomized-response run has its privacy section
        print(privacy_summary(privacy))
    _write(args, out_dir, dataset, document, results, json_stream)
    return _timeouts(outcome.rounds)


def _timeouts(rounds: Sequence[RoundOutcome]) -> int:
    """Warn about rounds that closed at their timeout with parties unheard, name the failed ones (no
    answer at all); exit code 1 if any."""
    failed = failed_rounds_text(rounds)
    if failed is not None:
        print(f"mpdp: error: {failed}", file=sys.stderr)
    late = [r for r in rounds if r.status == "timeout" and r.absent.size]
    if not late:
        return 0 if failed is None else 1
    names = ", ".join(f"{r.name} ({r.absent.size} absent)" for r in late[:5])
    more = f" and {len(late) - 5} more" if len(late) > 5 else ""
    print(f"mpdp: warning: {len(late)} round(s) closed at --round-timeout with parties not heard: "
          f"{names}{more}; their truth and accuracy cover only the parties heard (exit code 1)",
          file=sys.stderr)
    return 1


def _write(args: argparse.Namespace, out_dir: Path | None, dataset: Dataset, document: dict[str, object],
           results: list[RoundResult], json_stream: TextIO) -> None:
    if out_dir is not None:
        (out_dir / "results.json").write_text(to_json_text(document, indent=2) + "\n")
        plot_rounds(results, out_dir / "accuracy.png",
                    f"{dataset.name}: {'' if args.protocol == 'rr' else 'curator, '}{args.function}, "
                    f"epsilon {args.epsilon}, "
                    f"{args.repetitions} repetitions")
    if args.json == "-":
        print(to_json_text(document, indent=2), file=json_stream)
    elif args.json is not None:
        args.json.write_text(to_json_text(document, indent=2) + "\n")
