"""``mpdp keys``: make a deployed session's roster and key files (the first step of a deployment).

Writes ``DIR/roster.json`` (public: session id, each party's epsilon, delta and Ed25519 public key, the
coordinator's public key), ``DIR/coordinator/coordinator.key`` and one ``party-{i}.key`` per party
(mode 0600) in ``DIR/parties/``, or with ``--split`` in one directory per host. No bit is in them.
``--protocol mpc`` adds the m compute servers: the roster pins each one's MPyC address (host:port) and its
X25519 (sealed shares) and Ed25519 (signed releases) public keys and the threshold T; server i's private
keys go to ``DIR/server-{i}/server-{i}.key`` (one directory per server host).

The files are written whole or not at all (:mod:`mpdp.parties.rounds.staged_dir`): a run stopped half-way leaves
DIR as it was; DIR must be new or empty, and ``--force`` replaces every earlier roster and key file in it. Above
:data:`PROGRESS_EVERY` seconds of estimated work, the estimate and a line every PROGRESS_EVERY seconds go to
standard error (not with ``--quiet``).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from mpdp.broker.ports import LOOPBACK
from mpdp.parties.cli.args import emit, seed_value
from mpdp.parties.mpc.cluster import free_port_block
from mpdp.parties.mpc.sharing import check_servers
from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.parties.rounds.session_files import write_session
from mpdp.parties.session.epsilons import parse_mechanisms
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import format_seconds, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["KEY_FILES_PER_SECOND", "PROGRESS_EVERY", "register"]

#: Party key files ``mpdp keys`` makes and writes per second, for its up-front estimate (measured 2026-12-03 on the
#: 2-core machine at load 2.4, ext4: 100,000 parties in 23 s for the whole command, 4,300 per second; 20,000 in 4.2 s).
KEY_FILES_PER_SECOND = 4000
#: Seconds between the progress lines of a long ``mpdp keys``; an estimate shorter than this is not printed.
PROGRESS_EVERY = 10.0

EPILOG = """\
examples:
  mpdp keys --parties 435 --epsilon 1 --out keys/
  mpdp keys --parties 435 --epsilon 0.5:2 --delta 0.01 --split 0-217 --split 218-434 --out keys/

  mpdp keys --parties 435 --epsilon 1 --protocol mpc --servers 3 --threshold 1 \\
      --server-address a.example:11365 --server-address b.example:11365 --server-address c.example:11365 \\
      --out keys/

Give keys/roster.json to every role; keys/coordinator/ to the observer only; each party's key file (or
each --split directory) to the host that runs those parties only; keys/server-I/ to compute server I only.
mpc: one epsilon and --delta for every party (the servers release one central mechanism); without
--server-address the servers listen on 127.0.0.1 at ports free when the keys are made (a test on one machine).
The files are written whole or not at all: stopped half-way (Ctrl-C, SIGTERM), DIR is left as it was. DIR must
be new or empty; --force replaces every earlier roster and key file in it (other files stay).
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``keys`` sub-command."""
    p = subparsers.add_parser(
        "keys", description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--parties", type=int, required=True, metavar="K", help="the number of parties")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write the files")
    p.add_argument("--epsilon", default="1.0", metavar="E|LO:HI|FILE",
                   help="each party's epsilon: one value, a uniform range per party, or a file with one "
                        "'epsilon[,delta]' line per party (default: 1.0)")
    p.add_argument("--delta", type=float, default=0.0, metavar="D",
                   help="delta in [0, 1); > 0 selects the four-output randomized response (default: 0)")
    p.add_argument("--session", default=None, metavar="ID",
                   help="the session id (default: deploy-<random>); one id per deployment")
    p.add_argument("--split", action="append", default=None, metavar="RANGES",
                   help="put these parties' keys in their own directory parties-RANGES/ (one per host); "
                        "repeat to cover every party")
    p.add_argument("--seed", type=seed_value, default=None, help="seed of the LO:HI epsilon draws (default: OS entropy)")
    p.add_argument("--force", action="store_true", help="replace the earlier roster and key files in DIR (all of them; other files stay)")
    mpc = p.add_argument_group("secure computation (--protocol mpc)")
    mpc.add_argument("--protocol", choices=("rr", "mpc"), default="rr",
                     help="rr: randomized response (default); mpc: the roster also lists the compute servers")
    mpc.add_argument("--servers", type=int, default=3, metavar="M", help="compute servers (default: 3)")
    mpc.add_argument("--threshold", type=int, default=1, metavar="T",
                     help="colluding servers tolerated, T < M/2 (default: 1)")
    mpc.add_argument("--server-address", action="append", default=None, metavar="HOST:PORT",
                     help="server i's MPyC address, repeat M times in server order (default: 127.0.0.1 and "
                          "free loopback ports)")
    p.set_defaults(run=_run)


def _server_addresses(args: argparse.Namespace, mechanisms: Sequence[RandomizedResponse]) -> list[str]:
    """The m servers' MPyC addresses (ParameterError: a bad count, T, or parties of different levels)."""
    check_servers(args.servers, args.threshold, "--servers", "--threshold")
    if len({(m.epsilon, m.delta) for m in mechanisms}) != 1:
        raise ParameterError("--epsilon", args.epsilon, "one epsilon (and --delta) for every party with --protocol mpc")
    if args.server_address is None:
        base = free_port_block(args.servers)
        return [f"{LOOPBACK}:{base + i}" for i in range(args.servers)]
    if len(args.server_address) != args.servers:
        raise ParameterError("--server-address", len(args.server_address), f"one per server ({args.servers})")
    return list(args.server_address)


