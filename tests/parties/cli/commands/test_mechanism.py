"""``mpdp mechanism`` and ``mpdp compare-central`` end to end (argument parsing, JSON, errors)."""

import argparse
import json

import pytest

from mpdp.parties.cli.commands import compare_central, mechanism
from mpdp.protocols.errors import ParameterError


def _run(capsys, *argv: str) -> dict | str:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(required=True)
    mechanism.register(sub)
    compare_central.register(sub)
    args = parser.parse_args(list(argv))
    assert args.run(args) == 0
    out = capsys.readouterr().out
    return json.loads(out) if "--json" in argv else out


def test_vectors_through_the_cli(capsys, tmp_path, graph_vectors) -> None:
    for case in graph_vectors:
        if case["kind"] == "graph_optimal_given_boundary":
            path = tmp_path / f"{case['id']}.json"
            path.write_text(json.dumps(case))
            doc = _run(capsys, "mechanism", "--graph", str(path), "--json")
            assert doc["feasible"] == case["expected"]["feasible"]
            if doc["feasible"]:
                assert doc["probabilities"] == pytest.approx(case["expected"]["R"], abs=1e-9)
        elif case["kind"] == "graph_line":
            i = case["inputs"]
            doc = _run(capsys, "mechanism", "--graph", f"line:{i['n_B']},{i['n_R']}", "--epsilon",
                       repr(i["eps"]), "--delta", repr(i["delta"]), "--boundary", repr(i["R_nB"]), "--json")
            assert list(doc["probabilities"].values()) == pytest.approx(case["expected"]["R"], abs=1e-9)
            tau = case["expected"]["tau"]
            assert doc["transition"] == (None if tau == -1 else tau)  # -1 (no transition) is null


def test_majority_and_plot(capsys, tmp_path) -> None:
    doc = _run(capsys, "mechanism", "--graph", "majority:3", "--epsilon", "0.6931471805599453",
               "--delta", "0.1", "--balanced", "--plot", str(tmp_path / "m.png"), "--json")
    assert list(doc["probabilities"].values()) == pytest.approx([0.9, 0.7, 0.3, 0.1], abs=1e-12)
    assert (tmp_path / "m.png").exists()


def test_infeasible_is_an_answer(capsys, tmp_path, graph_vectors) -> None:
    case = next(c for c in graph_vectors if c["id"] == "graph-fig2-infeasible")
    path = tmp_path / "g.json"
    path.write_text(json.dumps(case["inputs"]))
    assert "cannot be satisfied" in _run(capsys, "mechanism", "--graph", str(path))


@pytest.mark.parametrize("argv", [
    ["--graph", "line:4,3", "--epsilon", "-1", "--boundary", "0.3"],
    ["--graph", "line:4,3", "--epsilon", "1", "--delta", "1", "--boundary", "0.3"],
    ["--graph", "line:4,3", "--epsilon", "1", "--boundary", "1.5"],
    ["--graph", "line:4", "--epsilon", "1", "--boundary", "0.5"],
    ["--graph", "/nonexistent.json", "--epsilon", "1"],
])
def test_bad_input_is_a_clear_error(capsys, argv) -> None:
    with pytest.raises(ParameterError):
        _run(capsys, "mechanism", *argv)


def test_compare_central_table(capsys) -> None:
    out = _run(capsys, "compare-central", "--voters", "1,3", "--epsilon", "1")
    assert "central avg" in out and len(out.strip().splitlines()) == 4
