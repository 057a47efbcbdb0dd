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
