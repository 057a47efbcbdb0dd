"""``mpdp observe``: the central observer and coordinator of a deployed session.

Waits until every party of the roster is ready, announces the rounds (signed), records every message
in SQLite, decides each round with the optimal rule and announces the end. It does not know the bits:
it prints its decisions and its posterior (P(decision | transcript), expected number of ones).
A session whose every round is recorded in ``--out`` runs nothing: one line says so, the end is
announced again (party hosts still waiting exit) and the recorded decisions are printed and written.
``--out DIR`` keeps ``transcripts.sqlite`` and ``decisions.json`` (the ``observe`` document: the versioned
header of :mod:`mpdp.analysis.reports.documents`, schema ``schemas/observe.schema.json``) of this one session: the
same session again: a complete one runs nothing, one in progress needs ``--resume`` (said at once; recorded
rounds are skipped); a directory holding another session's is refused unless
``--force``, which replaces them. A round with no answer at all is ``failed`` (no decision; shown in
the table, ``"status": "failed"`` in ``decisions.json``) and the command exits 1 naming the failed rounds.
A party that sent two different validly signed answers to one round released twice (two hosts serve it, or
a host lost its answer record): both are kept in the transcript, the round lists it in ``double_released``,
its privacy is charged for both, and the command exits 1 naming it. A round in which every party heard from
abstained (e.g. ``policy``: more repetitions than the hosts allow) is ``no-answers``: not decided (-1), the
abstention reasons in ``decisions.json``, a warning line naming the rounds and reasons, exit 1. Answers expected but
never received (their host answered the round for other parties: a broker that dropped them, a client in the
validators' share group, a host that died mid-round) are listed per round in ``lost`` and named in a warning line. The ``privacy`` section of ``decisions.json`` is each party's spent
(epsilon, delta) as the transcript shows it (exact optimum, 000 Theorem 3.3, at delta_tilde 1e-6, and basic
composition), the same section as ``mpdp simulate``'s ``results.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

from mpdp.analysis.reports.documents import to_json_text, versioned
from mpdp.analysis.theory.observer_posterior import round_posterior
from mpdp.parties.cli.args import (
    add_deployed_session,
    add_label_column,
    add_validators_option,
    broker_options,
    command_inputs,
    emit,
    option_names,
)
from mpdp.parties.cli.display import truth_text
from mpdp.parties.rounds.outcome import (
    UNDECIDED,
    RoundOutcome,
    double_release_text,
    failed_rounds_text,
    lost_answers_text,
    no_answers_text,
)
from mpdp.parties.rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    ledgers_from_rounds,
    privacy_section,
)
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.parties.rounds.session_files import (
    SessionRoster,
    coordinator_key_path,
    read_private_key,
    read_roster,
)
from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.parties.session.datasets import DATASET_NAMES, load_dataset
from mpdp.parties.session.external_broker import deployment_endpoint
from mpdp.parties.session.observe import HOSTS_MODE, ObserveConfig, observe
from mpdp.parties.session.output_paths import fresh_output_dir, output_dir, run_files
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import FUNCTION_NAMES, BooleanFunction, parse_function
from mpdp.protocols.numerics.cost import noun

__all__ = ["register"]

EPILOG = f"""\
examples:
  mpdp observe --roster keys/roster.json --keys keys/coordinator --dataset-rounds house-votes-84 \\
      --function passed --broker mqtt://broker.example:1883 --out results/
  mpdp observe --roster keys/roster.json --keys keys/coordinator --rounds 3 --function sum
  mpdp observe ... --out results/ --resume      # an observer of this session stopped: continue it
  mpdp observe --roster keys/roster.json --keys keys/coordinator --rounds 3 --protocol mpc --out results/

mpc: the roster of `mpdp keys --protocol mpc`; every `mpdp mpc-server` of it must be running (the first
  round waits --wait-parties seconds for them); each round's release is the servers' (majority: 001's
  optimal central mechanism; sum: 000's geometric mechanism), signed by every server and recorded.

rounds: --dataset-rounds takes the round names from a dataset's header ({', '.join(DATASET_NAMES)} or a
  CSV path; its bits are not used); --rounds R names them round-1..round-R.
