"""The newcomer QA pass, end to end through ``mpdp`` (parties.cli.main): one test per defect class."""

import json
import math
import re
import time

import pytest

from mpdp.parties.cli.main import main
from mpdp.protocols.errors import ParameterError


def _strict(text: str):
    return json.loads(text, parse_constant=lambda token: pytest.fail(f"non-strict JSON token {token}"))


def _ok(capsys, *argv: str):
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    return _strict(out) if "--json" in argv else out


def _refused(capsys, *argv: str) -> str:
    """Exit 2 with exactly one line on stderr; returns it."""
    started = time.perf_counter()
    assert main(list(argv)) == 2
    assert time.perf_counter() - started < 5.0  # refused up front, not after the work
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mpdp: error:"), err
    return err[0]


# A. lists, output paths, negative values


@pytest.mark.parametrize("argv, needle", [
    (["compose", "--epsilon", "0.1,,0.5", "--delta-slack", "1e-6"], "item 2 of 3 is empty"),
    (["compose", "--epsilon", "0.1,"], "item 2 of 2 is empty"),
    (["compose", "--epsilon", "0.1,0.2", "--delta", "0,,0"], "--delta='0,,0'"),
    (["compare-central", "--voters", "3,,5", "--epsilon", "1"], "--voters='3,,5'"),
    (["compare-central", "--voters", "3", "--epsilon", "1,"], "--epsilon='1,'"),
    (["accuracy", "--epsilon", "1,,2", "--function", "majority"], "item 2 of 3 is empty"),
])
def test_empty_list_items_are_refused(capsys, argv, needle) -> None:
    assert needle in _refused(capsys, *argv)


PLOTTERS = [
    ["compose"],
    ["compare-central", "--voters", "3", "--epsilon", "1"],
    ["mechanism", "--graph", "majority:3", "--epsilon", "1"],
]


@pytest.mark.parametrize("command", PLOTTERS, ids=lambda c: c[0])
@pytest.mark.parametrize("bad", ["x.xyz", "nodir/a.png", "nc1", "", "/proc/x.png", "."])
def test_bad_plot_paths_are_refused_before_any_work(capsys, tmp_path, command, bad) -> None:
    path = bad if bad.startswith("/") or bad in ("", ".") else str(tmp_path / bad)
    line = _refused(capsys, *command, "--plot", path)
    assert f"--plot={path!r}" in line
    assert not (tmp_path / "nc1.png").exists()


@pytest.mark.parametrize("command", PLOTTERS, ids=lambda c: c[0])
def test_plot_writes_exactly_the_path_it_reports(capsys, tmp_path, command) -> None:
    target = tmp_path / "figure.svg"
    extra = ["--epsilon", "0.1", "-k", "3", "--delta-slack", "1e-6"] if command == ["compose"] else []
    doc = _ok(capsys, *command, *extra, "--plot", str(target), "--json")
    assert doc["plot"] == str(target) and target.read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.svg"]
    assert f"wrote {target}" in _ok(capsys, *command, *extra, "--plot", str(target))


@pytest.mark.parametrize("argv, value", [
    (["compose", "--epsilon", "-1", "-k", "3"], "-1"),
    (["compose", "--epsilon", "-inf", "-k", "3"], "-inf"),
    (["compose", "--epsilon", "1", "-k", "-3"], "-3"),
    (["compose", "--epsilon", "1", "-k", "3", "--delta-slack", "-1e-3"], "-0.001"),
    (["mechanism", "--graph", "line:2,2", "--epsilon", "-inf", "--boundary", "0.3"], "-inf"),
    (["mechanism", "--graph", "line:2,2", "--epsilon", "1", "--boundary", "-1e-3"], "-0.001"),
    (["compare-central", "--voters", "3", "--epsilon", "-1,2"], "-1"),
    (["keys", "--parties", "3", "--epsilon", "-1:2", "--out", "unused"], "-1"),
])
def test_negative_values_reach_the_option(capsys, argv, value) -> None:
    line = _refused(capsys, *argv)
    assert "expected one argument" not in line and value in line


def test_output_directories_are_checked(capsys, tmp_path) -> None:
    for bad in ("", "/proc/foo"):
        assert "--out=" in _refused(capsys, "keys", "--parties", "2", "--out", bad)
    (tmp_path / "file").write_text("")
    assert "not a file" in _refused(capsys, "keys", "--parties", "2", "--out", str(tmp_path / "file"))


