"""No command writes over what it reads: an output path that is one of the command's inputs (the same file by
any path: relative, through ``..`` or a link), or a run's store or result document in a run folder it is given,
is refused in one line before any work, and the input is left byte for byte as it was."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from mpdp.parties.cli.args import input_paths
from mpdp.parties.cli.main import main
from mpdp.parties.session.output_paths import fresh_output_dir, reading, run_files
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import ok, refused
from tests.parties.session.test_export import _run_dir

ACCURACY = 'epsilon = "1,1,1"\nfunction = "majority"\n'


def _refusal(option: str, given: Path | str, source: Path, folder: Path | None = None) -> str:
    where = "" if folder is None else f", in the folder {folder} given as an input"
    return (f"mpdp: error: {option}='{given}' is not allowed: a file other than the command's inputs (it is the "
            f"input {source}{where}; writing it would destroy it)")


def test_export_never_writes_over_the_runs_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_dir(tmp_path)
    store = run / "transcripts.sqlite"
    before = store.read_bytes()
    (tmp_path / "alias.sqlite").symlink_to(store)
    for given in (store, run / ".." / "run" / "transcripts.sqlite", tmp_path / "alias.sqlite"):
        for option in ("--out", "--json"):
            line = refused(capsys, "export", str(run), "--format", "csv", option, str(given))
            assert line == _refusal(option, given, store, run)
    assert store.read_bytes() == before
    assert "9 rows" in ok(capsys, "export", str(run), "--out", str(run / "rows.csv"))  # beside it: written


@pytest.mark.parametrize("command", ["report", "verify"])
def test_report_and_verify_never_write_their_json_over_the_store(command: str, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    run = _run_dir(tmp_path)
    store = run / "transcripts.sqlite"
    before = store.read_bytes()
    assert refused(capsys, command, str(run), "--json", str(store)) == _refusal("--json", store, store, run)
    assert store.read_bytes() == before


def test_accuracy_never_writes_over_its_config(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a.toml").write_text(ACCURACY)
    for given in ("a.toml", "./a.toml", str(tmp_path / "a.toml")):
        assert refused(capsys, "accuracy", "--config", "a.toml", "--json", given) == _refusal(
            "--json", given, Path("a.toml"))
    assert Path("a.toml").read_text() == ACCURACY
    assert main(["accuracy", "--config", "a.toml", "--json", "b.json"]) == 0
    assert '"kind": "accuracy"' in Path("b.json").read_text()


def test_simulate_and_keys_never_write_over_their_input_files(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text("b0,b1\n1,0\n0,1\n1,1\n")
    assert refused(capsys, "simulate", "--dataset", str(votes), "--json", str(votes)) == _refusal(
        "--json", votes, votes)
    epsilons = tmp_path / "eps.txt"
    epsilons.write_text("1\n2\n")
    assert refused(capsys, "keys", "--parties", "2", "--epsilon", str(epsilons), "--out", str(tmp_path / "k"),
                   "--json", str(epsilons)) == _refusal("--json", epsilons, epsilons)
    assert votes.read_text() == "b0,b1\n1,0\n0,1\n1,1\n" and epsilons.read_text() == "1\n2\n"
    assert sorted(os.listdir(tmp_path)) == ["eps.txt", "votes.csv"]  # refused before any work: no k/, no run


def test_a_run_folders_files_are_never_deleted_when_the_folder_is_an_input(tmp_path: Path) -> None:
    """``--force`` deletes an earlier run's files in ``--out``: not when they are what the command reads."""
    run = _run_dir(tmp_path)
    with reading([str(run)]), pytest.raises(ParameterError, match="it is the input .*transcripts.sqlite"):
        fresh_output_dir(run, "--out", run_files("transcripts.sqlite"), force=True)
    assert (run / "transcripts.sqlite").is_file()
    assert fresh_output_dir(run, "--out", run_files("transcripts.sqlite"), force=True) == run  # no input: deleted
    assert not (run / "transcripts.sqlite").exists()


def test_input_paths_are_every_option_but_the_outputs(tmp_path: Path) -> None:
    args = argparse.Namespace(command="keys", run=print, config="c.toml", json="o.json", quiet=False, out="d",
                              plot="p.png", dataset="x.csv", split=["0-2", "3-5"], keys=tmp_path, epsilon=1.0,
                              seed=None)
    assert input_paths(args) == ["c.toml", "x.csv", "0-2", "3-5", str(tmp_path)]


def test_texts_that_no_file_can_have_are_no_inputs(tmp_path: Path) -> None:
    """A long list value (too long for a file name) or a NUL is an option's text, not an error of its own."""
    with reading([",".join(["0.5"] * 200), "a\0b", str(tmp_path / "missing")]):
        assert fresh_output_dir(tmp_path / "out", "--out", ["results.json"], force=False) == tmp_path / "out"