functions: {', '.join(FUNCTION_NAMES[:-2])} (symmetric).
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``observe`` sub-command."""
    p = subparsers.add_parser(
        "observe", description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_deployed_session(p, "directory of coordinator.key")
    rounds = p.add_argument_group("rounds (one of)")
    rounds.add_argument("--dataset-rounds", metavar="NAME|PATH", help="round names from a dataset's header")
    rounds.add_argument("--rounds", type=int, metavar="R", help="R rounds named round-1..round-R")
    add_label_column(rounds)
    p.add_argument("--function", default="majority", metavar="NAME",
                   help="what the observer computes over each round's participants (default: majority)")
    p.add_argument("--repetitions", type=int, default=1, metavar="N",
                   help="releases per party and round (default: 1; each one spends privacy)")
    p.add_argument("--wait-parties", type=float, default=300.0, metavar="SECONDS",
                   help="how long to wait for every party to be ready (default: 300)")
    p.add_argument("--round-timeout", type=float, default=60.0, metavar="SECONDS",
                   help="a round closes once no new answer came for this long (a round still receiving answers "
                        "stays open); the missing are recorded absent (default: 60)")
    p.add_argument("--out", default=".", metavar="DIR",
                   help="write this session's transcripts.sqlite and decisions.json here; the same session "
                        "in progress needs --resume, another one's files are refused (default: .)")
    p.add_argument("--force", action="store_true", help="replace another session's files in --out")
    p.add_argument("--resume", action="store_true",
                   help="replace an observer of this session that stopped mid-session (same --out): do not wait "
                        "for ready reports (the hosts are serving), continue at the first round not recorded; "
                        "the parties re-send their recorded answers (restart within their --observer-grace)")
    p.add_argument("--protocol", choices=("rr", "mpc"), default=None,
                   help="rr: observe randomized response; mpc: coordinate the roster's compute servers "
                        "(`mpdp mpc-server`), check and record their signed releases (default: mpc if the "
                        "roster lists compute servers, else rr)")
    add_validators_option(p)
    p.add_argument("--allow-anonymous-broker", action="store_true",
                   help="let --validators run on a broker without a login (a simulation or test broker; a "
                        "deployment uses the validator logins of `mpdp broker config --validators N`)")
    p.set_defaults(run=_run)


#: The files of one session in ``--out DIR``.
OUT_FILES = run_files("transcripts.sqlite", "decisions.json")


def _other_sessions(out: Path, session: str) -> list[str]:
    """The sessions other than ``session`` whose transcript or decisions are in ``out``."""
    found: set[str] = set()
    if (out / "transcripts.sqlite").exists():
        check_store_file(out / "transcripts.sqlite")  # resumed or refused: never read damaged
        with TranscriptStore(out / "transcripts.sqlite") as store:
            found.update(store.sessions())
    if (out / "decisions.json").exists():
        with contextlib.suppress(ValueError, AttributeError):
            found.add(str(json.loads((out / "decisions.json").read_text()).get("session")))
    return sorted(found - {session})


def _check_resumable(out: Path, session: str) -> None:
    """Raise ParameterError unless ``out`` holds a transcript of ``session`` (what --resume continues)."""
    store = out / "transcripts.sqlite"
    sessions: list[str] = []
    if store.exists():
        with TranscriptStore(store) as opened:
            sessions = list(opened.sessions())
    if session not in sessions:
        raise ParameterError("--resume", str(store), f"the transcript of session {session!r} (started by an "
                             "earlier `mpdp observe --out` into this directory)", hint="nothing to resume there")


def _recorded(store: Path, session: str) -> int:
    """How many rounds of ``session`` the transcript ``store`` holds (0 without the file)."""
    if not store.exists():
        return 0
    with TranscriptStore(store) as opened:
        return len(opened.recorded_rounds(session))


def _resume_hint(store: Path, session: str, rounds: int) -> None:
    """On a stop (Ctrl-C, SIGTERM, SIGHUP) of a session that began: print where its rounds are and how to continue."""
    if not store.exists():
        return
    with TranscriptStore(store) as opened:
        if session not in opened.sessions():
            return
        recorded = opened.recorded_rounds(session)
    where = f"rounds {format_ranges(recorded)} of {rounds}" if recorded else f"no round of {rounds} yet"
    print(f"mpdp: the observer stopped: {where} recorded in {store}; to continue: the same command with --resume "
          "(within the party hosts' --observer-grace)", file=sys.stderr)


def _round_names(args: argparse.Namespace) -> tuple[str, ...]:
    if (args.dataset_rounds is None) == (args.rounds is None):
        raise ParameterError("rounds", args.dataset_rounds or args.rounds,
                             "exactly one of --dataset-rounds NAME|PATH or --rounds R")
    if args.rounds is not None:
        if args.rounds < 1:
            raise ParameterError("--rounds", args.rounds, "an integer >= 1")
        return tuple(f"round-{j + 1}" for j in range(args.rounds))
    return load_dataset(args.dataset_rounds, args.label_column).round_names


def _round_json(outcome: RoundOutcome, facts: SessionRoster, function: BooleanFunction) -> dict[str, object]:
    """One round of ``decisions.json``; randomized response adds the observer's posterior, mpc's round
    (no symbols: the shares are sealed) has the servers' release as its decisions."""
    document: dict[str, object] = {
        "round": outcome.index, "name": outcome.name, "status": outcome.status,
        "participants": outcome.participants.tolist(), "abstained": outcome.abstained.tolist(),
        "absent": outcome.absent.tolist(), "messages_received": outcome.messages_received,
        "messages_rejected": outcome.messages_rejected, "decisions": outcome.decisions.tolist(),
        "double_released": outcome.double_released.tolist(), "lost": outcome.lost.tolist(), "reasons": outcome.reasons,
    }
    if outcome.symbols is not None:  # randomized response; a failed round (no answer) has no posterior
        posterior = None if outcome.status in UNDECIDED else round_posterior(
            [facts.roster.mechanisms[p] for p in outcome.participants], function, outcome.symbols)
        document["posterior_of_decision"] = None if posterior is None else posterior.of(outcome.decisions).tolist()
        document["expected_ones"] = None if posterior is None else posterior.expected_ones.tolist()
    return document


