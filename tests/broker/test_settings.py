"""--broker / MPDP_BROKER_URL parsing, and topic names."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import external_endpoint
from mpdp.broker.settings import ENV_VAR, PASSWORD_ENV, TLS_ENV, USERNAME_ENV, BrokerSettings, redact_url
from mpdp.broker.topics import Topics
from mpdp.protocols.errors import ParameterError


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mqtt://broker.example:1999", ("external", "broker.example", 1999, "3.1.1", 10.0)),
        ("mqtt://10.0.0.7", ("external", "10.0.0.7", 1883, "3.1.1", 10.0)),
        ("MQTT://h:1?protocol=5&timeout=2.5", ("external", "h", 1, "5", 2.5)),
        ("embedded", ("embedded", None, None, "3.1.1", 10.0)),
        (" Mosquitto ", ("mosquitto", None, None, "3.1.1", 10.0)),
        ("auto", ("auto", None, None, "3.1.1", 10.0)),
    ],
)
def test_urls_and_keywords(url: str, expected: tuple[object, ...]) -> None:
    s = BrokerSettings.from_url(url, environ={})
    assert (s.kind, s.host, s.port, s.protocol, s.timeout) == expected


def test_the_command_line_wins_over_the_environment_which_wins_over_auto() -> None:
    env = {ENV_VAR: "mqtt://envhost:1884"}
    assert BrokerSettings.from_url("embedded", environ=env).kind == "embedded"
    assert BrokerSettings.from_url(None, environ=env).host == "envhost"
    assert BrokerSettings.from_url(None, environ={}).kind == "auto"
    assert BrokerSettings.from_url("", environ={ENV_VAR: "embedded"}).kind == "embedded"


@pytest.mark.parametrize(
    "url",
    ["http://h:1883", "mqtt://", "mqtt://h:99999", "mqtt://h:0", "mqtt://h/path", "mqtts://h/path",
     "mqtt://h#x", "mqtt://h?qos=1", "mqtt://h?protocol=4", "mqtt://h?timeout=-1", "broker", "h:1883"],
)
def test_bad_urls_name_the_value(url: str) -> None:
    with pytest.raises(ParameterError) as info:
        BrokerSettings.from_url(url, environ={})
    assert url in str(info.value) and "mqtt|mqtts|ws|wss://[USER[:PASSWORD]@]HOST" in str(info.value)


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(ParameterError, match=ENV_VAR):
        BrokerSettings.from_url(None, environ={ENV_VAR: "ftp://x"})


def test_settings_are_frozen_and_forbid_extra_fields() -> None:
    s = BrokerSettings.from_url("mqtt://h:1", environ={})
    with pytest.raises(ValidationError):
        s.port = 2  # type: ignore[misc]
    with pytest.raises(ValidationError):
        BrokerSettings(kind="external", host="h", port=1, colour="red")  # type: ignore[call-arg]
    assert BrokerSettings.from_url(s.url, environ={}) == s


def test_topics_live_under_the_session() -> None:
    t = Topics("house-1984")
    assert (t.rounds, t.status, t.party(12), t.all_parties) == (
        "mpdp/house-1984/rounds", "mpdp/house-1984/status", "mpdp/house-1984/party/12",
        "mpdp/house-1984/party/+")
    assert [t.party_of(x) for x in ("mpdp/house-1984/party/12", "mpdp/house-1984/party/012",
                                    "mpdp/other/party/1", "mpdp/house-1984/party/x", "mpdp/house-1984/rounds")] == [
        12, None, None, None, None]
    for bad in ("a/b", "+", "#", "", "-x", "x" * 65):
        with pytest.raises(ParameterError, match="session"):
            Topics(bad)


def test_ipv6_broker_url_keeps_brackets() -> None:
    settings = BrokerSettings.from_url("mqtt://[::1]:1")
    assert settings.host == "::1" and settings.url.startswith("mqtt://[::1]:1?")
    assert BrokerSettings.from_url(settings.url) == settings
    assert BrokerEndpoint("external", "::1", 1883).url == "mqtt://[::1]:1883"
    assert BrokerEndpoint("external", "127.0.0.1", 1883).url == "mqtt://127.0.0.1:1883"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("mqtts://b.example", ("mqtts", 8883, None, True)),
        ("ws://b.example", ("ws", 80, None, False)),
        ("wss://b.example:9443/ws/mqtt", ("wss", 9443, "/ws/mqtt", True)),
        ("WS://b.example:9001/", ("ws", 9001, None, False)),
    ],
)
def test_tls_and_websocket_schemes_with_their_default_ports(url: str, expected: tuple[object, ...]) -> None:
    s = BrokerSettings.from_url(url, environ={})
    assert (s.scheme, s.port, s.path, s.tls) == expected
    assert BrokerSettings.from_url(s.url, environ={}) == s


SECRET = "hunter2:/@x"  # a password with the characters a URL must escape


def test_a_login_in_the_url_is_decoded_and_the_password_never_shown() -> None:
    s = BrokerSettings.from_url("mqtts://party%2Da:hunter2%3A%2F%40x@b.example", environ={})
    assert s.username == "party-a" and s.password is not None and s.password.get_secret_value() == SECRET
    endpoint = external_endpoint(s)
    assert endpoint is not None and endpoint.password == SECRET
    for text in (repr(s), str(s), s.url, repr(endpoint), endpoint.url, str(s.model_dump())):
        assert "hunter2" not in text
    assert s.url.startswith("mqtts://party-a@b.example:8883") and endpoint.url == "mqtts://party-a@b.example:8883"


def test_the_login_comes_from_the_environment_unless_the_url_has_one() -> None:
    env = {USERNAME_ENV: "envuser", PASSWORD_ENV: "envpass"}
    s = BrokerSettings.from_url("mqtt://h", environ=env)
    assert s.username == "envuser" and s.password is not None and s.password.get_secret_value() == "envpass"
    s = BrokerSettings.from_url("mqtt://u:p@h", environ=env)
    assert s.username == "u" and s.password is not None and s.password.get_secret_value() == "p"


@pytest.mark.parametrize(
    ("url", "options", "env", "names"),
    [
        ("mqtt://h", {"cafile": "ca.pem"}, {}, "TLS files only with an mqtts:// or wss://"),
        ("embedded", {"cafile": "ca.pem"}, {}, "external broker"),
        ("mqtts://h", {"cafile": "missing.pem"}, {}, "no such file"),
        ("mqtts://h", {"key": "ca.pem"}, {}, "together with --cert"),
        ("mqtts://:hunter2@h", {}, {}, "together with a user name"),
        ("embedded", {}, {USERNAME_ENV: "u"}, "external broker only"),
        ("mqtts://u:hunter2@h:99999", {}, {}, "1..65535"),
    ],
)
def test_bad_logins_are_named_and_never_print_the_password(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, url: str, options: dict[str, str], env: dict[str, str],
        names: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ca.pem").write_text("x")
    with pytest.raises(ParameterError) as info:
        BrokerSettings.from_url(url, environ=env, **options)
    assert names in str(info.value) and "hunter2" not in str(info.value)


def test_tls_files_and_the_mqtt_version_from_options_win_over_the_environment(tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name}.pem" for name in ("ca", "ca2", "cert", "key")}
    for path in files.values():
        path.write_text("x")
    env = {TLS_ENV["cafile"]: str(files["ca"]), TLS_ENV["cert"]: str(files["cert"]), TLS_ENV["key"]: str(files["key"])}
    s = BrokerSettings.from_url("mqtts://h?protocol=3.1.1", environ=env, cafile=files["ca2"], protocol="5")
    assert (s.cafile, s.certfile, s.keyfile, s.protocol) == (files["ca2"], files["cert"], files["key"], "5")


def test_the_redacted_url_hides_only_the_password() -> None:
    assert redact_url("mqtts://u:p@h:1/x") == "mqtts://u:***@h:1/x"
    assert redact_url("mqtt://u@h") == "mqtt://u@h" and redact_url("embedded") == "embedded"


def test_the_reconnect_window_is_left_to_the_command_unless_given() -> None:
    """Deployed roles: 10 min by default; a simulation sizes it to its round timeout (max(60 s, timeout))."""
    from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW
    from mpdp.parties.session.external_broker import deployment_endpoint, simulation_window

    left = BrokerSettings.from_url("mqtt://h", environ={})
    assert left.reconnect_window is None and left.window() == DEFAULT_RECONNECT_WINDOW == 600.0
    assert deployment_endpoint("mqtt://h", {}).reconnect_window == 600.0
    assert deployment_endpoint("mqtt://h", {}, reconnect_window=45).reconnect_window == 45.0
    assert (simulation_window(20.0), simulation_window(90.0)) == (60.0, 90.0)
    assert left.with_window(None, simulation_window(90.0)).reconnect_window == 90.0
    given = BrokerSettings.from_url("mqtt://h", environ={}, reconnect_window=0)
    assert given.with_window(None, 90.0).reconnect_window == 0.0  # given (0: no retry) stays
    assert given.with_window(30.0, 90.0).reconnect_window == 30.0  # the keyword wins
    reached = BrokerEndpoint("mosquitto", "127.0.0.1", 1, timeout=3.0, reconnect_window=75.0).reached()
    assert (reached.timeout, reached.reconnect_window) == (3.0, 75.0)


@pytest.mark.parametrize("window", [-1.0, float("nan"), 8 * 86400.0])
def test_a_bad_reconnect_window_is_named(window: float) -> None:
    with pytest.raises(ParameterError, match="--reconnect-window"):
        BrokerSettings.from_url("mqtt://h", environ={}, reconnect_window=window)
    with pytest.raises(ParameterError, match="reconnect_window"):
        BrokerSettings.from_url("mqtt://h", environ={}).with_window(window, 60.0)
