"""`mpdp keys`, `mpdp party`, `mpdp observe`: what they check before touching the network."""

from pathlib import Path

import pytest

from mpdp.parties.cli.main import main
from mpdp.parties.session.files import read_roster


def _error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mpdp: error: ")
    return err[0]


def test_keys_writes_a_roster_and_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "keys"
    assert main(["keys", "--parties", "6", "--epsilon", "0.5:2", "--seed", "3", "--session", "k-1",
                 "--split", "0-2", "--split", "3-5", "--out", str(out)]) == 0
    assert "session k-1: 6 parties" in capsys.readouterr().out
    facts = read_roster(out / "roster.json")
    assert facts.session == "k-1" and all(0.5 <= m.epsilon <= 2 for m in facts.roster.mechanisms)
    assert "--force" in _error(capsys, ["keys", "--parties", "6", "--out", str(out)])
    assert "--split" in _error(capsys, ["keys", "--parties", "6", "--split", "0-2", "--out", str(tmp_path / "b")])
    assert "--parties=0" in _error(capsys, ["keys", "--parties", "0", "--out", str(tmp_path / "c")])


def test_party_and_observe_check_their_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MPDP_BROKER_URL", raising=False)
    assert main(["keys", "--parties", "3", "--out", str(tmp_path)]) == 0
    roster, broker = str(tmp_path / "roster.json"), "mqtt://127.0.0.1:1"
    party = ["party", "--roster", roster, "--keys", str(tmp_path / "parties"), "--dataset", "house-votes-84"]
    assert "running broker" in _error(capsys, [*party, "--parties", "0-2"])
    assert "ids in 0..2" in _error(capsys, [*party, "--parties", "0-3", "--broker", broker])
    assert "3 rows" in _error(capsys, [*party, "--parties", "0-2", "--broker", broker])
    wrong_keys = ["party", "--roster", roster, "--keys", str(tmp_path / "coordinator"), "--dataset", "x.csv"]
    assert "readable key file of party 0" in _error(capsys, [*wrong_keys, "--parties", "0", "--broker", broker])
    observe = ["observe", "--roster", roster, "--keys", str(tmp_path / "coordinator"), "--broker", broker]
    assert "exactly one of" in _error(capsys, [*observe, "--rounds", "2", "--dataset-rounds", "house-votes-84"])
    assert "symmetric" in _error(capsys, [*observe, "--rounds", "2", "--function", "table:0,1"])
    assert "readable key file of the coordinator" in _error(
        capsys, ["observe", "--roster", roster, "--keys", str(tmp_path / "parties"), "--rounds", "1",
                 "--broker", broker])
