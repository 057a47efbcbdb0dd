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
    assert "--reconnect-window=-5.0 is not allowed: seconds from 0 (no retry) to 604800" in refused(
        capsys, *party, "--parties", "0-2", "--broker", BROKER, "--reconnect-window", "-5")


def test_party_checks_its_privacy_policy(keys_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text("party,a\np0,1\np1,0\np2,1\n")
    party = ["party", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys_folder / "parties"),
             "--dataset", str(votes), "--parties", "0-2", "--broker", BROKER]
    assert "max_repetitions=0 is not allowed" in refused(capsys, *party, "--max-repetitions", "0")
    assert "EPS,DELTA" in refused(capsys, *party, "--budget", "2")
    assert "delta_slack" in refused(capsys, *party, "--budget", "2,1e-9")  # below delta_tilde 1e-6
