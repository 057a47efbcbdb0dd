"""A key folder written by ``mpdp keys`` (3 parties), for the deployment commands' argument checks."""

from pathlib import Path

import pytest

from mpdp.parties.cli.main import main


@pytest.fixture
def keys_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """roster.json, parties/ and coordinator/ of 3 parties; no broker URL in the environment."""
    monkeypatch.delenv("MPDP_BROKER_URL", raising=False)
    assert main(["keys", "--parties", "3", "--out", str(tmp_path / "keys")]) == 0
    capsys.readouterr()
    return tmp_path / "keys"
