"""The papers' figures read without the paper: a legend for every mark, a colour scale where colour carries a
value, one mathtext style (no ASCII ``eps``/``delta``), no legend over a curve, 300 dpi PNG files."""

from __future__ import annotations

import re
import struct
from pathlib import Path

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.legend import Legend
from matplotlib.text import Text

from mpdp.analysis.figures.paper_figures import PAPER_FIGURES
from mpdp.analysis.plot_style import DPI, eps_delta, save_figure

GRAPH_FIGURES = ("001-fig1-majority", "001-fig2-pullback", "001-thm2-example", "001-fig3-line")


@pytest.fixture(scope="module")
def drawn() -> dict[str, Figure]:
    figures = {name: build() for name, build in PAPER_FIGURES.items()}
    for figure in figures.values():
        FigureCanvasAgg(figure).draw()  # lay out (constrained layout, legends outside the axes)
    return figures


def _texts(figure: Figure) -> list[str]:
    return [t.get_text() for t in figure.findobj(Text) if t.get_text()]


def _outside_math(text: str) -> str:
    return re.sub(r"\$[^$]*\$", "", text)


@pytest.mark.parametrize("name", list(PAPER_FIGURES))
def test_one_mathtext_style(drawn: dict[str, Figure], name: str) -> None:
    for text in _texts(drawn[name]):
        plain = _outside_math(text)
        assert not re.search(r"\b(eps|epsilon|delta|lambda|tau)\b", plain), (name, text)
        assert text.count("$") % 2 == 0, (name, text)


@pytest.mark.parametrize("name", list(PAPER_FIGURES))
def test_every_figure_has_a_legend(drawn: dict[str, Figure], name: str) -> None:
    figure = drawn[name]
    legends = [lg for lg in figure.findobj(Legend)]
    assert legends, name
    labelled = {t.get_text() for lg in legends for t in lg.get_texts()}
    # every line drawn with a label (not matplotlib's "_child" default) is in a legend
    for ax in figure.axes:
        for line in ax.lines:
            label = str(line.get_label())
            if not label.startswith("_"):
                assert label in labelled, (name, label)


@pytest.mark.parametrize("name", GRAPH_FIGURES)
def test_graph_figures_have_the_colour_scale_and_the_key_of_marks(drawn: dict[str, Figure], name: str) -> None:
    figure = drawn[name]
    bars = [ax for ax in figure.axes if ax.get_ylabel() == "fill: P(output red)"]
    assert len(bars) == 1, name
    assert bars[0].get_ylim() == pytest.approx((0.0, 1.0))
    (key,) = [lg for lg in figure.legends if lg.get_gid() == "graph-key"]
    texts = " ".join(t.get_text() for t in key.get_texts())
    for mark in ("interior vertex", "boundary vertex", "true colour blue", "true colour red", "blue-red edge"):
        assert mark in texts, (name, mark)


def test_the_infeasible_figure_keys_the_violated_edge(drawn: dict[str, Figure]) -> None:
    (key,) = [lg for lg in drawn["001-infeasible"].legends if lg.get_gid() == "graph-key"]
    assert "edge no mechanism can satisfy" in {t.get_text() for t in key.get_texts()}


def _points_on(line: object, step: int = 40) -> np.ndarray:
    """Display coordinates along a Line2D, interpolated between its vertices."""
    xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))  # type: ignore[attr-defined]
    if len(xy) < 2:
        return xy
    t = np.linspace(0.0, 1.0, step)[:, None]
    return np.concatenate([a + t * (b - a) for a, b in zip(xy[:-1], xy[1:], strict=True)])


@pytest.mark.parametrize("name", ["002-xor", "000-fig1-region", "000-fig2-composition", "000-fig3-theorems",
                                  "001-fig3-line", "002-sum-debiased"])
def test_no_legend_hides_a_curve(drawn: dict[str, Figure], name: str) -> None:
    figure = drawn[name]
    renderer = figure.canvas.get_renderer()  # type: ignore[attr-defined]
    for ax in figure.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        box = legend.get_window_extent(renderer)
        for line in ax.lines:
            points = _points_on(line)
            inside = (points[:, 0] > box.x0) & (points[:, 0] < box.x1) & (points[:, 1] > box.y0) & (points[:, 1] < box.y1)
            assert not inside.any(), (name, line.get_label(), line.get_gid())


def _png_dpi(path: Path) -> float:
    data = path.read_bytes()
    at = data.index(b"pHYs") + 4
    x, y, unit = struct.unpack(">IIB", data[at:at + 9])
    assert unit == 1 and x == y  # pixels per metre, square pixels
    return x * 0.0254


def test_png_files_are_300_dpi(tmp_path: Path) -> None:
    assert DPI == 300
    path = save_figure(PAPER_FIGURES["002-xor"](), tmp_path / "xor.png")
    assert _png_dpi(path) == pytest.approx(300, abs=0.1)


def test_eps_delta_writes_the_papers_logarithms() -> None:
    assert eps_delta(np.log(2.0), 0.1) == r"$(\varepsilon, \delta) = (\log 2, 0.1)$"
    assert eps_delta(np.log(1.3), 0.1) == r"$(\varepsilon, \delta) = (\log 1.3, 0.1)$"
    assert eps_delta(0.4, 0.01) == r"$(\varepsilon, \delta) = (0.4, 0.01)$"
    assert eps_delta(1.0) == r"$\varepsilon = 1$" and eps_delta(0.0) == r"$\varepsilon = 0$"


def test_the_gallery_shows_every_figure_beside_the_papers_description() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs"
    page = (docs / "gallery.md").read_text(encoding="utf-8")
    shown = re.findall(r"!\[[^\]]*\]\((gallery/[^)]+\.svg)\)", page)
    assert [Path(s).stem for s in shown] == list(PAPER_FIGURES)  # each once, in the CLI's order
    for src in shown:
        assert (docs / src).read_text(encoding="utf-8").lstrip().startswith("<?xml")
    assert page.count("**In the paper.**") == len(PAPER_FIGURES) and page.count("**Here.**") == len(PAPER_FIGURES)
