"""``mpdp report`` refuses what is not a finished run, naming what RUN_DIR should hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpdp.parties.session.run_report import build_page
from mpdp.protocols.errors import ParameterError
from tests.parties.cli.invoke import refused


def test_not_a_run_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "report", str(tmp_path))
    assert "results.json (mpdp simulate --out), sweep.json (mpdp sweep --out), decisions.json (mpdp observe --out)" in line
    assert "an existing directory" in refused(capsys, "report", str(tmp_path / "missing"))


def test_a_damaged_document_is_named(tmp_path: Path) -> None:
    (tmp_path / "sweep.json").write_text("{not json")
    with pytest.raises(ParameterError, match="a readable JSON document"):
        build_page(tmp_path)
    (tmp_path / "sweep.json").write_text('{"points": []}')
    with pytest.raises(ParameterError, match="the sweep.json that mpdp sweep writes"):
        build_page(tmp_path)