def _print_table(document: dict[str, object]) -> None:
    console = Console(file=sys.stdout, width=None if sys.stdout.isatty() else 132)
    function = str(document["function"])
    mpc = document["protocol"] == "mpc"  # a release, no transcript of symbols: no posterior columns
    who = "the compute servers release" if mpc else "observer decides"
    table = Table(title=f"session {document['session']}: {who} {function} "
                        f"({document['repetitions']} release(s) per party and round)")
    posterior = () if mpc else ("P(decision | tau)", "E\\[ones | tau]")
    for name in ("round", "status", "voting", "abstained", "absent", "decision", *posterior):
        table.add_column(name, justify="left" if name in ("round", "status", "decision") else "right")
    rounds = document["rounds"]
    assert isinstance(rounds, list)
    for r in rounds:
        if r["status"] == "failed":
            table.add_row(r["name"], "[bold red]FAILED[/]", "0", "0", str(len(r["absent"])),
                          "[red]none: no answer[/]", "-", "-")
            continue
        if r["status"] == "no-answers":
            table.add_row(r["name"], "[bold yellow]no-answers[/]", "0", str(len(r["abstained"])),
                          str(len(r["absent"])), "[yellow]none: all abstained[/]", "-", "-")
            continue
        decisions = np.asarray(r["decisions"])
        values, counts = np.unique(decisions, return_counts=True)
        top = int(values[np.argmax(counts)])
        decision = truth_text(function, top) + ("" if decisions.size == 1 else f" ({counts.max()}/{decisions.size})")
        cells = () if mpc else (f"{np.mean(r['posterior_of_decision']):.4f}", f"{np.mean(r['expected_ones']):.1f}")
        status = (r["status"] + (" [bold red]DOUBLE RELEASE[/]" if r["double_released"] else "")
                  + (f" [bold red]{len(r['lost'])} LOST[/]" if r.get("lost") else ""))
        table.add_row(r["name"], status, str(len(r["participants"])), str(len(r["abstained"])),
                      str(len(r["absent"])), decision, *cells)
    console.print(table)


