"""docker-compose.yml cannot run here (no Docker engine); its mpdp commands, key and broker volumes are
checked: every command parses with the real CLI, the key split covers the House exactly once, each party
service mounts exactly the key directory of the parties it hosts (and the observer no party key), and
every role logs in to the TLS broker with its own client directory of `mpdp broker config` only. The
same for the secure computation's services (profile mpc, its own session and broker), whose three compute
servers each mount only their own keys and login and are the roster's MPyC addresses."""

from pathlib import Path

import pytest

from mpdp.parties.cli.main import COMMANDS, build_parser
from mpdp.parties.rounds.ranges import parse_ranges
from mpdp.parties.session.datasets import load_dataset

yaml = pytest.importorskip("yaml")
COMPOSE = yaml.safe_load((Path(__file__).resolve().parents[1] / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
VOLUMES = COMPOSE["volumes"]
K = load_dataset("house-votes-84").num_parties


def _args(service: str):
    command = SERVICES[service]["command"]
    assert command[0] == "mpdp"
    return build_parser(*COMMANDS).parse_args(command[1:])


def test_every_mpdp_command_parses() -> None:
    commands = {name: _args(name).command for name, s in SERVICES.items() if "command" in s}
    deployment = {"keys": "keys", "broker-config": "broker", "observer": "observe", "parties-a": "party",
                  "parties-b": "party"}
    assert commands == {**deployment, **{f"mpc-{name}": command for name, command in deployment.items()},
                        **{f"mpc-server-{i}": "mpc-server" for i in range(3)}, "simulate": "simulate"}
    for prefix in ("", "mpc-"):
        assert SERVICES[f"{prefix}mosquitto"]["image"].startswith("eclipse-mosquitto")
    # the mpc services start only with --profile mpc, and depend on nothing of the other session
    for name, service in SERVICES.items():
        assert service.get("profiles", []) == (["mpc"] if name.startswith("mpc-") else [])
        assert all(d.startswith("mpc-") == name.startswith("mpc-") for d in service.get("depends_on", {}))


@pytest.mark.parametrize("prefix", ["", "mpc-"])
def test_party_services_split_the_house_mount_only_their_own_keys_and_keep_a_record(prefix: str) -> None:
    keys = _args(f"{prefix}keys")
    assert keys.parties == K
    split = [parse_ranges(s, K, "--split") for s in keys.split]
    hosted = []
    for name in (f"{prefix}parties-a", f"{prefix}parties-b"):
        args = _args(name)
        parties = parse_ranges(args.parties, K)
        assert parties in split and args.keys == Path(f"/keys/parties-{args.parties}")
        mounts = {m.split(":")[1]: m.split(":")[0] for m in SERVICES[name]["volumes"]}
        # the keys read-only; the answer record in a writable volume of the host's own
        record = f"{prefix}records-{name[-1]}"
        assert mounts == {"/keys": f"{prefix}keys-public", str(args.keys): mounts[str(args.keys)],
                          "/records": record, "/broker": f"{prefix}broker-{name[-1]}"}
        assert args.record.parent == Path("/records") and f"{record}:/records" in SERVICES[name]["volumes"]
        assert all(m.endswith(":ro") for m in SERVICES[name]["volumes"] if "/keys" in m)
        assert f"{mounts[str(args.keys)]}:{args.keys}" in SERVICES[f"{prefix}keys"]["volumes"]
        hosted.extend(parties)
    assert sorted(hosted) == list(range(K))
    observer = _args(f"{prefix}observer")
    mounts = {m.split(":")[1]: m.split(":")[0] for m in SERVICES[f"{prefix}observer"]["volumes"]}
    assert str(observer.keys) in mounts and not any("parties" in t or "server" in t for t in mounts)
    assert observer.roster == Path("/keys/roster.json") and observer.dataset_rounds == "house-votes-84"


def _login(service: str) -> tuple[str, str]:
    """(the URL's user name, the volume mounted at /broker) of a role."""
    env = SERVICES[service]["environment"]
    url = env["MPDP_BROKER_URL"]
    assert url.startswith("mqtts://") and env["MPDP_BROKER_PASSWORD_FILE"] == "/broker/password"
    assert (env["MPDP_BROKER_CAFILE"], env["MPDP_BROKER_CERT"], env["MPDP_BROKER_KEY"]) == (
        "/broker/ca.crt", "/broker/client.crt", "/broker/client.key")
    mounts = {m.split(":")[1]: m for m in SERVICES[service]["volumes"]}
    assert mounts["/broker"].endswith(":ro")
    return url.split("://")[1].split("@")[0], mounts["/broker"].split(":")[0]


@pytest.mark.parametrize("prefix", ["", "mpc-"])
def test_the_broker_is_locked_down_and_each_role_has_only_its_own_login(prefix: str) -> None:
    config = _args(f"{prefix}broker-config")
    assert (config.command, config.action) == ("broker", "config") and config.split == _args(f"{prefix}keys").split
    assert config.host == [f"{prefix}mosquitto"] and config.client_path == "/broker"
    written = {m.split(":")[1]: m.split(":")[0] for m in SERVICES[f"{prefix}broker-config"]["volumes"]}
    # it writes every login volume of its session (and reads the roster)
    assert set(written.values()) == {f"{prefix}keys-public", *(v for v in VOLUMES if v.startswith(f"{prefix}broker-"))}
    broker = SERVICES[f"{prefix}mosquitto"]
    # only the generated configuration (no anonymous listener: its own mosquitto.conf is never used), and a
    # volume of its own where it keeps its sessions across a restart
    assert config.persistence == "/mosquitto/data"
    assert broker["volumes"] == [f"{written[f'{config.out}/broker']}:{config.config_path}:ro",
                                 f"{prefix}mosquitto-data:{config.persistence}"]
    assert "ports" not in broker and all("mosquitto.conf" not in v for v in broker["volumes"])
    roles = [f"{prefix}observer", f"{prefix}parties-a", f"{prefix}parties-b",
             *(f"mpc-server-{i}" for i in range(3) if prefix)]
    logins = {name: _login(name) for name in roles}
    assert logins[f"{prefix}observer"] == ("observer", written[f"{config.out}/clients/observer"])
    for name in roles[1:3]:
        user, volume = logins[name]
        assert user == f"parties-{_args(name).parties}" and volume == written[f"{config.out}/clients/{user}"]
    for name in roles[3:]:  # a compute server logs in as itself: `mpdp broker config` wrote that login
        user, volume = logins[name]
        assert user == name and volume == written[f"{config.out}/clients/{user}"]
    assert len({volume for _, volume in logins.values()}) == len(roles)
    assert all(SERVICES[name]["environment"]["MPDP_BROKER_URL"].split("@")[1] ==
               f"{prefix}mosquitto:{8884 if name.endswith('observer') else 8883}" for name in roles)
    assert _args("simulate").broker == "embedded" and "mosquitto" not in SERVICES["simulate"].get("depends_on", {})


def test_the_compute_servers_are_the_rosters_and_each_mounts_only_its_own_keys() -> None:
    keys = _args("mpc-keys")
    assert (keys.protocol, keys.servers, keys.threshold) == ("mpc", 3, 1)
    written = {m.split(":")[1]: m.split(":")[0] for m in SERVICES["mpc-keys"]["volumes"]}
    for i, address in enumerate(keys.server_address):
        name = f"mpc-server-{i}"
        assert address.split(":")[0] == name  # server i's MPyC address is its service in the compose network
        args = _args(name)
        assert args.roster == Path("/keys/roster.json") and args.keys == Path(f"/keys/server-{i}/server-{i}.key")
        mounts = {m.split(":")[1]: m for m in SERVICES[name]["volumes"]}
        assert set(mounts) == {"/keys", f"/keys/server-{i}", "/broker"}
        assert mounts[f"/keys/server-{i}"] == f"{written[f'{keys.out}/server-{i}']}:/keys/server-{i}:ro"
        assert mounts["/keys"] == "mpc-keys-public:/keys:ro"
        assert SERVICES[name]["depends_on"]["mpc-mosquitto"] == {"condition": "service_healthy"}
    # no other role mounts a server's keys
    server_volumes = {written[f"{keys.out}/server-{i}"] for i in range(3)}
    for name, service in SERVICES.items():
        if name != "mpc-keys" and not name.startswith("mpc-server-"):
            assert not {m.split(":")[0] for m in service.get("volumes", [])} & server_volumes, name
