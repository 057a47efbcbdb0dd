"""``mpdp party``: what it checks before touching the network."""

from pathlib import Path

import pytest

from tests.parties.cli.invoke import refused

BROKER = "mqtt://127.0.0.1:1"


def test_party_checks_its_arguments(keys_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = str(keys_folder / "roster.json")
    party = ["party", "--roster", roster, "--keys", str(keys_folder / "parties"), "--dataset", "house-votes-84"]
    assert "running broker" in refused(capsys, *party, "--parties", "0-2")
    assert "ids in 0..2" in refused(capsys, *party, "--parties", "0-3", "--broker", BROKER)
    assert "3 rows" in refused(capsys, *party, "--parties", "0-2", "--broker", BROKER)
    wrong_keys = ["party", "--roster", roster, "--keys", str(keys_folder / "coordinator"), "--dataset", "x.csv"]
    assert "readable key file of party 0" in refused(capsys, *wrong_keys, "--parties", "0", "--broker", BROKER)
