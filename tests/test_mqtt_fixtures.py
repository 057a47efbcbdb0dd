"""tests/mqtt_fixtures.require_mosquitto: a missing mosquitto skips locally and fails under CI."""

import pytest

from tests import mqtt_fixtures


@pytest.mark.parametrize(("ci", "outcome"), [
    (None, pytest.skip.Exception), ("", pytest.skip.Exception), ("false", pytest.skip.Exception),
    ("0", pytest.skip.Exception), ("true", pytest.fail.Exception), ("1", pytest.fail.Exception),
    ("TRUE", pytest.fail.Exception),
])
def test_a_missing_mosquitto_skips_except_under_ci(ci: str | None, outcome: type[BaseException],
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(mqtt_fixtures, "find_mosquitto", lambda: None)
    if ci is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", ci)
    with pytest.raises(outcome, match="mosquitto binary not installed"):
        mqtt_fixtures.require_mosquitto()


def test_an_installed_mosquitto_is_required_quietly(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setattr(mqtt_fixtures, "find_mosquitto", lambda: tmp_path / "mosquitto")
    monkeypatch.setenv("CI", "true")
    mqtt_fixtures.require_mosquitto()