# B. sizes that would hang or allocate hundreds of GiB


@pytest.mark.parametrize("argv, limit", [
    (["mechanism", "--graph", "majority:100000000", "--epsilon", "1"], "at most 1000000"),
    (["mechanism", "--graph", "majority:100000000000", "--epsilon", "1"], "at most 1000000"),
    (["mechanism", "--graph", "line:100000000,100000000", "--epsilon", "1", "--boundary", "0.3"],
     "at most 2000000"),
    (["compare-central", "--voters", "100000000", "--epsilon", "1"], "at most 401"),
])
def test_sizes_are_refused_up_front(capsys, argv, limit) -> None:
    line = _refused(capsys, *argv)
    assert limit in line and ("--graph=" in line or "voters=" in line)


# C. numerics


@pytest.mark.parametrize("epsilon", ["1000", "1e200", "1e308", "inf"])
@pytest.mark.parametrize("extra", [[], ["--balanced"]])
def test_majority_at_huge_epsilon_is_exact(capsys, epsilon, extra) -> None:
    doc = _ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", epsilon, *extra, "--json")
    assert list(doc["probabilities"].values()) == [1.0, 1.0, 0.0, 0.0]  # red = output 0 (majority NO)
    assert doc["average_accuracy"] == 1.0 and doc["worst_case_accuracy"] == 1.0


