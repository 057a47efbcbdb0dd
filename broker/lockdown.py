"""A locked-down mosquitto for one deployed session: TLS, a login per identity, least-privilege ACL, bounded queues.

:func:`write_broker_config` writes into one directory (``mpdp broker config`` is its command line)::

    broker/               for the broker host only:
        mosquitto.conf    two TLS listeners, no anonymous client, bounded queues and packet sizes
        ca.crt            the deployment's CA (its private key is never written: re-run to re-issue)
        server.crt/.key   the broker's certificate (SAN 127.0.0.1, ::1, localhost and every --host)
        passwd            mosquitto_passwd file ($7$ PBKDF2-SHA512), one user per identity      0600
        acl               what each user may publish (write) and subscribe to (read)              0600
    clients/NAME/         per identity (the observer, each party host, each mpc server), for it only: 0700
        ca.crt client.crt client.key password, and broker.env (MPDP_BROKER_URL, _USERNAME,
        _PASSWORD, _CAFILE, _CERT, _KEY: ``set -a; . broker.env; set +a``)                      0600
        a validator's folder also holds ``group``: the validators' secret share-group name      0600

Who may do what (topics of :class:`mpdp.broker.topics.Topics`):

* a party host (user ``parties-RANGES``) publishes only its own parties' topics ``party/{i}`` (and
  ``decision/{i}`` with party decisions), ``status`` and ``presence``; it reads only ``rounds``, ``heartbeat``,
  ``status`` (its ready beacon reads its own report back), ``presence`` (the other hosts' claims: one live
  host per party), and ``transcript`` with party decisions. It cannot read any party's answer.
* the observer (user ``observer``) publishes ``rounds``, ``heartbeat``, ``transcript`` and ``curator/release``; it
  reads ``party/+``, ``status`` and ``decision/+``. With compute servers (``--protocol mpc``) it also
  publishes the servers' jobs ``mpc/job/+`` and reads their reports ``mpc/server/+``.
* compute server i (user ``mpc-server-{i}``, on the party hosts' listener) reads only its own jobs
  ``mpc/job/{i}``, ``rounds`` (the end) and ``heartbeat``, and publishes only its own reports ``mpc/server/{i}``. No
  party host may publish to or read a server topic, and no server another server's.
* validator j of the observer (user ``validator-{j}``, ``--validators N``, on the observer's listener, where
  its client id is its user name) only reads the party topics, on the shared subscription
  ``$share/{group}/.../party/+`` as well as plainly; it publishes nothing. ``{group}`` is a secret
  (:func:`mpdp.broker.topics.new_validator_group`) written only into the ACL and each validator's
  ``clients/validator-{j}/group``: mosquitto 2.0 grants any login's subscription to a shared group and then
  drops the answers its ACL denies that login (lost to the validators), so no party host, compute server or
  anonymous client may know the group's name (nor read a party topic).
* nobody else may use the observer's client id: the observer connects on its own listener, where
  ``use_username_as_clientid`` makes the client id the user name ``observer`` (so only the holder of the
  observer's password and certificate has it), and ``clientid_prefixes mpdp-`` refuses every client id
  on either listener that does not start with ``mpdp-`` (so no party-listener client can be called
  ``observer``). Every other mpdp client id carries a random suffix.
* every client presents a certificate of this CA (``require_certificate``) and its password; $SYS
  and every other topic are closed to everyone.
"""

from __future__ import annotations

import ipaddress
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from mpdp.broker.certificates import CertificateAuthority
from mpdp.broker.mpc_messages import MAX_SERVERS
from mpdp.broker.passwords import new_password, password_line
from mpdp.broker.settings import ENV_VAR, PASSWORD_ENV, TLS_ENV, USERNAME_ENV, url_host
from mpdp.broker.topics import Topics, new_validator_group
from mpdp.protocols.errors import ParameterError

