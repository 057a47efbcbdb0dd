"""parties.cli.args: list parsing, output paths, strict JSON, negative option values (unit and through mpdp)."""

import json
import math
import os

import numpy as np
import pytest

from mpdp.parties.cli.main import COMMANDS, build_parser
from mpdp.parties.cli.args import (
    join_negative_values,
    output_dir,
    output_file,
    parse_number_list,
    plot_file,
    plot_suffixes,
    to_json_text,
    value_options,
)
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


def test_output_file_accepts_a_writable_path(tmp_path) -> None:
    target = tmp_path / "a.png"
    assert plot_file(str(target)) == target
    assert not target.exists()  # checked, not left behind
    assert output_file(tmp_path / "table.txt", "--out") == tmp_path / "table.txt"


def test_plot_suffixes_are_matplotlibs() -> None:
    assert {"png", "pdf", "svg"} <= set(plot_suffixes())
    assert "xyz" not in plot_suffixes()


@pytest.mark.parametrize("make, why", [
    (lambda d: "", "not empty"),
    (lambda d: str(d), "not a directory"),
    (lambda d: str(d / "nodir" / "a.png"), "does not exist"),
    (lambda d: str(d / "x.xyz"), ".png"),
    (lambda d: str(d / "nc1"), ".png"),  # no suffix: refused, never silently written as nc1.png
    (lambda d: "/proc/x.png", "may write"),
])
def test_plot_file_refuses_bad_paths(tmp_path, make, why: str) -> None:
    path = make(tmp_path)
    with pytest.raises(ParameterError) as info:
        plot_file(path)
    assert why in str(info.value) and "--plot" in str(info.value) and len(str(info.value).splitlines()) == 1


def test_output_file_refuses_a_file_as_parent(tmp_path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(ParameterError, match="does not exist"):
        output_file(tmp_path / "f" / "a.png", "--plot")


def test_output_dir(tmp_path) -> None:
    target = tmp_path / "a" / "b"
    assert output_dir(str(target), "--out") == target and target.is_dir()
    (tmp_path / "file").write_text("")
    for bad in ("", str(tmp_path / "file"), "/proc/foo"):
        with pytest.raises(ParameterError, match="--out"):
            output_dir(bad, "--out")


def test_to_json_text_is_strict() -> None:
    document = {"a": math.inf, "b": [-math.inf, 1.5, np.float64(2.0), np.int64(3)], "c": np.array([0.5]),
                "d": (True, None, "x")}
    text = to_json_text(document)
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict token {c}")) == {
        "a": "inf", "b": ["-inf", 1.5, 2.0, 3], "c": [0.5], "d": [True, None, "x"]}
    with pytest.raises(ParameterError, match=r"\.rows\[1\]"):
        to_json_text({"rows": [1.0, math.nan]})


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


def test_output_file_refuses_read_only_file(tmp_path) -> None:
    target = tmp_path / "ro.png"
    target.write_text("")
    target.chmod(0o444)
    if os.access(target, os.W_OK):  # root may write anyway: nothing to refuse
        pytest.skip("this user can write read-only files")
    with pytest.raises(ParameterError):
        plot_file(target)


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
