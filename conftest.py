"""Doctests of the Python API only: every module of ``mpdp/parties/api`` (a testpath) is collected as a
doctest module; ``pytest tests`` alone does not collect them. Examples there must stay fast (no live runs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.doctest import DoctestModule

API = Path(__file__).resolve().parent / "mpdp" / "parties" / "api"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".py" and file_path.parent == API:
        return DoctestModule.from_parent(parent, path=file_path)
    return None