__all__ = ["GROUP_FILE", "MAX_VALIDATORS", "OBSERVER", "BrokerConfig", "Limits", "server_user", "validator_user", "write_broker_config"]

#: The observer's user name (and its client id on the observer listener); no mpdp- prefix on purpose.
OBSERVER = "observer"


def server_user(server: int) -> str:
    """Compute server ``server``'s broker user name (and client directory): ``mpc-server-{server}``."""
    return f"mpc-server-{int(server)}"


def validator_user(index: int) -> str:
    """Validator ``index``'s broker user name (and client directory, and its client id on the observer's
    listener): ``validator-{index}``."""
    return f"validator-{int(index)}"

#: The folders one configuration writes (refused without ``force`` when either is there).
FILES = ("broker", "clients")
#: The most validator processes of one observer (and logins one configuration writes).
MAX_VALIDATORS = 64
#: The file of a validator's client folder that holds the validators' secret share-group name.
GROUP_FILE = "group"


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds that keep one client from exhausting the broker (mosquitto.conf(5) names).

    Attributes:
        max_queued_messages: QoS 1 messages queued per client beyond the in-flight window (then dropped,
            logged); the default holds 20 rounds of 500 parties for an observer that reconnects.
        max_queued_bytes: bytes queued per client (payloads).
        max_packet_size: the largest MQTT packet accepted, bytes (larger ones disconnect their sender).
        max_inflight_messages: unacknowledged QoS 1 messages on the way to one client.
    """

    max_queued_messages: int = 10_000
    max_queued_bytes: int = 64 * 2**20
    max_packet_size: int = 4 * 2**20
    max_inflight_messages: int = 20


@dataclass(frozen=True, slots=True)
class BrokerConfig:
    """What :func:`write_broker_config` wrote.

    Attributes:
        directory: the output directory.
        config: its broker/mosquitto.conf (start the broker with ``mosquitto -c config``).
        party_port, observer_port: the two TLS listeners' ports.
        clients: identity (user name) -> its client directory (ca.crt, client.crt/.key, password, broker.env).
        hosts: party host user name -> the party ids it may publish for.
        servers: the compute servers' user names, in server order (empty without ``--protocol mpc``).
        validators: the observer's validators' user names, in order (empty without ``--validators``).
        validator_group: their secret share-group name (``clients/validator-j/group``; None without validators).
    """

    directory: Path
    config: Path
    party_port: int
    observer_port: int
    clients: Mapping[str, Path]
    hosts: Mapping[str, tuple[int, ...]]
    servers: tuple[str, ...] = ()
    validators: tuple[str, ...] = ()
    validator_group: str | None = None


def _write(path: Path, data: str | bytes, private: bool) -> None:
    raw = data.encode() if isinstance(data, str) else data
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(raw)
    os.chmod(path, 0o600 if private else 0o644)  # also when the file was there with other bits


def acl_text(topics: Topics, hosts: Mapping[str, Sequence[int]], party_decisions: bool, servers: int = 0,
             validators: int = 0, group: str = "") -> str:
    """The mosquitto ``acl_file`` of the session (module docstring: who may do what); ``servers``: m compute
    servers (0: none); ``validators``: the observer's validator processes (0: none), reading on the shared
    subscription of the secret ``group`` (:func:`mpdp.broker.topics.new_validator_group`)."""
    lines = [f"# mpdp session {topics.session}: what each user may publish (write) and subscribe to (read).",
             "# Anything not listed is denied (including $SYS).", "", f"user {OBSERVER}",
             f"topic write {topics.rounds}", f"topic write {topics.heartbeat}", f"topic write {topics.transcript}",
             f"topic write {topics.release}",
             f"topic read {topics.all_parties}", f"topic read {topics.status}", f"topic read {topics.all_decisions}"]
    if servers:
        lines += [f"topic write {topics.all_mpc_jobs}", f"topic read {topics.all_mpc_servers}"]
    for server in range(servers):
        lines += ["", f"user {server_user(server)}", f"topic read {topics.mpc_job(server)}",
                  f"topic read {topics.rounds}", f"topic read {topics.heartbeat}", f"topic write {topics.mpc_server(server)}"]
    for index in range(validators):
        lines += ["", f"user {validator_user(index)}", f"topic read {topics.shared_parties(group)}",
                  f"topic read {topics.all_parties}"]
    for name, parties in hosts.items():
        # status: read too, the host's ready beacon repeats the "ready" it reads back (parties/session/host.py)
        lines += ["", f"user {name}", f"topic read {topics.rounds}", f"topic read {topics.heartbeat}",
                  f"topic readwrite {topics.status}", f"topic readwrite {topics.presence}"]
        if party_decisions:
            lines.append(f"topic read {topics.transcript}")
        for party in parties:
            lines.append(f"topic write {topics.party(party)}")
            if party_decisions:
                lines.append(f"topic write {topics.decision(party)}")
    return "\n".join(lines) + "\n"


def mosquitto_conf(config_path: str, *, party_port: int, observer_port: int, bind: str | None, limits: Limits,
                   max_connections: int, session: str, user: str | None = None, persistence: str | None = None,
                   validators: int = 0) -> str:
    """The mosquitto.conf text (files read from ``config_path``, the directory as the broker sees it;
    ``user``: the account a root-started mosquitto switches to, None: mosquitto's default ``mosquitto``;
    ``persistence``: a directory, as the broker sees it, where it keeps sessions and queued messages, saved
    every second; None: nothing on disk; ``validators``: logins beside the observer's on its listener)."""
    address = f" {bind}" if bind else ""
    tls = [f"cafile {config_path}/ca.crt", f"certfile {config_path}/server.crt",
           f"keyfile {config_path}/server.key", "require_certificate true", "tls_version tlsv1.2"]
    lines = [
        f"# mosquitto 2.x configuration of mpdp session {session}, written by `mpdp broker config`.",
        "# No anonymous client: every client shows a certificate of this deployment's CA and its password.",
        *(["# mosquitto started as root runs as this user; it must read passwd, acl and server.key.",
           f"user {user}"] if user else
          ["# A root-started mosquitto runs as user mosquitto: make passwd, acl and server.key readable by it",
           "# (chown mosquitto passwd acl server.key), or run mosquitto as their owner."]),
        "per_listener_settings false",
        "allow_anonymous false",
        f"password_file {config_path}/passwd",
        f"acl_file {config_path}/acl",
        "# Every mpdp client id starts with mpdp-; the observer's listener replaces the id by the user name",
        f"# '{OBSERVER}', which therefore no other client can take over.",
        "clientid_prefixes mpdp-",
        *(["# Transcripts live in the observer's SQLite store; the broker keeps nothing on disk.",
           "persistence false"] if persistence is None else
          ["# Sessions and queued QoS 1 messages survive a broker restart (saved every second while they change).",
           "persistence true", f"persistence_location {persistence.rstrip('/')}/", "autosave_interval 1"]),
        "# Bounded: one client cannot make the broker queue without limit.",
        f"max_inflight_messages {limits.max_inflight_messages}",
        f"max_queued_messages {limits.max_queued_messages}",
        f"max_queued_bytes {limits.max_queued_bytes}",
        f"max_packet_size {limits.max_packet_size}",
        "log_dest stderr", "log_type error", "log_type warning", "log_type notice",
        "",
        "# The party hosts' listener.",
        f"listener {party_port}{address}", *tls, f"max_connections {max_connections}",
        "",
        "# The observer's listener: the client id is the user name.",
        f"listener {observer_port}{address}", *tls, "use_username_as_clientid true",
        f"max_connections {8 + validators}",
    ]
    return "\n".join(lines) + "\n"


def _env_file(url: str, username: str, password: str, client_path: str) -> str:
    values = {ENV_VAR: url, USERNAME_ENV: username, PASSWORD_ENV: password,
              TLS_ENV["cafile"]: f"{client_path}/ca.crt", TLS_ENV["cert"]: f"{client_path}/client.crt",
              TLS_ENV["key"]: f"{client_path}/client.key"}
    return "".join(f"{key}={shlex.quote(value)}\n" for key, value in values.items())


#: A DNS host name (RFC 1123: labels of letters, digits and inner hyphens, 1-63 characters, dot-separated).
_HOST_NAME = re.compile(r"(?=.{1,253}$)([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?")


def _check_host_name(name: str, option: str = "--host") -> None:
    """Refuse a broker name that is neither an IP address nor a DNS host name (``'bad host'`` went into the
    certificate and every ``broker.env``, and the hosts then failed for minutes on "Name or service not known").

    Raises:
        ParameterError: naming ``option`` and the value.
    """
    try:
        ipaddress.ip_address(name)
        return
    except ValueError:
        pass
    if not _HOST_NAME.fullmatch(name):
        raise ParameterError(option, name, "an IP address or a DNS host name (letters, digits, hyphens and dots, "
                             "e.g. broker.example.org)")


def write_broker_config(
    out: Path | str, session: str, hosts: Mapping[str, Sequence[int]], *, names: Sequence[str] = (),
    party_port: int = 8883, observer_port: int = 8884, bind: str | None = None, party_decisions: bool = False,
    url_host_name: str | None = None, config_path: str | None = None, client_path: str | None = None,
    days: int = 365, limits: Limits = Limits(), user: str | None = None, servers: int = 0, force: bool = False,
    persistence: str | None = None, validators: int = 0,
) -> BrokerConfig:
    """Write a locked-down mosquitto configuration for ``session`` into ``out`` (module docstring).

    Args:
        hosts: party host user name (e.g. ``parties-0-217``; must not start with ``mpdp-``) -> its party ids.
        names: host names or addresses clients use to reach the broker (server certificate SANs).
        party_port, observer_port: the TLS listeners (distinct, 1..65535); bind: their address (None: all).
        party_decisions: parties also read transcripts and publish their own decisions.
        url_host_name: the broker host in each client's ``broker.env`` (default: ``names[0]``, else 127.0.0.1).
        config_path: ``out/broker`` as the broker sees it (e.g. ``/mosquitto/config`` in a container;
            default: its absolute path); client_path: each client directory as its client sees it
            (default: its absolute path).
        days: certificate validity.
        user: the account a root-started mosquitto switches to (``user`` of mosquitto.conf(5)).
        persistence: a directory (as the broker sees it, writable by its user, e.g. ``/mosquitto/data`` in a
            container) where the broker keeps its sessions and queued messages across a restart; None: it
            keeps nothing (a restart loses what it had queued; the observer re-announces the open round).
        servers: m, the session's compute servers (``--protocol mpc``; 0: none): a login per server
            (:func:`server_user`) on the party hosts' listener and their ACL entries.
        validators: the observer's validator processes (``mpdp observe --validators N``; 0: none): a login
            per validator (:func:`validator_user`) on the observer's listener, reading the party topics only,
            and one secret share-group name for them all (:data:`GROUP_FILE` in each validator's folder).

    Returns:
        what was written (:class:`BrokerConfig`).

    Raises:
        ParameterError: equal or bad ports, a bad host user name, a party in two hosts, no host, a number of
            servers outside 0..31, a number of validators outside 0..64, or an earlier configuration in ``out`` without ``force``.
    """
    topics = Topics(session)
    directory = Path(out)
    for port_name, port in (("--port", party_port), ("--observer-port", observer_port)):
        if not isinstance(port, int) or not 1 <= port <= 65535:
            raise ParameterError(port_name, port, "a TCP port 1..65535")
    if party_port == observer_port:
        raise ParameterError("--observer-port", observer_port, "a port other than --port")
    if not hosts:
        raise ParameterError("hosts", dict(hosts), "at least one party host")
    for name in names:
        _check_host_name(name)
    if url_host_name is not None:
        _check_host_name(url_host_name, "url_host_name")
    if not isinstance(servers, int) or not 0 <= servers <= MAX_SERVERS:
        raise ParameterError("servers", servers, f"a number of compute servers in 0..{MAX_SERVERS}")
    if not isinstance(validators, int) or isinstance(validators, bool) or not 0 <= validators <= MAX_VALIDATORS:
        raise ParameterError("--validators", validators, f"a number of validator processes in 0..{MAX_VALIDATORS}")
    server_names = tuple(server_user(i) for i in range(servers))
    validator_names = tuple(validator_user(i) for i in range(validators))
    group = new_validator_group() if validators else None
    seen: dict[int, str] = {}
    for name, parties in hosts.items():
        if (name in (OBSERVER, *server_names, *validator_names) or name.startswith("mpdp-") or not name
                or any(c.isspace() or c in ":#+/" for c in name)):
            raise ParameterError("host", name, f"a user name other than {OBSERVER!r}, the servers' and validators', not "
                                               "starting with 'mpdp-', without spaces or : # + /")
        for party in parties:
            if party in seen:
                raise ParameterError("host", name, f"hosts with disjoint parties (party {party} is also in {seen[party]})")
            seen[party] = name
    ca = CertificateAuthority(f"mpdp CA {session}", days)  # checks days before anything is written
    directory.mkdir(parents=True, exist_ok=True)
    found = [f for f in FILES if (directory / f).exists()]
    if found and not force:
        raise ParameterError("--out", str(out), f"a directory without an earlier broker configuration "
                                                f"(it holds {', '.join(found)})", hint="or --force to replace it")
    broker = directory / "broker"
    broker.mkdir(exist_ok=True)
    server = ca.server(names)
    _write(broker / "ca.crt", ca.certificate_pem, private=False)
    _write(broker / "server.crt", server.certificate, private=False)
    _write(broker / "server.key", server.key, private=True)
    _write(broker / "acl", acl_text(topics, hosts, party_decisions, servers, validators, group or ""), private=True)
    max_connections = len(seen) + 4 * len(hosts) + servers + 16  # per party, a beacon per host, servers, slack
    _write(broker / "mosquitto.conf", mosquitto_conf(
        config_path or str(broker.resolve()), party_port=party_port, observer_port=observer_port, bind=bind,
        limits=limits, max_connections=max_connections, session=session, user=user, persistence=persistence,
        validators=validators), private=False)
    host_name = url_host(url_host_name or (names[0] if names else "127.0.0.1"))
    lines, clients = [], {}
    for name in (OBSERVER, *hosts, *server_names, *validator_names):
        password = new_password()
        lines.append(password_line(name, password))
        folder = directory / "clients" / name
        folder.mkdir(parents=True, exist_ok=True)
        folder.chmod(0o700)
        issued = ca.client(name)
        _write(folder / "ca.crt", ca.certificate_pem, private=True)
        _write(folder / "client.crt", issued.certificate, private=True)
        _write(folder / "client.key", issued.key, private=True)
        _write(folder / "password", password, private=True)
        if name in validator_names:
            assert group is not None
            _write(folder / GROUP_FILE, group, private=True)
        port = observer_port if name in (OBSERVER, *validator_names) else party_port
        where = client_path or str(folder.resolve())
        _write(folder / "broker.env", _env_file(f"mqtts://{host_name}:{port}", name, password, where), private=True)
        clients[name] = folder
    _write(broker / "passwd", "\n".join(lines) + "\n", private=True)
    return BrokerConfig(directory, broker / "mosquitto.conf", party_port, observer_port, clients,
                        {name: tuple(parties) for name, parties in hosts.items()}, server_names, validator_names, group)
