"""docker-compose.yml cannot run here (no Docker engine); its mpdp commands, key and broker volumes are
checked: every command parses with the real CLI, the key split covers the House exactly once, each party
service mounts exactly the key directory of the parties it hosts (and the observer no party key), and
every role logs in to the TLS broker with its own client directory of `mpdp broker config` only."""

from pathlib import Path

import pytest

from mpdp.parties.cli.main import COMMANDS, build_parser
from mpdp.parties.session.datasets import load_dataset
from mpdp.parties.rounds.ranges import parse_ranges

yaml = pytest.importorskip("yaml")
COMPOSE = yaml.safe_load((Path(__file__).resolve().parents[1] / "docker-compose.yml").read_text())
SERVICES = COMPOSE["services"]
K = load_dataset("house-votes-84").num_parties


def _args(service: str):
    command = SERVICES[service]["command"]
    assert command[0] == "mpdp"
    return build_parser(*COMMANDS).parse_args(command[1:])


def test_every_mpdp_command_parses() -> None:
    commands = {name: _args(name).command for name, s in SERVICES.items() if "command" in s}
    assert commands == {"keys": "keys", "broker-config": "broker", "observer": "observe", "parties-a": "party",
                        "parties-b": "party", "simulate": "simulate"}
    assert SERVICES["mosquitto"]["image"].startswith("eclipse-mosquitto")


def test_party_services_split_the_house_mount_only_their_own_keys_and_keep_a_record() -> None:
    keys = _args("keys")
    assert keys.parties == K
    split = [parse_ranges(s, K, "--split") for s in keys.split]
    hosted = []
    for name in ("parties-a", "parties-b"):
        args = _args(name)
        parties = parse_ranges(args.parties, K)
        assert parties in split and args.keys == Path(f"/keys/parties-{args.parties}")
        mounts = {m.split(":")[1]: m.split(":")[0] for m in SERVICES[name]["volumes"]}
        # the keys read-only; the answer record in a writable volume of the host's own
        record = f"records-{name[-1]}"
        assert mounts == {"/keys": "keys-public", str(args.keys): mounts[str(args.keys)], "/records": record,
                          "/broker": f"broker-{name[-1]}"}
        assert args.record.parent == Path("/records") and f"{record}:/records" in SERVICES[name]["volumes"]
        assert all(m.endswith(":ro") for m in SERVICES[name]["volumes"] if "/keys" in m)
        assert f"{mounts[str(args.keys)]}:{args.keys}" in SERVICES["keys"]["volumes"]
        hosted.extend(parties)
    assert sorted(hosted) == list(range(K))
    observer = _args("observer")
    mounts = {m.split(":")[1]: m.split(":")[0] for m in SERVICES["observer"]["volumes"]}
    assert str(observer.keys) in mounts and not any("parties" in target for target in mounts)
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


def test_the_broker_is_locked_down_and_each_role_has_only_its_own_login() -> None:
    config = _args("broker-config")
    assert (config.command, config.action) == ("broker", "config") and config.split == _args("keys").split
    assert config.host == ["mosquitto"] and config.client_path == "/broker"
    written = {m.split(":")[1]: m.split(":")[0] for m in SERVICES["broker-config"]["volumes"]}
    broker = SERVICES["mosquitto"]
    assert broker["volumes"] == [f"{written[f'{config.out}/broker']}:{config.config_path}:ro"]
    assert "ports" not in broker and all("mosquitto.conf" not in v for v in broker["volumes"])
    logins = {name: _login(name) for name in ("observer", "parties-a", "parties-b")}
    assert logins["observer"] == ("observer", written[f"{config.out}/clients/observer"])
    for name in ("parties-a", "parties-b"):
        user, volume = logins[name]
        assert user == f"parties-{_args(name).parties}" and volume == written[f"{config.out}/clients/{user}"]
    assert len({volume for _, volume in logins.values()}) == 3
    assert _args("simulate").broker == "embedded" and "mosquitto" not in SERVICES["simulate"].get("depends_on", {})
