"""``mpdp keys``: writes a roster and the key files, refuses to overwrite and bad splits."""

import math
from pathlib import Path

import pytest

from mpdp.parties.cli.main import main
from mpdp.parties.rounds.session_files import read_roster
from tests.parties.cli.invoke import refused


def test_keys_writes_a_roster_and_refuses_to_overwrite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "keys"
    assert main(["keys", "--parties", "6", "--epsilon", "0.5:2", "--seed", "3", "--session", "k-1",
                 "--split", "0-2", "--split", "3-5", "--out", str(out)]) == 0
    assert "session k-1: 6 parties" in capsys.readouterr().out
    facts = read_roster(out / "roster.json")
    assert facts.session == "k-1" and all(0.5 <= m.epsilon <= 2 for m in facts.roster.mechanisms)
    assert "--force" in refused(capsys, "keys", "--parties", "6", "--out", str(out))
    assert "--split" in refused(capsys, "keys", "--parties", "6", "--split", "0-2", "--out", str(tmp_path / "b"))
    assert "--parties=0" in refused(capsys, "keys", "--parties", "0", "--out", str(tmp_path / "c"))


def test_an_infinite_epsilon_is_written_as_inf_and_read_back(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "keys"
    assert main(["keys", "--parties", "2", "--epsilon", "inf", "--out", str(out)]) == 0
    assert capsys.readouterr().err.count("mpdp: warning: 2 parties with epsilon inf") == 1
    text = (out / "roster.json").read_text()
    assert '"epsilon": "inf"' in text and "Infinity" not in text  # as results.json and every --json output
    assert [m.epsilon for m in read_roster(out / "roster.json").roster.mechanisms] == [math.inf, math.inf]
    (out / "roster.json").write_text(text.replace('"inf"', '"Infinity"'))  # a roster of an earlier version
    assert [m.epsilon for m in read_roster(out / "roster.json").roster.mechanisms] == [math.inf, math.inf]
