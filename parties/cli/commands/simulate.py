"""``mpdp simulate``: parties privatize their bits over a real MQTT broker; the observer decides.

Everything the user typed is validated before any process starts (dataset, function, epsilon,
delta, repetitions, broker URL). Then the runner starts the broker, the observer and the worker
processes; a progress bar follows the messages; the table compares each round's measured accuracy
with the exact theory. ``--out DIR`` keeps ``transcripts.sqlite``, ``results.json`` and
``accuracy.png`` of this one run (a directory that holds another run's is refused unless ``--force``;
without ``--out`` they go to a new ``mpdp-run-XXXX`` folder under the temporary directory, named at the
start and kept); each round is in the transcript once decided, and ``results.json`` is written at the
start and at the end, also when the run fails or is interrupted (its ``run`` section says how; ``--resume
--out DIR`` continues it); ``--json FILE`` writes the JSON alone. ``--budget EPS,DELTA`` stops each party
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
import sys
from collections.abc import Sequence

from mpdp.analysis.reports.report import REPETITIONS_NOTE, RoundResult
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.simulation import OUT_FILES, simulate
from mpdp.parties.api.simulation_config import SimulationConfig
from mpdp.parties.cli.args import (
    add_broker_options,
    add_label_column,
    add_time_limit,
    add_validators_option,
    broker_options,
    emit,
)
from mpdp.parties.cli.display import party_summary, print_results
from mpdp.parties.rounds.config import CONNECTION_CHOICES, PROTOCOLS
from mpdp.parties.rounds.outcome import (
    UNDECIDED,
    RoundOutcome,
    double_release_text,
    failed_rounds_text,
    lost_answers_text,
    no_answers_text,
)
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK, privacy_summary
from mpdp.parties.session.datasets import DATASET_NAMES
from mpdp.parties.session.sizing import SESSION_TIME_LIMIT
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import FUNCTION_NAMES

__all__ = ["OUT_FILES", "register"]

EPILOG = f"""\
examples:
  mpdp simulate --dataset house-votes-84 --repetitions 200
  mpdp simulate --dataset house-votes-84 --epsilon 0.5:2 --delta 0.01 --out results/
  mpdp simulate --dataset house-votes-84 --epsilon 0.5:2 --delta 0.01 --out results/ --resume
  mpdp simulate --parties 50 --rounds 5 --function sum --seed 7 --broker mqtt://127.0.0.1:1883
  mpdp simulate --parties 100 --broker mqtt://center:1883 --party-broker mqtt://edge:1883
  mpdp simulate --parties 1000 --seed 7 --broker mqtt://center:1883 --executor dask://scheduler:8786
  mpdp simulate --dataset house-votes-84 --epsilon 0.5 --repetitions 20 --budget 50,1e-5
  mpdp simulate --dataset house-votes-84 --protocol curator --epsilon 1 --repetitions 200
  mpdp simulate --dataset house-votes-84 --protocol mpc --epsilon 1 --repetitions 50

functions: {', '.join(FUNCTION_NAMES[:-1])}
broker: none given starts our own (mosquitto if installed, else embedded amqtt); 'embedded'
  forces the in-process broker; mqtt://HOST:PORT uses a running one (also via MPDP_BROKER_URL).
  --party-broker mqtt://HOST:PORT: the parties attach there (an edge broker bridged to --broker's,
  or another node of its cluster), the observer stays on --broker.
mode: by default a simulation (seeded numpy generators, reproducible with --seed); --secure makes
  each party privatize with the OS CSPRNG (deployment mode, not reproducible).

