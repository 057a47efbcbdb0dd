"""A finished run as one self-contained HTML page and a Markdown summary (``mpdp report``).

A :class:`ReportPage` is what a page shows, in order: links to the data files beside it, the
configuration, then sections of text, tables and figures. Tables wrap their cells (headers and long
cells break; no page is wider than its 72em column, checked at 1,280 px in headless Chromium). :func:`render_html` writes it with the standard library only (``string.Template``
and ``html.escape``): every figure is a base64 PNG inside the page, a Content-Security-Policy forbids
any fetch (no network, no other file), and a small script writes each image's natural size into its
``data-natural-width``/``data-natural-height`` attributes once it has loaded, the page's width into the
body's ``data-scroll-width`` and each table box's hidden width into its ``data-overflow``, so a headless
browser's DOM dump shows that every figure rendered and that nothing scrolls sideways. :func:`render_markdown` writes the same content as
Markdown that links the figures as PNG files written beside it.

Example:
    >>> page = ReportPage("demo", "a demo", (("k", "3"),), (Section("numbers", tables=(
    ...     Table("rounds", ("round", "accuracy"), (("1", "0.75"),)),)),))
    >>> "<td>0.75</td>" in render_html(page), "| 1 | 0.75 |" in render_markdown(page, {})
    (True, True)
"""

from __future__ import annotations

import base64
import html
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING

from mpdp.analysis.plot_style import PAGE_DPI

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["ReportFigure", "ReportPage", "Section", "Table", "cells", "figure_png", "render_html", "render_markdown"]


@dataclass(frozen=True, slots=True)
class Table:
    """A table of text cells.

    Attributes:
        caption: one line above it. columns: the header. rows: one tuple of cells per row (as wide as
            ``columns``). table_id: the HTML ``id`` (a test finds the per-round table by it).
        folded: shown folded (``<details>``) in HTML, left out of the Markdown (long per-party lists).

    Raises:
        ValueError: a row whose width is not the header's.
    """

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    table_id: str = ""
    folded: bool = False

    def __post_init__(self) -> None:
        for i, row in enumerate(self.rows):
            if len(row) != len(self.columns):
                raise ValueError(f"row {i} of table {self.caption!r} has {len(row)} cells, expected {len(self.columns)}")


@dataclass(frozen=True, slots=True)
class ReportFigure:
    """A matplotlib Figure with its caption; ``name`` is its file stem (``accuracy`` -> ``report-accuracy.png``)."""

    name: str
    caption: str
    figure: Figure


