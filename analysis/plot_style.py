"""The one style of every mpdp figure: new axes, the Figure of an axes, line styles, saving by extension.

Every plot helper of the project takes ``ax=None`` and returns the :class:`matplotlib.figure.Figure` it drew
on. With no ``ax`` it draws on a new Figure made here, *without* pyplot: no global backend is switched
(``matplotlib.use`` is never called), so inline plots in a notebook keep working and nothing is left open.
A notebook shows the returned Figure; a script saves it with :func:`save_figure` (PNG at :data:`DPI`, SVG or
PDF by the file's extension).

Text follows one style: symbols in matplotlib mathtext (``$\\varepsilon$``, ``$\\delta$``, ``$R_h$``), never
their ASCII names; :func:`eps_delta` writes the pair of a title the same way everywhere.

Example:
    >>> fig, ax = new_axes(None, (4.0, 3.0))
    >>> _ = ax.plot([0, 1], [0, 1], **series_style(1))
    >>> figure_of(ax) is fig, ax.get_lines()[0].get_linestyle()
    (True, '--')
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["COLORS", "DPI", "EPSILON_LABEL", "LINE_STYLES", "MARKERS", "PAGE_DPI", "eps_delta", "figure_of",
           "new_axes", "new_figure", "save_figure", "series_style"]

#: Resolution of raster files (PNG) written to disk: print quality.
DPI = 300
#: Resolution of the PNGs embedded in an HTML report page (a page stays a few hundred kB).
PAGE_DPI = 150
#: The colour cycle (matplotlib's tab10, in order).
COLORS = ("tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink", "tab:gray")
#: Line styles and markers cycled per series, so curves stay distinguishable in grey print.
LINE_STYLES = ("-", "--", "-.", ":")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: The x label of every plot against epsilon (natural logarithm units).
EPSILON_LABEL = r"$\varepsilon$ per party (nats)"


def new_axes(ax: Axes | None, size: tuple[float, float] = (6.0, 4.0)) -> tuple[Figure, Axes]:
    """``(figure, ax)``: the given axes and its Figure, or a new Figure of ``size`` inches (no pyplot; a
    :class:`~mpdp.analysis.notebook_figure.NotebookFigure`, which a notebook shows as an image)."""
    if ax is None:
        figure = new_figure(size)
        return figure, figure.add_subplot()
    return figure_of(ax), ax


def new_figure(size: tuple[float, float], layout: Literal["constrained", "tight"] | None = "constrained") -> Figure:
    """A new, empty Figure of ``size`` inches (width, height), made without pyplot: a
    :class:`~mpdp.analysis.notebook_figure.NotebookFigure`, shown as an image by a plain Jupyter kernel."""
    from mpdp.analysis.notebook_figure import NotebookFigure

    return NotebookFigure(figsize=size, layout=layout)


def eps_delta(epsilon: float, delta: float | None = None, digits: int = 4) -> str:
    """``epsilon`` (and ``delta``) as the mathtext of a title, as the papers write them:
    ``$(\\varepsilon, \\delta) = (\\log 2, 0.1)$`` (an epsilon that is the logarithm of a number of at most
    two decimals, such as 001's log 2, log 1.3, log 1.1, is written so), ``$\\varepsilon = 0.5$`` without a
    delta; other numbers to ``digits`` significant digits."""
    ratio = math.exp(epsilon) if epsilon < 50 else math.inf
    named = math.isfinite(ratio) and abs(ratio - round(ratio, 2)) < 1e-9 and abs(epsilon - round(epsilon, 3)) > 1e-9
    eps = f"\\log {round(ratio, 2):g}" if named else f"{epsilon:.{digits}g}"
    if delta is None:
        return f"$\\varepsilon = {eps}$"
    return f"$(\\varepsilon, \\delta) = ({eps}, {delta:g})$"


def figure_of(ax: Axes) -> Figure:
    """The top-level Figure ``ax`` is drawn on (a sub-figure's parent figure)."""
    from matplotlib.figure import Figure

    drawn_on = ax.get_figure()
    figure = getattr(drawn_on, "figure", drawn_on)  # a SubFigure's .figure is its root Figure
    assert isinstance(figure, Figure)
    return figure


def series_style(index: int) -> dict[str, str]:
    """Colour, line style and marker of the ``index``-th series (0-based), each cycling on its own."""
    return {"color": COLORS[index % len(COLORS)], "linestyle": LINE_STYLES[index % len(LINE_STYLES)],
            "marker": MARKERS[index % len(MARKERS)]}


def save_figure(figure: Figure, path: str | os.PathLike[str]) -> Path:
    """Write ``figure`` to ``path``; the format is the extension's (``.png``, ``.svg``, ``.pdf``, ...).

    Returns:
        the path written.

    Raises:
        ValueError: an extension matplotlib cannot write (from matplotlib, naming the supported ones).
    """
    import matplotlib

    path = Path(path)
    suffix = path.suffix.lower()
    # reproducible files: no creation date, SVG ids from a fixed salt (the same figure, the same bytes)
    metadata = {"Date": None} if suffix == ".svg" else {"CreationDate": None} if suffix == ".pdf" else None
    with matplotlib.rc_context({"svg.hashsalt": "mpdp"}):
        figure.savefig(path, dpi=DPI, bbox_inches="tight", metadata=metadata)
    return path
