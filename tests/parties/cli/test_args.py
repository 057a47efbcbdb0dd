"""parties.cli_args: list parsing, output paths, strict JSON, negative option values."""

import json
import math
import os

import numpy as np
import pytest

from mpdp.parties.cli.main import build_parser
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
    options = value_options(build_parser())
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