@dataclass(frozen=True, slots=True)
class Section:
    """A heading, paragraphs, figures and tables, shown in that order."""

    heading: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    figures: tuple[ReportFigure, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportPage:
    """The content of one report.

    Attributes:
        title: the page title. subtitle: what was run, one line.
        configuration: (name, value) pairs shown first. sections: the rest, in order.
        links: (file name, relative href) of the data files beside the page (JSON, CSV, SQLite), listed
            under the subtitle.
    """

    title: str
    subtitle: str
    configuration: tuple[tuple[str, str], ...]
    sections: tuple[Section, ...] = field(default=())
    links: tuple[tuple[str, str], ...] = field(default=())

    @property
    def figures(self) -> tuple[ReportFigure, ...]:
        """Every figure of the page, in order."""
        return tuple(f for s in self.sections for f in s.figures)


def figure_png(figure: Figure) -> bytes:
    """``figure`` as PNG bytes at :data:`~mpdp.analysis.plot_style.PAGE_DPI` (a page's inline image)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=PAGE_DPI, bbox_inches="tight")
    return buffer.getvalue()


_PAGE = Template("""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy"
      content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>$title</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 72em; padding: 0 1em; color: #222; }
h1 { margin-bottom: 0.2em; } .subtitle { color: #555; margin-top: 0; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.4em; text-align: right; overflow-wrap: break-word; }
th { vertical-align: bottom; } td.nowrap { white-space: nowrap; } td { font-variant-numeric: tabular-nums; }
.files { font-size: 0.9em; } .files a { margin-right: 0.8em; }
th { background: #f3f3f3; } td:first-child, th:first-child, #configuration td, #configuration th { text-align: left; }
#configuration td { white-space: normal; }
caption { text-align: left; font-weight: 600; padding: 0.3em 0; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; }
footer { color: #777; font-size: 0.8em; margin-top: 3em; }
</style>
</head>
<body>
<h1>$title</h1>
<p class="subtitle">$subtitle</p>
$files
$body
<footer>Written by mpdp report: self-contained (figures inline, nothing fetched).</footer>
<script>
function mark(img) {
  img.dataset.naturalWidth = String(img.naturalWidth);
  img.dataset.naturalHeight = String(img.naturalHeight);
}
window.addEventListener("load", function () {
  document.querySelectorAll("img").forEach(mark);
  document.querySelectorAll(".scroll").forEach(function (box) {
    box.dataset.overflow = String(box.scrollWidth - box.clientWidth);
  });
  document.body.dataset.scrollWidth = String(document.documentElement.scrollWidth);
  document.body.dataset.figuresChecked = "true";
});
</script>
</body>
</html>
""")


#: A cell that is a short interval, such as ``[0.444, 0.975]``: kept on one line (other cells wrap).
_INTERVAL = re.compile(r"^\[[^\]\s]{1,12}, [^\]\s]{1,12}\]$")


def _html_cell(text: str) -> str:
    return f'<td class="nowrap">{html.escape(text)}</td>' if _INTERVAL.match(text) else f"<td>{html.escape(text)}</td>"


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "\n".join("<tr>" + "".join(_html_cell(c) for c in row) + "</tr>" for row in table.rows)
    ident = f' id="{html.escape(table.table_id)}"' if table.table_id else ""
    text = (f'<div class="scroll"><table{ident}><caption>{html.escape(table.caption)}</caption>\n'
            f"<thead><tr>{head}</tr></thead>\n<tbody>\n{body}\n</tbody></table></div>")
    if table.folded:
        return f"<details><summary>{html.escape(table.caption)} ({len(table.rows)} rows)</summary>\n{text}\n</details>"
    return text


def _html_figure(figure: ReportFigure) -> str:
    data = base64.b64encode(figure_png(figure.figure)).decode("ascii")
    caption = html.escape(figure.caption)
    return (f'<figure><img src="data:image/png;base64,{data}" alt="{caption}" data-figure="{html.escape(figure.name)}">'
            f"<figcaption>{caption}</figcaption></figure>")


def render_html(page: ReportPage) -> str:
    """The page as one self-contained HTML document (figures as inline base64 PNG; no fetches)."""
    parts = ["<h2>Configuration</h2>",
             _html_table(Table("what was run", ("setting", "value"), page.configuration, "configuration"))]
    for section in page.sections:
        parts.append(f"<h2>{html.escape(section.heading)}</h2>")
        parts += [f"<p>{html.escape(p)}</p>" for p in section.paragraphs]
        parts += [_html_figure(f) for f in section.figures]
        parts += [_html_table(t) for t in section.tables]
    files = ("" if not page.links else '<p class="files">Data beside this page: ' + " ".join(
        f'<a href="{html.escape(href)}">{html.escape(name)}</a>' for name, href in page.links) + "</p>")
    return _PAGE.substitute(title=html.escape(page.title), subtitle=html.escape(page.subtitle), files=files,
                            body="\n".join(parts))


#: Characters that Markdown reads as markup (HTML's ``<``, ``>``, ``&`` are escaped as entities first).
_MD_SPECIAL = re.compile(r"([\\`*\[\]|~]|^#|(?<![0-9A-Za-z])_|_(?![0-9A-Za-z]))")  # intraword _ is no markup


def _md_text(text: str) -> str:
    """``text`` (user text too: round names, sessions) as literal Markdown: no emphasis, code, link, table cell
    or heading markup, no raw HTML."""
    return _MD_SPECIAL.sub(r"\\\1", html.escape(text, quote=False))


def _md_cell(text: str) -> str:
    return _md_text(text).replace("\n", " ")


def _md_table(table: Table) -> list[str]:
    return [f"**{_md_cell(table.caption)}**", "",
            "| " + " | ".join(_md_cell(c) for c in table.columns) + " |",
            "|" + "---|" * len(table.columns),
            *("| " + " | ".join(_md_cell(c) for c in row) + " |" for row in table.rows), ""]


def render_markdown(page: ReportPage, figure_files: Mapping[str, str]) -> str:
    """The page as Markdown: the same tables (folded ones left out) and links to the figures.

    Args:
        figure_files: figure name -> the relative path of its PNG (a figure without one is left out).
    """
    files = ["Data beside this page: " + " ".join(f"[{_md_cell(name)}](<{href}>)" for name, href in page.links), ""]
    lines = [f"# {_md_text(page.title)}", "", _md_text(page.subtitle), "", *(files if page.links else []),
             "## Configuration", "",
             *_md_table(Table("what was run", ("setting", "value"), page.configuration))]
    for section in page.sections:
        lines += [f"## {section.heading}", ""]
        for p in section.paragraphs:
            lines += [_md_text(p), ""]
        lines += [f"![{_md_cell(f.caption)}]({figure_files[f.name]})\n" for f in section.figures
                  if f.name in figure_files]
        for t in section.tables:
            lines += [] if t.folded else _md_table(t)
    return "\n".join(lines).rstrip() + "\n"


def cells(values: Sequence[object]) -> tuple[str, ...]:
    """Table cells of ``values``: floats to 4 significant digits, booleans as yes/no, None as a dash."""
    return tuple("-" if v is None else ("yes" if v else "NO") if isinstance(v, bool) else
                 f"{v:.4g}" if isinstance(v, float) else str(v) for v in values)
