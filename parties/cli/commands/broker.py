"""``mpdp broker config``: a locked-down mosquitto configuration for a deployed session.

Reads the roster of ``mpdp keys`` and writes, into ``--out DIR``, a mosquitto.conf with two TLS
listeners (party hosts on ``--port``, the observer on ``--observer-port``), the deployment's CA, the
broker's server certificate, a password file and an ACL under which each party host publishes only its
own parties' topics and reads only the announcements, and one directory per identity (the observer,
each party host, named like the ``--split`` key directories, and with a ``--protocol mpc`` roster each
compute server, ``mpc-server-I``, which reads only its own jobs and publishes only its own reports)
holding its certificate, key, the CA and a ``broker.env`` with its broker URL, user name and password
(files 0600). Give each host its own directory only. :mod:`mpdp.broker.lockdown` says who may do what.
"""

from __future__ import annotations

import argparse
import getpass
import os
import sys

from mpdp.parties.cli.args import emit, plain_text
from mpdp.parties.session.output_paths import output_dir

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp keys --parties 435 --split 0-217 --split 218-434 --out keys/
  mpdp broker config --roster keys/roster.json --split 0-217 --split 218-434 --host broker.example --out broker/
  mosquitto -c broker/broker/mosquitto.conf                # on the broker host (broker/broker/ only)
  set -a; . broker/clients/observer/broker.env; set +a     # on the observer's host, then `mpdp observe ...`
  set -a; . broker/clients/parties-0-217/broker.env; set +a  # on that party host, then `mpdp party ...`
  set -a; . broker/clients/mpc-server-0/broker.env; set +a   # mpc roster: on server 0's host, `mpdp mpc-server`

docker-compose.yml runs it as its broker-config service (the broker is `mosquitto` in the compose network):
  mpdp broker config --roster /keys/roster.json --split 0-217 --split 218-434 --host mosquitto \\
      --config-path /mosquitto/config --client-path /broker --user root --out /broker-config --force
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``broker`` command group (``broker config``)."""
    group = subparsers.add_parser("broker", description="broker set-up for a deployed session",
                                  formatter_class=argparse.RawDescriptionHelpFormatter)
    group.set_defaults(run=_run)  # the only action so far; argparse requires it to be named
    actions = group.add_subparsers(dest="action", metavar="ACTION", required=True)
    p = actions.add_parser("config", help="write a TLS + password + ACL mosquitto configuration",
                           description=plain_text(__doc__.split("\n\n", 1)[1]), epilog=EPILOG,
                           formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--roster", required=True, metavar="FILE", help="roster.json from `mpdp keys`")
    p.add_argument("--out", required=True, metavar="DIR", help="where to write the configuration")
    p.add_argument("--split", action="append", default=None, metavar="RANGES",
                   help="the parties of one party host (as `mpdp keys --split`); repeat to cover every party "
                        "(default: one host with all)")
    p.add_argument("--host", action="append", default=[], metavar="NAME",
                   help="a name or address clients reach the broker by (the server certificate's; "
                        "127.0.0.1, ::1 and localhost always); the first goes into each broker.env")
    p.add_argument("--port", type=int, default=8883, help="the party hosts' TLS listener (default: 8883)")
    p.add_argument("--observer-port", type=int, default=8884, help="the observer's TLS listener (default: 8884)")
    p.add_argument("--bind", default=None, metavar="ADDRESS", help="listen on this address only (default: all)")
    p.add_argument("--party-decisions", action="store_true",
                   help="parties decide f themselves: they may read transcripts and publish decisions")
    p.add_argument("--days", type=int, default=365, help="certificate validity in days (default: 365)")
    p.add_argument("--user", default=None, metavar="NAME",
                   help="the account a root-started mosquitto runs as; it must read passwd, acl and server.key "
                        "(default: mosquitto's own 'mosquitto'; 'me' for the account running this command)")
    p.add_argument("--config-path", default=None, metavar="DIR",
                   help="DIR/broker as the broker will see it, e.g. /mosquitto/config in a container "
                        "(default: its path)")
    p.add_argument("--client-path", default=None, metavar="DIR",
                   help="where each host will see its own client directory, e.g. /broker in a container "
                        "(default: its path under DIR)")
    p.add_argument("--persistence", default=None, metavar="DIR",
                   help="a directory (as the broker sees it, writable by it, e.g. /mosquitto/data in a container) "
                        "where the broker keeps its sessions and queued messages across a restart (default: "
                        "none; a restarted broker has lost them and the observer re-announces the open round)")
    p.add_argument("--validators", type=int, default=0, metavar="N",
                   help="logins for the observer's N validator processes (`mpdp observe --validators N`), on the "
                        "observer's listener, reading party answers only, and their secret share-group name "
                        "(in their client folders only) (default: 0)")
    p.add_argument("--force", action="store_true", help="replace an earlier configuration in DIR")
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> int:
    from mpdp.broker.lockdown import OBSERVER, write_broker_config
    from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
    from mpdp.parties.rounds.session_files import read_roster
    from mpdp.protocols.errors import ParameterError

    facts = read_roster(args.roster)
    k = facts.roster.k
    groups = [list(range(k))] if args.split is None else [parse_ranges(s, k, "--split") for s in args.split]
    covered = sorted(i for g in groups for i in g)
    if covered != list(range(k)):
        raise ParameterError("--split", " ".join(args.split), f"ranges that cover each of the {k} parties once")
    hosts = {f"parties-{format_ranges(g)}": g for g in groups}
    user = getpass.getuser() if args.user == "me" else args.user
    config = write_broker_config(
        output_dir(args.out, "--out"), facts.session, hosts, names=args.host, party_port=args.port,
        observer_port=args.observer_port, bind=args.bind, party_decisions=args.party_decisions,
        config_path=args.config_path, client_path=args.client_path, days=args.days, user=user,
        servers=0 if facts.servers is None else facts.servers.servers, force=args.force,
        persistence=args.persistence, validators=args.validators,
    )
    emit(args, {"session": facts.session, "config": str(config.config), "party_port": config.party_port,
                "observer_port": config.observer_port, "clients": {n: str(f) for n, f in config.clients.items()}})
    print(f"session {facts.session}: wrote {config.config} (TLS listeners {config.party_port} for "
          f"{len(hosts)} party host{'s' * (len(hosts) > 1)}"
          f"{f' and {len(config.servers)} compute servers' if config.servers else ''}, {config.observer_port} "
          "for the observer) with "
          f"ca.crt, server.crt/.key, passwd, acl beside it (the broker host only)")
    for name, folder in config.clients.items():
        role = ("the observer" if name == OBSERVER else f"parties {format_ranges(hosts[name])}" if name in hosts
                else f"compute server {config.servers.index(name)}" if name in config.servers
                else f"the observer's validator {config.validators.index(name)}")
        group = ", group: the validators' secret share group" if name in config.validators else ""
        print(f"  {folder}/  -> {role} only (broker.env, password, client.crt/.key, ca.crt{group}; 0600)")
    print(f"start the broker: mosquitto -c {config.config}")
    if os.geteuid() == 0 and args.user is None:  # a root-started mosquitto switches to user "mosquitto"
        print("note: started by root, mosquitto runs as user 'mosquitto', which cannot read these 0600 files; "
              "write the configuration with --user me (run as root) or --user NAME (the broker's account)",
              file=sys.stderr)
    return 0
