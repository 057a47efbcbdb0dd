"""The report page's HTML and Markdown: escaped text, inline figures only, a fetch-forbidding policy,
tables as wide as their header, folded tables left out of the Markdown."""

from __future__ import annotations

import base64
import re

import pytest

from mpdp.analysis.plot_style import new_axes
from mpdp.analysis.reports.report import plot_privacy_spent
from mpdp.analysis.reports.report_page import (
    ReportFigure,
    ReportPage,
    Section,
    Table,
    cells,
    render_html,
    render_markdown,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _page() -> ReportPage:
    figure, ax = new_axes(None, (3.0, 2.0))
    ax.plot([0, 1], [0, 1])
    return ReportPage("run <1>", "what & how", (("dataset", "a|b"),), (
        Section("Rounds", ("x < y",), (Table("rounds", ("round", "value"), (("r1", "1"), ("r2", "2")), "rounds"),
                                       Table("long", ("party",), (("0",),), folded=True)),
                (ReportFigure("accuracy", "the <figure>", figure),)),))


def test_html_escapes_text_and_embeds_every_figure_as_png() -> None:
    text = render_html(_page())
    assert "<title>run &lt;1&gt;</title>" in text and "what &amp; how" in text and "x &lt; y" in text
    sources = re.findall(r'src="([^"]*)"', text)
    assert len(sources) == 1 and sources[0].startswith("data:image/png;base64,")
    assert base64.b64decode(sources[0].split(",", 1)[1]).startswith(PNG_MAGIC)
    assert "default-src 'none'; img-src data:" in text  # the browser may fetch nothing
    assert not re.search(r'(src|href)="(https?:|file:|//)', text)
    assert re.search(r'<table id="rounds">.*?<tbody>\s*<tr>.*?</tr>\s*<tr>.*?</tr>\s*</tbody>', text, re.S)
    assert "<details><summary>long (1 rows)</summary>" in text


def test_markdown_has_the_tables_and_links_the_figure_files() -> None:
    text = render_markdown(_page(), {"accuracy": "report-accuracy.png"})
    assert text.startswith("# run &lt;1&gt;\n\nwhat &amp; how\n")  # user text: no raw HTML, no markup
    assert "| dataset | a\\|b |" in text and "| r2 | 2 |" in text and "x &lt; y" in text
    assert "![the &lt;figure&gt;](report-accuracy.png)" in text
    assert "**long**" not in text  # folded tables stay in the HTML page


def test_a_row_must_be_as_wide_as_the_header() -> None:
    with pytest.raises(ValueError, match="row 1 of table 't' has 1 cells, expected 2"):
        Table("t", ("a", "b"), (("1", "2"), ("3",)))


def test_cells() -> None:
    assert cells([0.123456, True, False, None, 3, "x"]) == ("0.1235", "yes", "NO", "-", "3", "x")


def test_privacy_plot_is_the_distribution_over_parties_and_skips_infinite_epsilons() -> None:
    figure = plot_privacy_spent([2.0, 1.0, 3.0, float("inf")], [3.0, 1.5, 4.5, float("inf")])
    ax = figure.axes[0]
    lines = {line.get_gid(): line for line in ax.get_lines() if line.get_gid()}
    # the ECDF of the 4 parties: 1/4, 2/4, 3/4 at the sorted finite values (the infinite one not drawn)
    assert list(lines["optimal"].get_xdata()) == [1.0, 2.0, 3.0]
    assert list(lines["basic"].get_xdata()) == [1.5, 3.0, 4.5]
    assert list(lines["optimal"].get_ydata()) == [0.25, 0.5, 0.75]
    legend = " ".join(t.get_text() for t in ax.get_legend().get_texts())
    assert "median, optimal: 2 nats" in legend and "median, basic: 3 nats" in legend
    assert "1 with $\\varepsilon = \\infty$ not drawn" in legend
    with pytest.raises(ValueError, match="2 optimal against 1 basic"):
        plot_privacy_spent([1.0, 2.0], [1.0])


def test_links_to_the_data_files_in_html_and_markdown() -> None:
    page = ReportPage("t", "s", (("k", "3"),), links=(("sweep.csv", "../run dir/sweep.csv"), ("sweep.json", "sweep.json")))
    text = render_html(page)
    assert '<p class="files">Data beside this page: <a href="../run dir/sweep.csv">sweep.csv</a> ' in text
    assert '<a href="sweep.json">sweep.json</a></p>' in text
    assert "Data beside this page: [sweep.csv](<../run dir/sweep.csv>) [sweep.json](<sweep.json>)" in render_markdown(page, {})
    assert "Data beside this page" not in render_html(ReportPage("t", "s", ()))


@pytest.mark.parametrize("spent, words", [([], "no party in the ledger"), ([float("inf")] * 3, "3 of 3 parties"),
                                           ([float("inf")], "1 of 1 party")])
def test_privacy_spent_with_nothing_finite_says_why_and_draws_no_legend(spent: list[float], words: str) -> None:
    figure = plot_privacy_spent(spent, spent)
    ax = figure.axes[0]
    assert ax.get_legend() is None and not ax.lines
    assert [t.get_text() for t in ax.texts] == [f"{words}: no finite spend to draw" if not spent else
                                                f"{words} with $\\varepsilon = \\infty$: no finite spend to draw"]