def _progress_lines(parties: int, quiet: bool) -> Callable[[int], None] | None:
    """Print the estimate of writing ``parties`` key files on standard error (when it is PROGRESS_EVERY seconds
    or more, and not ``quiet``); returns the progress callback of :func:`write_session`, which prints a line of
    the files written and the time left every PROGRESS_EVERY seconds (None: no estimate printed)."""
    seconds = parties / KEY_FILES_PER_SECOND
    if quiet or seconds < PROGRESS_EVERY:
        return None
    print(f"mpdp: writing {parties:,} party key files: about {format_seconds(seconds)}", file=sys.stderr, flush=True)
    start = time.monotonic()
    due = start + PROGRESS_EVERY

    def report(done: int) -> None:
        nonlocal due
        now = time.monotonic()
        if now >= due:
            due = now + PROGRESS_EVERY
            print(f"mpdp: {done:,} of {parties:,} party key files written after {now - start:.0f} s (about "
                  f"{format_seconds((parties - done) * (now - start) / done)} left)", file=sys.stderr, flush=True)

    return report


def _run(args: argparse.Namespace) -> int:
    if args.parties < 1:
        raise ParameterError("--parties", args.parties, "an integer >= 1")
    mechanisms = parse_mechanisms(args.epsilon, args.delta, args.parties, np.random.default_rng(args.seed))
    split = None if args.split is None else [parse_ranges(s, args.parties, "--split") for s in args.split]
    out = Path(args.out)
    session = args.session or f"deploy-{uuid.uuid4().hex[:12]}"
    addresses = _server_addresses(args, mechanisms) if args.protocol == "mpc" else []
    facts = write_session(out, session, mechanisms, split, force=args.force, servers=addresses,
                          threshold=args.threshold, progress=_progress_lines(args.parties, args.quiet))
    directories = ["parties/"] if split is None else [f"parties-{format_ranges(g)}/" for g in split]
    servers = "".join(f", {out / f'server-{i}'}/ (server {i} at {a} only)" for i, a in enumerate(addresses))
    emit(args, {"session": facts.session, "parties": facts.roster.k, "roster": str(out / "roster.json"),
                "coordinator": str(out / "coordinator"), "party_directories": [str(out / d) for d in directories],
                "server_directories": [str(out / f"server-{i}") for i in range(len(addresses))]})
    print(f"session {facts.session}: {facts.roster.k} {noun(facts.roster.k, 'party', 'parties')}; wrote {out / 'roster.json'} (public), "
          f"{out / 'coordinator'}/ (observer only), {', '.join(str(out / d) for d in directories)} "
          f"(each to its party host only){servers}")
    return 0
