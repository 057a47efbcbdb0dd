"""Run ``mpdp`` in-process (:func:`mpdp.parties.cli.main.main`) and read what it printed.

``ok`` asserts exit 0 and returns stdout (parsed as strict JSON when ``--json`` is among the arguments);
``refused`` asserts exit 2 with exactly one ``mpdp: error:`` line on stderr and nothing on stdout.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from mpdp.parties.cli.main import main


def strict_json(text: str) -> Any:
    """``json.loads`` that fails the test on the non-standard tokens NaN, Infinity and -Infinity."""
    return json.loads(text, parse_constant=lambda token: pytest.fail(f"non-strict JSON token {token}"))


def ok(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    """Exit 0; returns the JSON document when ``--json`` is given (to stdout), else the text."""
    assert main(list(argv)) == 0
    out = capsys.readouterr().out
    return strict_json(out) if "--json" in argv else out


def refused(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Exit 2 with exactly one line on stderr, starting ``mpdp: error:``, and no output; returns the line."""
    assert main(list(argv)) == 2
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mpdp: error:"), err
    assert captured.out == ""
    return err[0]
