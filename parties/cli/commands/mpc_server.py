"""``mpdp mpc-server``: one compute server of a deployed mpc session (``mpdp keys --protocol mpc``).

It connects with MPyC to the other servers at the roster's addresses, takes each round's job from the
broker (only the shares sealed to its own X25519 key, handed on by the coordinator, who signs the job),
computes the count and the release of the optimal central mechanism together with the other servers, and
publishes its release signed with its Ed25519 key (pinned in the roster) on its own report topic. It
exits at the coordinator's signed end of the session. A replayed or expired job or end is refused
(counted by reason and logged). MPyC has no dropout tolerance: every server of the roster must run.
"""

from __future__ import annotations

import argparse

from mpdp.parties.cli.args import add_deployed_session, broker_options
from mpdp.parties.mpc.deployed_server import DeployedServerConfig, run_server
from mpdp.parties.rounds.session_files import read_roster, read_server_keys
from mpdp.parties.session.external_broker import deployment_endpoint

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp mpc-server --roster keys/roster.json --keys keys/server-0/server-0.key \\
      --broker mqtt://broker.example:1883
  set -a; . lock/clients/mpc-server-0/broker.env; set +a   # its login from `mpdp broker config` (mqtts)
  mpdp mpc-server --roster keys/roster.json --keys keys/server-0/server-0.key

Start one per server of the roster (each on the host of its --server-address), then the party hosts
(`mpdp party`) and the coordinator (`mpdp observe`), in any order: the coordinator waits for every server.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``mpc-server`` sub-command."""
    p = subparsers.add_parser(
        "mpc-server", description=__doc__.split("\n\n")[0].split(": ", 1)[1], epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_deployed_session(p, "this server's key file, DIR/server-I/server-I.key from `mpdp keys --protocol mpc`")
    p.add_argument("--idle-timeout", type=float, default=3600.0, metavar="SECONDS",
                   help="give up after this long without a job or announcement (default: 3600)")
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    endpoint = deployment_endpoint(**broker_options(args))
    facts = read_roster(args.roster)
    keys = read_server_keys(args.keys, facts)
    config = DeployedServerConfig(facts=facts, keys=keys, endpoint=endpoint, idle_timeout=args.idle_timeout)
    released = run_server(config)
    print(f"session {facts.session}: compute server {keys.server} released {released} round(s) until the end")
    return 0
