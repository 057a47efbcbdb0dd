"""--broker / MPDP_BROKER_URL parsing, and topic names."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.settings import ENV_VAR, BrokerSettings
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
    ["http://h:1883", "mqtts://h", "mqtt://", "mqtt://h:99999", "mqtt://h:0", "mqtt://h/path",
     "mqtt://u:p@h", "mqtt://h?qos=1", "mqtt://h?protocol=4", "mqtt://h?timeout=-1", "broker", "h:1883"],
)
def test_bad_urls_name_the_value(url: str) -> None:
    with pytest.raises(ParameterError) as info:
        BrokerSettings.from_url(url, environ={})
    assert url in str(info.value) and "mqtt://HOST" in str(info.value)


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
