"""``mpdp mechanism`` end to end (argument parsing, JSON, errors, sizes, extreme epsilon)."""

import json
import tracemalloc

import pytest

from tests.parties.cli.invoke import ok, refused


def _run(capsys, *argv: str) -> dict | str:
    return ok(capsys, *argv)


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
    refused(capsys, "mechanism", *argv)


def refused_without_allocating(capsys, *argv: str) -> str:
    """``refused`` while tracing Python and numpy allocations: the peak stays far below what the refused
    size would take (a 10^8-node graph needs at least 800 MB), so the check ran before any array was built."""
    tracemalloc.start()
    try:
        line = refused(capsys, *argv)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 100 * 2**20, f"{peak / 2**20:.0f} MiB allocated before refusing"
    return line


@pytest.mark.timeout(60)
@pytest.mark.parametrize("argv, limit", [
    (["--graph", "majority:100000000", "--epsilon", "1"], "at most 1000000"),
    (["--graph", "majority:100000000000", "--epsilon", "1"], "at most 1000000"),
    (["--graph", "line:100000000,100000000", "--epsilon", "1", "--boundary", "0.3"], "at most 2000000"),
])
def test_sizes_are_refused_up_front(capsys, argv, limit) -> None:
    line = refused_without_allocating(capsys, "mechanism", *argv)
    assert limit in line and "--graph=" in line


@pytest.mark.parametrize("epsilon", ["1000", "1e200", "1e308", "inf"])
@pytest.mark.parametrize("extra", [[], ["--balanced"]])
def test_majority_at_huge_epsilon_is_exact(capsys, epsilon, extra) -> None:
    doc = ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", epsilon, *extra, "--json")
    assert list(doc["probabilities"].values()) == [1.0, 1.0, 0.0, 0.0]  # red = output 0 (majority NO)
    assert doc["average_accuracy"] == 1.0 and doc["worst_case_accuracy"] == 1.0


@pytest.mark.parametrize("delta", ["0", "0.2"])
def test_lines_at_huge_epsilon_no_warning(capsys, delta) -> None:
    for epsilon in (1e200, 1e308):
        doc = ok(capsys, "mechanism", "--graph", "line:4,3", "--epsilon", repr(epsilon), "--delta", delta,
                 "--boundary", "0.3", "--json")
        # eps ~ inf: one step from the boundary the true color is certain
        assert list(doc["probabilities"].values()) == [0.0, 0.0, 0.0, 0.3, 1.0, 1.0, 1.0]
        doc = ok(capsys, "mechanism", "--graph", "majority:4", "--epsilon", repr(epsilon), "--delta", delta,
                 "--json")
        assert doc["worst_case_accuracy"] <= doc["average_accuracy"] <= 1.0


def test_no_transition_is_null(capsys) -> None:
    doc = ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", "1", "--json")
    assert doc["transition"] is None and doc["red"] == "output 0 (majority NO)"
    doc = ok(capsys, "mechanism", "--graph", "line:4,3", "--epsilon", "0.2624", "--delta", "0.1",
             "--boundary", "0.8", "--json")
    assert isinstance(doc["transition"], int) and doc["transition"] >= 0
    out = ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", "1")
    assert "tau = none" in out and "P(output red = output 0 (majority NO))" in out


def test_graph_echoes_the_whole_value(capsys) -> None:
    assert "--graph='line:0,3'" in refused(capsys, "mechanism", "--graph", "line:0,3", "--epsilon", "1")


def test_a_binary_graph_file_is_a_one_line_error(capsys, tmp_path) -> None:
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 4)
    assert "UTF-8" in refused(capsys, "mechanism", "--graph", str(binary), "--epsilon", "1")


def test_the_text_table_joins_runs_of_counts_with_one_value(capsys, tmp_path, graph_vectors) -> None:
    doc = ok(capsys, "mechanism", "--graph", "majority:2001", "--epsilon", "1", "--json")
    printed = [f"{round(p, 12):.12g}" for p in doc["probabilities"].values()]
    out = ok(capsys, "mechanism", "--graph", "majority:2001", "--epsilon", "1").splitlines()[2:]
    expanded = []  # every count once, in order, with the value the JSON gives it
    for line in out:
        label, value = line.split()
        first, _, last = label.partition("-")
        expanded += [(n, value) for n in range(int(first), int(last or first) + 1)]
    assert expanded == list(enumerate(printed))
    assert len(out) < 100 and len(out) == 1 + sum(a != b for a, b in zip(printed, printed[1:]))
    case = next(c for c in graph_vectors if c["kind"] == "graph_optimal_given_boundary" and c["expected"]["feasible"])
    (path := tmp_path / "graph.json").write_text(json.dumps(case))
    named = ok(capsys, "mechanism", "--graph", str(path)).splitlines()
    assert [line.split()[0] for line in named[-len(case["inputs"]["vertices"]):]] == case["inputs"]["vertices"]