protocol: rr (default) = distributed, no one is trusted: each party publishes its randomized
  response and the observer decides. curator = central model: each party encrypts its true bit to a
  trusted curator (X25519, HKDF-SHA256, ChaCha20-Poly1305), the broker sees ciphertexts only, and the
  curator publishes only the output of the optimal (epsilon, delta) mechanism for --function (majority,
  and, or, xor or threshold:T); the table shows the rr protocol's exact accuracy at the same epsilon beside it. mpc = the curator's
  release with no one trusted: each party Shamir-shares its bit among --servers M compute servers
  (share i sealed to server i), the servers (MPyC processes, T < M/2 may collude) compute the count
  and draw the release inside the computation; only the release is opened. A server that fails or is
  missing fails the run (MPyC has no dropout tolerance). mpc also releases --function sum with the
  two-sided geometric mechanism (000), clamped to 0..n.

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
    p.add_argument("--protocol", choices=PROTOCOLS, default="rr",
                   help="rr: randomized response, no one trusted (default); curator: a trusted curator "
                        "releases the optimal central mechanism's output (majority, and, or, xor, threshold:T; "
                        "one epsilon); mpc: the majority's (or sum's) release computed by --servers "
                        "compute servers in MPyC, no one sees a vote")
    p.add_argument("--servers", type=int, default=3, metavar="M",
                   help="--protocol mpc: compute servers, each its own process (default: 3)")
    p.add_argument("--threshold", type=int, default=1, metavar="T",
                   help="--protocol mpc: colluding servers tolerated, T < M/2 (default: 1)")
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
    p.add_argument("--seed", type=int, default=None, help="make the run reproducible (default: OS entropy; "
                   "protocol mpc: the parties' draws only, the servers' noise comes from MPyC)")
    add_broker_options(p, "URL|embedded|mosquitto", "where to publish (default: $MPDP_BROKER_URL, else start "
                                                    "our own)", window_default="max(60 s, --round-timeout)")
    p.add_argument("--party-broker", default=None, metavar="URL",
                   help="mqtt://HOST[:PORT] of a running broker the parties attach to, when not --broker's: an "
                        "edge broker bridged to it or another node of its cluster (see docs/deploy.md)")
    p.add_argument("--workers", type=int, default=None, metavar="W",
                   help="worker processes hosting the parties (default: one per core)")
    p.add_argument("--connections", choices=CONNECTION_CHOICES, default="auto",
                   help="auto (default): per-party while the parties' sockets fit the file-descriptor limit and "
                        "set up within 45 CPU-s (about 17,000 parties), else per-worker; "
                        "per-party: each party its own MQTT connection, as deployed; per-worker: "
                        "each worker multiplexes its parties over one connection (each party still draws its own "
                        "answer; without --validators the worker sends them in bundles of up to 256 on its bundle "
                        "topic, signed once with a key every party endorsed, else each signed on its party's "
                        "topic): fewer sockets, less memory "
                        "and far less per-message work for thousands of parties; per-party past the file-descriptor "
                        "limit is refused before anything starts")
    add_validators_option(p)
    p.add_argument("--executor", metavar="dask://HOST:PORT", default=None,
                   help="run the parties' workers as tasks on this Dask scheduler's cluster (pip install "
                        "'mpdp[dask]'); they reach --broker (or --party-broker) by its URL, the observer stays "
                        "here; same results as a local run for the same --seed")
    p.add_argument("--secure", action="store_true",
                   help="deployment mode: parties privatize with the OS CSPRNG")
    rule = p.add_mutually_exclusive_group()  # --worst-case --rule average: refused, not the later one winning
    rule.add_argument("--rule", choices=("average", "worst-case"), default="average",
                      help="the observer's decision rule: the optimal average-case rule (default) or the "
                           "optimal worst-case rule (randomized; LP over count classes)")
    rule.add_argument("--worst-case", dest="rule", action="store_const", const="worst-case",
                      help="shorthand for --rule worst-case")
    p.add_argument("--party-decisions", action=argparse.BooleanOptionalAction, default=False,
                   help="each party also decides f from the published transcript and its own bit with its "
                        "own optimal rule of the same kind (default: off)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="family-wise level of the consistency tests over all rounds (default: 0.05)")
    p.add_argument("--round-timeout", type=float, default=None, metavar="SECONDS",
                   help="a round closes once no new message came for this long (default: 60, or thrice the "
                        "estimated time of a round's messages when that is longer: minutes at 10^5 parties)")
    p.add_argument("--budget", default=None, metavar="EPS,DELTA",
                   help="each party's privacy budget: it abstains (budget-exhausted) from a round whose "
                        "answer would take it past (EPS, DELTA) by the exact optimal composition; every "
                        "repetition counts as a release (default: no budget, spending still reported)")
    p.add_argument("--delta-slack", type=float, default=DEFAULT_DELTA_SLACK, metavar="D",
                   help=f"delta_tilde of the exact optimal composition, in [0, 1) (default: {DEFAULT_DELTA_SLACK:g})")
    p.add_argument("--out", metavar="DIR",
                   help="write this run's transcripts.sqlite, results.json and accuracy.png here (refused "
                        "if DIR holds an earlier run's; default: a new mpdp-run-XXXX folder under the "
                        "temporary directory, named at the start)")
    p.add_argument("--force", action="store_true",
                   help="with --out: replace an earlier run's files in DIR")
    p.add_argument("--resume", action="store_true",
                   help="with --out DIR: continue the run there (failed or interrupted) with the same inputs; "
                        "rounds already decided are kept (only --round-timeout may change; --epsilon and --budget are "
                        "compared by value: 1, 1.0 and 1e0 are one epsilon; the broker, workers "
                        "and connections may: they are results.json's topology, not inputs); a complete run is "
                        "reported as recorded, nothing started or written")
    add_time_limit(p, "the session (estimated from parties and rounds before any process starts)",
                   SESSION_TIME_LIMIT)
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    """Run the session and print its tables (standard error with ``--json`` alone, nothing with ``--quiet``)."""
    if (args.dataset is None) == (args.parties is None):
        raise ParameterError("input", args.dataset or args.parties,
                             "exactly one of --dataset NAME|PATH or --parties K --rounds R")
    given = {name: getattr(args, name) for name in SimulationConfig.model_fields if hasattr(args, name)}
    config = SimulationConfig.of(None, given | {"broker": BrokerSettings.from_url(**broker_options(args))},
                                 "mpdp simulate")
    result = simulate(config, progress=not args.quiet)
    document = result.document  # read only here: no copy (to_dict's deep copy of 10^6 party entries took seconds)
    measured = [o.status not in UNDECIDED for o in result.outcome.rounds]
    if result.outcome.protocol != "rr":
        print_results(document, result.rounds, [r.rr_theoretical_accuracy or 0.0 for r in result.evaluations],
                      decided=measured)
    else:
        print_results(document, result.rounds, debiased=[r.debiased for r in result.evaluations], decided=measured)
        if args.party_decisions:
            print(party_summary([r.parties for r in result.evaluations if r.parties is not None], args.rule))
        print(privacy_summary(document["privacy"]))
    emit(args, document, indent=2)
    decided = [r for r, m in zip(result.rounds, measured, strict=True) if m]
    return max(_timeouts(result.outcome.rounds), _inconsistent(decided, len(result.rounds), args.alpha))


def _inconsistent(rounds: Sequence[RoundResult], total: int, alpha: float) -> int:
    """Name the decided ``rounds`` (of ``total``) whose measured accuracy is inconsistent with the exact theory
    (an undecided round has no accuracy to test: it is named by :func:`_timeouts`); exit code 1 if any (as
    ``mpdp sweep``: a script can trust a run that exits 0)."""
    bad = [r.round for r in rounds if not r.consistent]
    if not bad:
        return 0
    names = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    print(f"mpdp: error: {len(bad)} of {total} round(s) inconsistent with theory at family-wise alpha "
          f"{alpha:g}: {names} (a correct run fails this check with probability at most alpha; exit code 1)",
          file=sys.stderr)
    return 1


def _timeouts(rounds: Sequence[RoundOutcome]) -> int:
    """Warn about rounds that closed at their timeout with parties unheard and rounds in which every party
    abstained (``no-answers``), name the failed ones (no answer at all), the parties that released twice and
    the answers lost on the way; exit code 1 if any."""
    errors = [text for text in (failed_rounds_text(rounds), double_release_text(rounds), lost_answers_text(rounds))
              if text is not None]
    for text in errors:
        print(f"mpdp: error: {text}", file=sys.stderr)
    empty = no_answers_text(rounds)
    if empty is not None:
        print(f"mpdp: warning: {empty} (exit code 1)", file=sys.stderr)
    late = [r for r in rounds if r.status == "timeout" and r.absent.size]
    if not late:
        return 0 if not errors and empty is None else 1
    names = ", ".join(f"{r.name} ({r.absent.size} absent)" for r in late[:5])
    more = f" and {len(late) - 5} more" if len(late) > 5 else ""
    print(f"mpdp: warning: {len(late)} round(s) closed at --round-timeout with parties not heard: "
          f"{names}{more}; their truth and accuracy cover only the parties heard (exit code 1)",
          file=sys.stderr)
    return 1
