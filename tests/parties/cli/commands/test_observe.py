"""``mpdp observe``: what it checks before touching the network."""

from pathlib import Path

import pytest

from tests.parties.cli.invoke import refused

BROKER = "mqtt://127.0.0.1:1"


def test_observe_checks_its_arguments(keys_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = str(keys_folder / "roster.json")
    observe = ["observe", "--roster", roster, "--keys", str(keys_folder / "coordinator"), "--broker", BROKER]
    assert "exactly one of" in refused(capsys, *observe, "--rounds", "2", "--dataset-rounds", "house-votes-84")
    assert "symmetric" in refused(capsys, *observe, "--rounds", "2", "--function", "table:0,1")
    assert "readable key file of the coordinator" in refused(
        capsys, "observe", "--roster", roster, "--keys", str(keys_folder / "parties"), "--rounds", "1",
        "--broker", BROKER)
