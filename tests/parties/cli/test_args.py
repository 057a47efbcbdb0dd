"""parties.cli.args: list parsing, negative option values, strict JSON output (unit and through mpdp)."""

import math

import pytest

from mpdp.parties.cli.args import join_negative_values, parse_number_list, value_options
from mpdp.parties.cli.main import COMMANDS, build_parser
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import ok, refused


def test_parse_number_list_values() -> None:
    assert parse_number_list("0.1, 0.5,1", "--epsilon") == [0.1, 0.5, 1.0]
    assert parse_number_list("1,3,5", "--voters", int) == [1, 3, 5]
    assert parse_number_list("inf", "--epsilon") == [math.inf]


@pytest.mark.parametrize("text, position", [("3,,5", "item 2 of 3"), ("0.1,", "item 2 of 2"),
                                            (",1", "item 1 of 2")])
def test_parse_number_list_refuses_empty_items(text: str, position: str) -> None:
    with pytest.raises(ParameterError) as info:
        parse_number_list(text, "--epsilon")
    assert position in str(info.value) and repr(text) in str(info.value) and "--epsilon" in str(info.value)


@pytest.mark.parametrize("text, convert", [("", float), ("  ", float), ("0.1,x", float), ("1,2.5", int)])
def test_parse_number_list_refuses_bad_items(text: str, convert) -> None:
    with pytest.raises(ParameterError, match="--voters"):
        parse_number_list(text, "--voters", convert)


def test_join_negative_values() -> None:
    options = {"--epsilon", "--budget", "-k"}
    assert join_negative_values(["x", "--epsilon", "-1:2", "--budget", "-1,0", "-k", "-3"], options) == [
        "x", "--epsilon=-1:2", "--budget=-1,0", "-k=-3"]
    assert join_negative_values(["--epsilon", "-inf", "--epsilon", "-.5", "--epsilon", "-NaN"], options) == [
        "--epsilon=-inf", "--epsilon=-.5", "--epsilon=-NaN"]
    # not a value: an option after an option, a flag, and everything after --
    assert join_negative_values(["--epsilon", "--json", "--json", "-1", "--", "--epsilon", "-1"], options) == [
        "--epsilon", "--json", "--json", "-1", "--", "--epsilon", "-1"]


def test_value_options_of_the_mpdp_parser() -> None:
    options = value_options(build_parser(*COMMANDS))
    assert {"--epsilon", "--delta-slack", "-k", "--voters", "--graph", "--out"} <= options
    assert not {"--balanced", "--force", "-h"} & options


@pytest.mark.parametrize("argv, needle", [
    (["compose", "--epsilon", "0.1,,0.5", "--delta-slack", "1e-6"], "item 2 of 3 is empty"),
    (["compose", "--epsilon", "0.1,"], "item 2 of 2 is empty"),
    (["compose", "--epsilon", "0.1,0.2", "--delta", "0,,0"], "--delta='0,,0'"),
    (["compare-central", "--voters", "3,,5", "--epsilon", "1"], "--voters='3,,5'"),
    (["compare-central", "--voters", "3", "--epsilon", "1,"], "--epsilon='1,'"),
    (["accuracy", "--epsilon", "1,,2", "--function", "majority"], "item 2 of 3 is empty"),
])
def test_empty_list_items_are_refused(capsys, argv, needle) -> None:
    assert needle in refused(capsys, *argv)


PLOTTERS = [
    ["compose"],
    ["compare-central", "--voters", "3", "--epsilon", "1"],
    ["mechanism", "--graph", "majority:3", "--epsilon", "1"],
]


@pytest.mark.parametrize("command", PLOTTERS, ids=lambda c: c[0])
@pytest.mark.parametrize("bad", ["x.xyz", "nodir/a.png", "nc1", "", "/proc/x.png", "."])
def test_bad_plot_paths_are_refused_before_any_work(capsys, tmp_path, command, bad) -> None:
    path = bad if bad.startswith("/") or bad in ("", ".") else str(tmp_path / bad)
    line = refused(capsys, *command, "--plot", path)
    assert f"--plot={path!r}" in line
    assert not (tmp_path / "nc1.png").exists()


