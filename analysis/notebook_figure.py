"""The Figure every mpdp plot draws on when it makes its own: a matplotlib Figure that a notebook shows as an image.

A Figure made without pyplot (:func:`mpdp.analysis.plot_style.new_axes`: no backend switched, nothing left open)
is not known to IPython's inline backend, so a fresh Jupyter kernel would show only its text,
``<Figure size 600x400 with 1 Axes>``, unless ``%matplotlib inline`` ran first. :class:`NotebookFigure` carries its
own ``_repr_png_``, which IPython's display calls whatever the backend: the image appears in a plain kernel, and
with ``%matplotlib inline`` it appears once (the inline backend shows only pyplot's figures).
"""

from __future__ import annotations

import io

from matplotlib.figure import Figure

__all__ = ["NotebookFigure", "png_bytes"]


def png_bytes(figure: Figure, dpi: float | None = None) -> bytes:
    """``figure`` as PNG bytes, cropped to what is drawn (``bbox_inches="tight"``), at ``dpi`` dots per inch
    (None: the figure's own, matplotlib's 100 by default)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi if dpi is not None else figure.dpi, bbox_inches="tight")
    return buffer.getvalue()


class NotebookFigure(Figure):
    """A :class:`matplotlib.figure.Figure` with ``_repr_png_``: shown as a PNG image by IPython/Jupyter.

    Example:
        >>> figure = NotebookFigure(figsize=(2.0, 1.5))
        >>> _ = figure.add_subplot().plot([0, 1], [1, 0])
        >>> figure._repr_png_()[:8]
        b'\\x89PNG\\r\\n\\x1a\\n'
    """

    def _repr_png_(self) -> bytes:
        return png_bytes(self)