@pytest.mark.parametrize("epsilon", ["1000", "1e200", "1e308", "inf"])
def test_compare_central_at_huge_epsilon(capsys, epsilon) -> None:
    rows = _ok(capsys, "compare-central", "--voters", "1,2,3,4", "--epsilon", epsilon, "--json")
    for row in rows:
        assert row["epsilon"] == ("inf" if epsilon == "inf" else float(epsilon))
        # odd k: both are exact; even k: a tie at k/2 the central mechanism breaks at random
        values = [row[key] for key in ("central_average", "central_worst", "distributed_average",
                                       "distributed_worst")]
        assert all(0.0 <= v <= 1.0 for v in values)
        if row["voters"] % 2:
            assert values == [1.0, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("delta", ["0", "0.2"])
def test_lines_at_huge_epsilon_no_warning(capsys, delta) -> None:
    for epsilon in (1e200, 1e308):
        doc = _ok(capsys, "mechanism", "--graph", "line:4,3", "--epsilon", repr(epsilon), "--delta", delta,
                  "--boundary", "0.3", "--json")
        # eps ~ inf: one step from the boundary the true color is certain
        assert list(doc["probabilities"].values()) == [0.0, 0.0, 0.0, 0.3, 1.0, 1.0, 1.0]
        doc = _ok(capsys, "mechanism", "--graph", "majority:4", "--epsilon", repr(epsilon), "--delta", delta,
                  "--json")
        assert doc["worst_case_accuracy"] <= doc["average_accuracy"] <= 1.0


@pytest.mark.parametrize("epsilon, expected", [("1e200", 1e201), ("1e308", "inf")])
def test_compose_at_huge_epsilon(capsys, epsilon, expected) -> None:
    doc = _ok(capsys, "compose", "--epsilon", epsilon, "-k", "10", "--delta-slack", "1e-6", "--json")
    for value in (doc["epsilon_tilde"], doc["bounds"]["theorem_3_4"], doc["bounds"]["basic"]):
        assert value == (expected if isinstance(expected, str) else pytest.approx(expected, rel=1e-12))
    doc = _ok(capsys, "compose", "--epsilon", f"{epsilon},1,{epsilon}", "--delta", "0.1,0,0.2", "--json")
    assert doc["bounds"]["basic"] == ("inf" if expected == "inf" else pytest.approx(2 * float(epsilon)))


def test_json_is_strict_with_infinite_epsilon(capsys) -> None:
    doc = _ok(capsys, "compose", "--epsilon", "inf", "-k", "3", "--json")
    assert doc["epsilon_tilde"] == "inf"
    doc = _ok(capsys, "accuracy", "--epsilon", "inf,1,1", "--function", "majority", "--json")
    assert doc["rules"]["average"]["average_accuracy"] <= 1.0
    doc = _ok(capsys, "mechanism", "--graph", "line:2,2", "--epsilon", "inf", "--boundary", "0.5", "--json")
    assert doc["red"] == "color R"


def test_no_transition_is_null(capsys) -> None:
    doc = _ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", "1", "--json")
    assert doc["transition"] is None and doc["red"] == "output 0 (majority NO)"
    doc = _ok(capsys, "mechanism", "--graph", "line:4,3", "--epsilon", "0.2624", "--delta", "0.1",
              "--boundary", "0.8", "--json")
    assert isinstance(doc["transition"], int) and doc["transition"] >= 0
    out = _ok(capsys, "mechanism", "--graph", "majority:3", "--epsilon", "1")
    assert "tau = none" in out and "P(output red = output 0 (majority NO))" in out


# D. messages


def test_compose_delta_slack_default_and_range(capsys) -> None:
    doc = _ok(capsys, "compose", "--epsilon", "1", "-k", "3", "--json")
    assert doc["delta_slack"] == 1e-6
    assert "[0, 1)" in _refused(capsys, "compose", "--epsilon", "1", "-k", "3", "--delta-slack", "1")
    with pytest.raises(SystemExit):
        main(["compose", "--help"])
    assert "(default 1e-06)" in " ".join(capsys.readouterr().out.split())


def test_compose_blames_the_mismatching_list(capsys) -> None:
    line = _refused(capsys, "compose", "--epsilon", "1", "-k", "3", "--delta", "0.5,0.2")
    assert "--delta='0.5,0.2'" in line
    line = _refused(capsys, "compose", "--epsilon", "1,2", "--delta", "0.5,0.2,0.1")
    assert "--delta='0.5,0.2,0.1'" in line and "2 (one per --epsilon value)" in line
    assert line.count("-k") == 0


def test_graph_echoes_the_whole_value(capsys) -> None:
    assert "--graph='line:0,3'" in _refused(capsys, "mechanism", "--graph", "line:0,3", "--epsilon", "1")


@pytest.mark.parametrize("command", [[], ["compose"], ["mechanism"], ["compare-central"], ["accuracy"]])
def test_help_explains_paper_codes(capsys, command) -> None:
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    text = capsys.readouterr().out
    for code, words in (("000", "Composition Theorem"), ("001", "Graph Colorings"),
                        ("002", "Secure Multi-party Differential Privacy")):
        if re.search(rf"(?<![\d.]){code}\b", text) or not command:  # cited: then explained
            assert f"{code} = " in text and words in text, (command, code)


def test_compare_central_help_has_examples(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["compare-central", "--help"])
    assert "examples:\n  mpdp compare-central --voters" in capsys.readouterr().out


def test_dataset_row_width_message(tmp_path) -> None:
    from mpdp.parties.session.datasets import load_dataset

    path = tmp_path / "data.csv"
    path.write_text("1,0\n1,0,1\n")
    with pytest.raises(ParameterError) as info:
        load_dataset(str(path))
    assert str(info.value) == f"{path}: line 2 has 3 cells, the first row has 2"


def test_ipv6_broker_url_keeps_brackets() -> None:
    from mpdp.broker.endpoint import BrokerEndpoint
    from mpdp.broker.settings import BrokerSettings

    settings = BrokerSettings.from_url("mqtt://[::1]:1")
    assert settings.host == "::1" and settings.url.startswith("mqtt://[::1]:1?")
    assert BrokerSettings.from_url(settings.url) == settings
    assert BrokerEndpoint("external", "::1", 1883).url == "mqtt://[::1]:1883"
    assert BrokerEndpoint("external", "127.0.0.1", 1883).url == "mqtt://127.0.0.1:1883"


def test_accuracy_clamped_where_rounding_overshoots() -> None:
    from mpdp.analysis.central_vs_distributed import compare_majority
    from mpdp.protocols.majority_mechanism import central_majority_mechanism

    for eps in (1000.0, math.inf):
        for criterion in ("average", "worst-case"):
            assert central_majority_mechanism(3, eps, 0.0, criterion=criterion).average_accuracy() == 1.0
        row = compare_majority(3, eps, 0.0)
        assert row.distributed_average == 1.0 and row.central_average == 1.0