@pytest.mark.parametrize("command", PLOTTERS, ids=lambda c: c[0])
def test_plot_writes_exactly_the_path_it_reports(capsys, tmp_path, command) -> None:
    target = tmp_path / "figure.svg"
    extra = ["--epsilon", "0.1", "-k", "3", "--delta-slack", "1e-6"] if command == ["compose"] else []
    doc = ok(capsys, *command, *extra, "--plot", str(target), "--json")
    assert doc["plot"] == str(target) and target.read_text().lstrip().startswith("<?xml")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.svg"]
    assert f"wrote {target}" in ok(capsys, *command, *extra, "--plot", str(target))


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
    line = refused(capsys, *argv)
    assert "expected one argument" not in line and value in line


def test_output_directories_are_checked(capsys, tmp_path) -> None:
    for bad in ("", "/proc/foo"):
        assert "--out=" in refused(capsys, "keys", "--parties", "2", "--out", bad)
    (tmp_path / "file").write_text("")
    assert "not a file" in refused(capsys, "keys", "--parties", "2", "--out", str(tmp_path / "file"))


def test_json_is_strict_with_infinite_epsilon(capsys) -> None:
    doc = ok(capsys, "compose", "--epsilon", "inf", "-k", "3", "--json")
    assert doc["epsilon_tilde"] == "inf"
    doc = ok(capsys, "accuracy", "--epsilon", "inf,1,1", "--function", "majority", "--json")
    assert doc["rules"]["average"]["average_accuracy"] <= 1.0
    doc = ok(capsys, "mechanism", "--graph", "line:2,2", "--epsilon", "inf", "--boundary", "0.5", "--json")
    assert doc["red"] == "color R"




def test_a_logged_warning_carries_one_mpdp_prefix() -> None:
    """The formatter says ``mpdp WARNING <logger>:``; the broker's notice said ``mpdp: note:`` again (``mpdp simulate
    --quiet`` printed ``mpdp WARNING mpdp.broker: mpdp: note: the embedded broker ...``)."""
    import logging

    from mpdp.broker.embedded import NO_PERSISTENCE_NOTICE
    from mpdp.parties.cli.args import LOG_FORMAT

    record = logging.LogRecord("mpdp.broker", logging.WARNING, __file__, 1, NO_PERSISTENCE_NOTICE, None, None)
    line = logging.Formatter(LOG_FORMAT).format(record)
    assert line.startswith("mpdp WARNING mpdp.broker: the embedded broker (amqtt) does not keep persistent sessions")
    assert "mpdp:" not in line


def test_an_api_error_names_the_flag_the_user_typed() -> None:
    """The library names keywords; ``mpdp`` names each as its command writes it (the long option spelt like the
    keyword, a short-only option, a positional's metavar), keeping the error's class and everything else."""
    import argparse

    from mpdp.parties.cli.errors import flag_named
    from mpdp.protocols.errors import DatasetError, ParameterError

    parser = argparse.ArgumentParser()
    parser.add_argument("--delta-slack", type=float)
    parser.add_argument("-k", type=int)
    parser.add_argument("run_dir", metavar="RUN_DIR")
    parser.add_argument("--worst-case", dest="rule", action="store_const", const="worst-case")
    parser.add_argument("--rule")
    parser.add_argument("--dataset")
    cases = [
        (ParameterError("delta_slack", 2.0, "a number in [0, 1)"), "--delta-slack=2.0 is not allowed: a number in [0, 1)"),
        (ParameterError("k", 0, "an integer >= 1"), "-k=0 is not allowed: an integer >= 1"),
        (ParameterError("run_dir", "x", "a run's folder"), "RUN_DIR='x' is not allowed: a run's folder"),
        (ParameterError("rule", "best", "average or worst-case"), "--rule='best' is not allowed: average or worst-case"),
        (ParameterError("epsilon", -1.0, "a number >= 0"), "epsilon=-1.0 is not allowed: a number >= 0"),  # no such flag
        (ParameterError("dataset e.csv: line 2", "3 cells", "2"), "--dataset e.csv: line 2='3 cells' is not allowed: 2"),
    ]
    for exc, line in cases:
        assert str(flag_named(exc, parser)) == line
    named = flag_named(DatasetError("dataset", "x", "a CSV file"), parser)
    assert isinstance(named, DatasetError) and (named.name, named.value, named.allowed) == ("--dataset", "x", "a CSV file")