def _privacy(outcomes: tuple[RoundOutcome, ...], facts: SessionRoster, repetitions: int) -> dict[str, object]:
    """Each party's spent privacy by the transcript: one charge of ``repetitions`` releases per round it
    sent symbols in (its own answer record holds the same ledger)."""
    ledgers = ledgers_from_rounds(outcomes, facts.roster.mechanisms, repetitions, DEFAULT_DELTA_SLACK)
    return privacy_section([ledger.spent() for ledger in ledgers], outcomes, None, DEFAULT_DELTA_SLACK, repetitions)


def _run(args: argparse.Namespace) -> int:
    endpoint = deployment_endpoint(**broker_options(args))
    facts = read_roster(args.roster)
    coordinator = read_private_key(coordinator_key_path(args.keys), facts, None)
    function = parse_function(args.function)
    protocol = args.protocol or facts.protocol
    others = _other_sessions(output_dir(args.out, "--out"), facts.session)
    if args.resume:
        _check_resumable(output_dir(args.out, "--out"), facts.session)
    out = fresh_output_dir(args.out, "--out", OUT_FILES if others else (), args.force, writes=OUT_FILES)
    with option_names(validators=("--validators", args.validators)):
        config = ObserveConfig(
            facts=facts, coordinator_key=coordinator, endpoint=endpoint, round_names=_round_names(args),
            function=function, store_path=out / "transcripts.sqlite", repetitions=args.repetitions,
            round_timeout=args.round_timeout, wait_parties=args.wait_parties, resume=args.resume,
            protocol=protocol, validators=args.validators, allow_anonymous_broker=args.allow_anonymous_broker,
        )
    complete = _recorded(config.store_path, facts.session) == len(config.round_names)
    try:  # a complete session: loaded from the store, and the end announced again
        outcomes = observe(config, on_wait=lambda line: print(f"mpdp: {line}", file=sys.stderr, flush=True))
    except KeyboardInterrupt:
        _resume_hint(config.store_path, facts.session, len(config.round_names))
        raise
    if complete:
        print(f"mpdp: session {facts.session} is complete ({len(outcomes)} {noun(len(outcomes), 'round')} recorded in {config.store_path}): "
              "nothing to run; the end is announced again, so party hosts still waiting exit", file=sys.stderr)
    document = versioned("observe", {
        "session": facts.session, "mode": HOSTS_MODE, "protocol": protocol,
        "function": args.function, "repetitions": args.repetitions,
        "broker": endpoint.url, "store": str(config.store_path),
        "rounds": [_round_json(o, facts, function) for o in outcomes],
        "privacy": _privacy(outcomes, facts, args.repetitions),
    }, command_inputs(args))
    (out / "decisions.json").write_text(to_json_text(document, indent=1) + "\n")
    emit(args, document)
    _print_table(document)
    errors = [text for text in (double_release_text(outcomes), failed_rounds_text(outcomes)) if text is not None]
    for text in errors:
        print(f"mpdp: error: {text}; the session is recorded in {config.store_path} (exit code 1)", file=sys.stderr)
    lost = lost_answers_text(outcomes)
    if lost is not None:
        print(f"mpdp: warning: {lost}", file=sys.stderr)
    empty = no_answers_text(outcomes)
    if empty is not None:
        print(f"mpdp: warning: {empty}; a party abstains by its own policy (mpdp party --max-repetitions, --budget) "
              "(exit code 1)", file=sys.stderr)
    return 1 if errors or empty is not None else 0
