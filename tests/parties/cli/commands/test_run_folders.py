"""One run per folder for every command that writes one (``simulate``, ``sweep``, ``observe``): a folder holding
an earlier run of the same command or another kind of run's result is refused with one line (``--force``
replaces it); ``mpdp report`` refuses a folder with two kinds of result; ``simulate --resume`` checks the
transcript store first (a damaged one: one line, nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpdp.parties.session.output_paths import RUN_RESULTS, fresh_output_dir
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.commands.test_damaged_files import _damage_page, _store
from tests.parties.cli.invoke import ok, refused

SWEEP = ["sweep", "--epsilon", "0.5:1:2", "--parties", "5", "--samples", "200", "--seed", "1", "--quiet"]


def _listing(folder: Path) -> dict[str, int]:
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir()}


def test_sweep_into_a_simulate_run_or_an_earlier_sweep_is_refused(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text('{"kind": "a simulate run"}')
    before = _listing(run)
    line = refused(capsys, *SWEEP, "--out", str(run))
    assert "it holds results.json; another kind of run: simulate" in line and "--force" in line, line
    assert _listing(run) == before

    sweeps = tmp_path / "sweeps"
    ok(capsys, *SWEEP, "--out", str(sweeps))
    first = _listing(sweeps)
    assert sorted(first) == ["sweep.csv", "sweep.json", "sweep.png"]
    line = refused(capsys, *SWEEP, "--out", str(sweeps))
    assert "it holds sweep.json, sweep.csv, sweep.png" in line, line
    assert _listing(sweeps) == first  # the first sweep is untouched
    ok(capsys, *SWEEP, "--out", str(sweeps), "--force")
    assert sorted(_listing(sweeps)) == sorted(first)
    assert json.loads((sweeps / "sweep.json").read_text())["points"]


def test_each_kind_of_run_refuses_the_others_results(tmp_path: Path) -> None:
    for own, kind in RUN_RESULTS.items():
        for other, other_kind in RUN_RESULTS.items():
            folder = tmp_path / f"{kind}-{other_kind}"
            folder.mkdir()
            (folder / other).write_text("{}")
            if other == own:  # the command's own files are the caller's to list (observe resumes its own)
                assert fresh_output_dir(folder, "--out", (), False, writes=(own,)) == folder
                continue
            with pytest.raises(ParameterError, match=f"it holds {other}; another kind of run: {other_kind}"):
                fresh_output_dir(folder, "--out", (own,), False)
            assert (folder / other).exists()
            fresh_output_dir(folder, "--out", (own,), True)
            assert not (folder / other).exists()


def test_report_refuses_a_folder_with_two_kinds_of_result(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "results.json").write_text("{}")
    (run / "sweep.json").write_text("{}")
    line = refused(capsys, "report", str(run))
    assert "it holds results.json and sweep.json, the results of simulate and sweep runs" in line, line
    assert sorted(p.name for p in run.iterdir()) == ["results.json", "sweep.json"]


def test_simulate_resume_checks_the_store_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    path = _store(run)
    (run / "results.json").write_text(json.dumps({"session": "s1", "seed": 1, "inputs": {}, "run": {"data": ""}}))
    _damage_page(path, 4)
    before = _listing(run)
    line = refused(capsys, "simulate", "--parties", "4", "--out", str(run), "--resume", "--broker",
                   "mqtt://127.0.0.1:9?timeout=2")
    assert str(path) in line and "damaged" in line, line
    assert _listing(run) == before
