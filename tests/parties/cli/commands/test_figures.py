"""``mpdp figures`` end to end: every figure written as PNG and SVG."""

import pathlib

import pytest

from mpdp.analysis.figures.paper_figures import PAPER_FIGURES
from tests.parties.cli.invoke import ok, refused


def test_writes_every_figure(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    out = ok(capsys, "figures", "--out", str(tmp_path / "figs"), "--json")
    assert set(out["figures"]) == set(PAPER_FIGURES)
    for name, (png, svg) in out["figures"].items():
        assert png == str(tmp_path / "figs" / f"{name}.png")
        assert pathlib.Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in pathlib.Path(svg).read_text()[:2000]


def test_only_and_refused(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    text = ok(capsys, "figures", "--out", str(tmp_path), "--only", "002-xor")
    assert "002-xor" in text and sorted(p.name for p in tmp_path.iterdir()) == ["002-xor.png", "002-xor.svg"]
    assert "--only" in refused(capsys, "figures", "--out", str(tmp_path), "--only", "003-nope")
