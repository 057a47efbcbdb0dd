"""``mpdp party``: host some parties of a deployed session: answer every announced round until the end.

Each party is an asyncio task with its own MQTT connection and its own private key; the process reads
its parties' bits from the dataset (the other rows are dropped) and keeps them: no bit is ever sent.
Deployment mode by default (the OS CSPRNG); ``--seed`` makes it a reproducible simulation.

The privacy policy is the host's own: ``--max-repetitions N`` (default 1) and ``--budget EPS,DELTA``; a round
asking for more gets a signed abstention ``policy`` / ``budget-exhausted`` and no release. Every answer is
committed to ``--record FILE`` (SQLite) before it is published; a re-announced round (after any restart)
gets the same signed message again, never a fresh draw. A host is refused when the keys folder notes
another record for its parties in this session (:mod:`mpdp.parties.session.host_records`).
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from mpdp.analysis.privacy.accounting import Budget
from mpdp.parties.cli.args import add_deployed_session, add_label_column, broker_options, emit, seed_value
from mpdp.parties.rounds.answering import OBSERVER_GRACE
from mpdp.parties.rounds.privacy import DEFAULT_DELTA_SLACK, check_privacy_options
from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster
from mpdp.parties.session.datasets import DATASET_NAMES, load_dataset
from mpdp.parties.session.external_broker import deployment_endpoint
from mpdp.parties.session.host import MIN_OBSERVER_GRACE, HostConfig, host_bits, host_parties
from mpdp.parties.session.host_records import claim_record
from mpdp.parties.session.host_summary import answers_summary

__all__ = ["register"]

EPILOG = f"""\
examples:
  mpdp party --roster keys/roster.json --keys keys/parties-0-217 --parties 0-217 \\
      --dataset house-votes-84 --broker mqtt://broker.example:1883
  mpdp party --roster keys/roster.json --keys keys/parties --parties 0-4 --dataset votes.csv --seed 7
  mpdp party --roster keys/roster.json --keys keys/parties --parties 0-434 --dataset house-votes-84 \\
      --protocol mpc      (a roster of mpdp keys --protocol mpc: shares sealed to its pinned servers)

dataset: {', '.join(DATASET_NAMES)} or a CSV of 1/0 (y/n, ? = takes no part), one column per round,
  with either one row per party of the roster or one row per hosted party (in --parties order).
mode: deployment by default (each party privatizes with the OS CSPRNG, exact Bernoulli draws);
  --seed S is a simulation (party i draws from SeedSequence(S).spawn(k)[i], as `mpdp simulate --seed S`).
policy: a round announcing more than --max-repetitions releases, or one whose releases would take a party
  past --budget (exact optimal composition, 000 Theorem 3.3, at delta_tilde 1e-6), gets a signed abstention
  (policy, budget-exhausted). Answers and ledgers are kept in --record (default KEYS/answers-FIRST.sqlite);
  keep that file: after a restart the host re-sends its recorded answers and never draws twice. The keys
  folder notes which record its parties answered each session with (answer-records.json): a host started
  with another record, a missing one or one created again is refused (--new-record overrides, after a check).
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``party`` sub-command."""
    p = subparsers.add_parser(
        "party", description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_deployed_session(p, "directory of the parties' key files")
    p.add_argument("--parties", required=True, metavar="RANGES", help="the party ids hosted here, e.g. 0-217")
    p.add_argument("--dataset", required=True, metavar="NAME|PATH", help="where the hosted parties' bits are")
    add_label_column(p)
    p.add_argument("--seed", type=seed_value, default=None,
                   help="simulation mode: reproducible seeded generators (default: deployment mode)")
    p.add_argument("--idle-timeout", type=float, default=3600.0, metavar="SECONDS",
                   help="give up after this long without the first announcement (default: 3600)")
    p.add_argument("--observer-grace", type=float, default=OBSERVER_GRACE, metavar="SECONDS",
                   help="once the session started, leave (exit 2, with a message) when the observer has sent no "
                        f"round and no heartbeat for this long: it is gone (default: {OBSERVER_GRACE:g}; at least "
                        f"{MIN_OBSERVER_GRACE:g}: the observer's heartbeat comes every second)")
    p.add_argument("--max-repetitions", type=int, default=1, metavar="N",
                   help="the most releases of a party's bit per round; a round asking more gets a 'policy' "
                        "abstention (default: 1)")
    p.add_argument("--budget", default=None, metavar="EPS,DELTA",
                   help="each hosted party's privacy budget: it abstains (budget-exhausted) from a round that "
                        "would take it past (default: no budget, spending still recorded)")
    p.add_argument("--record", type=Path, default=None, metavar="FILE",
                   help="the host's answer record, SQLite (default: KEYS/answers-FIRST.sqlite, FIRST = the "
                        "smallest hosted party id)")
    p.add_argument("--new-record", action="store_true",
                   help="start although the keys folder notes another answer record for these parties in this "
                        "session (lost, moved, created again): only after checking that no round it answered "
                        "can be announced again, else every bit is released twice")
    p.add_argument("--protocol", choices=("rr", "mpc"), default=None,
                   help="rr: randomized response; mpc: Shamir shares sealed to the compute servers pinned in the "
                        "roster (default: mpc if the roster lists compute servers, else rr)")
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    endpoint = deployment_endpoint(**broker_options(args))
    facts = read_roster(args.roster)
    parties = parse_ranges(args.parties, facts.roster.k)
    keys = tuple(read_private_key(party_key_path(args.keys, i), facts, i) for i in parties)
    dataset = load_dataset(args.dataset, args.label_column)
    bits = host_bits(dataset, parties, facts.roster.k)
    budget = None if args.budget is None else Budget.parse(args.budget)
    check_privacy_options(budget, DEFAULT_DELTA_SLACK, budget_name="--budget")
    record = args.record if args.record is not None else args.keys / f"answers-{parties[0]}.sqlite"
    claim_record(args.keys, facts.session, parties, record, new_record=args.new_record)
    config = HostConfig(facts=facts, parties=parties, bits=bits, private_keys=keys, endpoint=endpoint,
                        seed=args.seed, idle_timeout=args.idle_timeout, observer_grace=args.observer_grace,
                        max_repetitions=args.max_repetitions, budget=budget, record=record,
                        protocol=args.protocol or facts.protocol, dataset=dataset.name)
    asyncio.run(host_parties(config))
    mode = "deployment" if args.seed is None else "simulation"
    emit(args, {"session": facts.session, "parties": format_ranges(parties), "mode": mode, "record": str(record)})
    print(f"session {facts.session}: parties {format_ranges(parties)} "
          f"{answers_summary(record, facts.session, parties)} ({mode} mode)")
    return 0
