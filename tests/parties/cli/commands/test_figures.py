"""``mpdp figures`` end to end: every figure written as PNG (300 dpi), SVG and PDF."""

import pathlib

import pytest

from mpdp.analysis.figures.paper_figures import PAPER_FIGURES
from tests.parties.cli.invoke import ok, refused


def test_writes_every_figure(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    out = ok(capsys, "figures", "--out", str(tmp_path / "figs"), "--json")
    assert set(out["figures"]) == set(PAPER_FIGURES)
    for name, (png, svg, pdf) in out["figures"].items():
        assert png == str(tmp_path / "figs" / f"{name}.png")
        assert pathlib.Path(png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"pHYs\x00\x00.\x23\x00\x00.\x23\x01" in pathlib.Path(png).read_bytes()[:200]  # 11811 px/m = 300 dpi
        assert "<svg" in pathlib.Path(svg).read_text()[:2000]
        assert pathlib.Path(pdf).read_bytes()[:5] == b"%PDF-"


def test_only_and_refused(capsys: pytest.CaptureFixture[str], tmp_path: pathlib.Path) -> None:
    text = ok(capsys, "figures", "--out", str(tmp_path), "--only", "002-xor")
    assert "002-xor" in text and sorted(p.name for p in tmp_path.iterdir()) == ["002-xor.pdf", "002-xor.png", "002-xor.svg"]
    assert "--only" in refused(capsys, "figures", "--out", str(tmp_path), "--only", "003-nope")
    assert "--formats" in refused(capsys, "figures", "--out", str(tmp_path), "--formats", "svg,gif")
    svg_only = tmp_path / "svg"
    ok(capsys, "figures", "--out", str(svg_only), "--only", "002-xor", "--formats", "svg")
    assert [p.name for p in svg_only.iterdir()] == ["002-xor.svg"]
