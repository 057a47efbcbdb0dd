"""analysis.reports.documents: strict JSON text of the documents mpdp writes."""

import json
import math

import numpy as np
import pytest

from mpdp.analysis.reports.documents import to_json_text
from mpdp.protocols.errors import ParameterError


def test_to_json_text_is_strict() -> None:
    document = {"a": math.inf, "b": [-math.inf, 1.5, np.float64(2.0), np.int64(3)], "c": np.array([0.5]),
                "d": (True, None, "x")}
    text = to_json_text(document)
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-strict token {c}")) == {
        "a": "inf", "b": ["-inf", 1.5, 2.0, 3], "c": [0.5], "d": [True, None, "x"]}
    with pytest.raises(ParameterError, match=r"\.rows\[1\]"):
        to_json_text({"rows": [1.0, math.nan]})


def test_long_lists_are_one_line_inside_an_indented_document() -> None:
    """A list of more than LONG_LIST items is written on one line (the C encoder), the rest indented as json.dumps
    indents; the text parses back to the same values as json's own indented text of the strict document."""
    from mpdp.analysis.reports.documents import LONG_LIST

    parties = [{"id": i, "epsilon": np.float64(0.5), "delta": 0.0} for i in range(LONG_LIST + 1)]
    document = {"head": {"k": len(parties), "short": [1, 2]}, "parties": parties, "tail": math.inf}
    text = to_json_text(document, indent=2)
    expected = {"head": {"k": LONG_LIST + 1, "short": [1, 2]},
                "parties": [{"id": i, "epsilon": 0.5, "delta": 0.0} for i in range(LONG_LIST + 1)], "tail": "inf"}
    assert json.loads(text) == expected
    lines = text.splitlines()
    assert lines[:5] == ["{", '  "head": {', '    "k": 1001,', '    "short": [', "      1,"]
    long_line = next(line for line in lines if line.startswith('  "parties": '))
    assert long_line == '  "parties": ' + json.dumps(expected["parties"]) + ","
    short = [{"id": 0, "x": 1.0}] * LONG_LIST  # at the bound: indented as json indents
    assert to_json_text({"p": short}, indent=1) == json.dumps({"p": short}, indent=1)


def test_a_nan_deep_in_a_long_list_is_named() -> None:
    rows = [{"accuracy": 0.5}] * 5000 + [{"accuracy": np.float64("nan")}]
    with pytest.raises(ParameterError, match=r"JSON value \.rows\[5000\]\.accuracy=nan"):
        to_json_text({"rows": rows}, indent=2)
