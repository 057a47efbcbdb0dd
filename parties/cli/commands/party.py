"""``mpdp party``: host some parties of a deployed session: answer every announced round until the end.

Each party is an asyncio task with its own MQTT connection and its own private key; the process reads
its parties' bits from the dataset (the other rows are dropped) and keeps them: no bit is ever sent.
Deployment mode by default (the OS CSPRNG); ``--seed`` makes it a reproducible simulation.
"""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from mpdp.parties.cli.args import seed_value
from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.parties.session.datasets import DATASET_NAMES, load_dataset
from mpdp.parties.session.external_broker import deployment_endpoint
from mpdp.parties.session.files import party_key_path, read_private_key, read_roster
from mpdp.parties.session.host import HostConfig, host_bits, host_parties

__all__ = ["register"]

EPILOG = f"""\
examples:
  mpdp party --roster keys/roster.json --keys keys/parties-0-217 --parties 0-217 \\
      --dataset house-votes-84 --broker mqtt://broker.example:1883
  mpdp party --roster keys/roster.json --keys keys/parties --parties 0-4 --dataset votes.csv --seed 7

dataset: {', '.join(DATASET_NAMES)} or a CSV of 1/0 (y/n, ? = takes no part), one column per round,
  with either one row per party of the roster or one row per hosted party (in --parties order).
mode: deployment by default (each party privatizes with the OS CSPRNG, exact Bernoulli draws);
  --seed S is a simulation (party i draws from SeedSequence(S).spawn(k)[i], as `mpdp simulate --seed S`).
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``party`` sub-command."""
    p = subparsers.add_parser(
        "party", description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--roster", type=Path, required=True, metavar="FILE", help="roster.json from `mpdp keys`")
    p.add_argument("--keys", type=Path, required=True, metavar="DIR", help="directory of the parties' key files")
    p.add_argument("--parties", required=True, metavar="RANGES", help="the party ids hosted here, e.g. 0-217")
    p.add_argument("--dataset", required=True, metavar="NAME|PATH", help="where the hosted parties' bits are")
    p.add_argument("--broker", default=None, metavar="URL",
                   help="mqtt://HOST[:PORT] of the running broker (default: $MPDP_BROKER_URL)")
    p.add_argument("--seed", type=seed_value, default=None,
                   help="simulation mode: reproducible seeded generators (default: deployment mode)")
    p.add_argument("--idle-timeout", type=float, default=3600.0, metavar="SECONDS",
                   help="give up after this long without an announcement (default: 3600)")
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    endpoint = deployment_endpoint(args.broker)
    facts = read_roster(args.roster)
    parties = parse_ranges(args.parties, facts.roster.k)
    keys = tuple(read_private_key(party_key_path(args.keys, i), facts, i) for i in parties)
    bits = host_bits(load_dataset(args.dataset), parties, facts.roster.k)
    config = HostConfig(facts=facts, parties=parties, bits=bits, private_keys=keys, endpoint=endpoint,
                        seed=args.seed, idle_timeout=args.idle_timeout)
    asyncio.run(host_parties(config))
    mode = "deployment" if args.seed is None else "simulation"
    print(f"session {facts.session}: parties {format_ranges(parties)} answered until the end ({mode} mode)")
    return 0
