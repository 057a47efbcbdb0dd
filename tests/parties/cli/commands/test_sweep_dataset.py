"""``mpdp sweep --dataset``: the House and a CSV end to end (table, files, report page), errors naming the value."""

from __future__ import annotations

import json

import pytest

import mpdp
from mpdp.parties.api.schemas import validate_document
from mpdp.parties.cli.main import main
from tests.parties.cli.invoke import ok, refused

#: 5 members (labels in column 1), 3 bills; E takes no part in b2.
TOY = "name,b1,b2,b3\nA,y,n,y\nB,y,y,n\nC,n,y,y\nD,y,n,n\nE,n,?,y\n"


@pytest.fixture
def toy(tmp_path):
    path = tmp_path / "toy.csv"
    path.write_text(TOY, encoding="utf-8")
    return path


@pytest.mark.slow
def test_house_sweep_prints_a_table_and_every_point_is_consistent(capsys) -> None:
    """The brief's command, average rule (the worst-case LP at k ~ 430 costs ~0.5 s a bill a point)."""
    out = ok(capsys, "sweep", "--dataset", "house-votes-84", "--epsilon", "0.1:2:5", "--samples", "2000",
             "--rule", "average")
    assert "mpdp sweep: 5 points x 16 rounds of house-votes-84 (k = 435)" in out
    assert "worst round" in out and "curator" in out and "every point consistent with theory" in out
    assert out.count(" yes ") == 5


def test_csv_sweep_writes_files_and_a_report(capsys, toy, tmp_path) -> None:
    run = tmp_path / "run"
    doc = ok(capsys, "sweep", "--dataset", str(toy), "--epsilon", "0.5:2:2", "--samples", "2000", "--seed", "4",
             "--out", str(run), "--json")
    assert doc["inputs"]["dataset"] == str(toy) and doc["inputs"]["rounds"] == ["b1", "b2", "b3"]
    assert doc["inputs"]["participants"] == [5, 4, 5] and doc["inputs"]["observer"] == ["central"]
    assert [p["rule"] for p in doc["points"]] == ["average"] * 2 + ["worst-case"] * 2
    assert all(p["consistent"] and p["samples"] == 3 * 2000 for p in doc["points"])
    assert validate_document(doc).kind == "sweep"
    api = mpdp.sweep("0.5:2:2", dataset=str(toy), samples=2000, seed=4).to_dict()
    assert api["points"] == doc["points"]
    assert json.loads((run / "sweep.json").read_text())["points"] == doc["points"]
    assert (run / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    assert main(["report", str(run), "--quiet"]) == 0
    page = (run / "report.md").read_text(encoding="utf-8")
    assert "toy.csv" in page and f"2000 samples per round of {toy}:" in page
    assert page.count("| alpha |") == 1  # the configuration's alpha once


def test_the_table_names_the_level_each_round_is_tested_at(capsys, toy) -> None:
    assert main(["sweep", "--dataset", str(toy), "--epsilon", "0.5:2:2", "--samples", "200"]) == 0
    out = capsys.readouterr().out
    assert f"(each round tested at {0.05 / (4 * 3):.3g})" in out  # 4 points x 3 bills


@pytest.mark.parametrize(("extra", "match"), [
    (["--observer", "party"], "--observer='party'"),
    (["--parties", "7"], "--parties='7'"),
    (["--live", "--jobs", "2"], "--live="),
])
def test_dataset_options_are_one_line_errors(capsys, toy, extra, match) -> None:
    assert match in refused(capsys, "sweep", "--dataset", str(toy), "--epsilon", "1", *extra)


def test_a_bad_dataset_path_is_named(capsys, tmp_path) -> None:
    missing = str(tmp_path / "missing.csv")
    assert f"--dataset='{missing}'" in refused(capsys, "sweep", "--dataset", missing, "--epsilon", "1")
    assert "(no such file: " in refused(capsys, "sweep", "--dataset", missing, "--epsilon", "1")
