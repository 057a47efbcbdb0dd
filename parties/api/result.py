"""What every result of the Python API can do: :class:`Result`, the one base of the frozen result classes.

A result is a frozen dataclass holding its JSON document (:meth:`Result.to_dict`: exactly what the
matching CLI command prints with ``--json``) and whatever it needs to plot. The base adds:

- :meth:`Result.to_frame`: a pandas DataFrame of :meth:`Result.rows` (pandas is the optional extra
  ``mpdp[frame]``; without it a clear ImportError says so);
- :meth:`Result.plot`: draws on ``ax`` (or a new Figure) and returns the Figure;
- a one-line ``repr`` (:meth:`Result.summary`) and ``_repr_html_`` for notebooks: a small table of the rows and
  the figure of :meth:`Result.plot` as an embedded PNG, so a plain Jupyter kernel (no ``%matplotlib inline``)
  shows the result as a picture. ``plot()`` returns a Figure a notebook also shows as an image
  (:class:`mpdp.analysis.notebook_figure.NotebookFigure`).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["FRAME_EXTRA", "Result", "strict_document"]

#: The optional extra that brings pandas.
FRAME_EXTRA = "frame"
_HTML_ROWS = 12


def strict_document(document: Mapping[str, Any], kind: str | None = None,
                    inputs: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``document`` as JSON holds it (numpy numbers as Python numbers, infinities as ``"inf"``): what
    ``json.loads`` of the CLI's ``--json`` output gives back. With ``kind``, under the common header
    (``schema_version``, ``mpdp_version``, ``kind``, ``inputs``: :func:`mpdp.analysis.reports.documents.versioned`).

    Raises:
        ParameterError: a NaN anywhere (:func:`mpdp.analysis.reports.documents.to_json_text`).

    Example:
        >>> import numpy as np
        >>> strict_document({"epsilon": float("inf"), "k": np.int64(3)})
        {'epsilon': 'inf', 'k': 3}
    """
    import json

    from mpdp.analysis.reports.documents import to_json_text

    if kind is not None:
        from mpdp.analysis.reports.documents import versioned

        document = versioned(kind, document, inputs or {})
    loaded: dict[str, Any] = json.loads(to_json_text(dict(document)))
    return loaded


class Result:
    """Base of the API's frozen results: subclasses are ``@dataclass(frozen=True)`` with a ``document``
    field (the ``--json`` document) and implement :meth:`rows`, :meth:`summary` and :meth:`draw`.

    Not ``slots=True``: on Python 3.11 a frozen slots dataclass is rebuilt as a new class while its generated
    ``__setattr__`` still refers to the old one, so assigning a name that is not a field raises
    ``TypeError: super(type, obj)...`` instead of :class:`dataclasses.FrozenInstanceError`.

    Example:
        >>> import mpdp
        >>> r = mpdp.compose(epsilon=0.5, k=2)
        >>> r
        <Composition: k=2: epsilon_tilde=0.999997 (exact) at delta_total=1e-06>
        >>> from matplotlib.figure import Figure
        >>> list(r.to_frame().columns), isinstance(r.plot(), Figure)
        (['guarantee', 'epsilon'], True)
    """

    document: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        """The JSON document, the same as the CLI's ``--json`` (a fresh copy: editing it changes nothing)."""
        import copy

        return copy.deepcopy(self.document)

    def rows(self) -> Sequence[Mapping[str, Any]]:
        """The table of the result, one mapping per row (the rows of :meth:`to_frame`)."""
        raise NotImplementedError

    def summary(self) -> str:
        """A one-line description (the ``repr``)."""
        raise NotImplementedError

    def draw(self, ax: Axes | None) -> Figure:
        """Draw the result on ``ax`` (None: a new Figure) and return the Figure."""
        raise NotImplementedError

    def to_frame(self) -> pandas.DataFrame:
        """The rows as a pandas DataFrame (one column per key).

        Raises:
            ImportError: pandas is not installed (``pip install 'mpdp[frame]'``).
        """
        try:
            import pandas
        except ImportError as exc:
            raise ImportError(f"to_frame() needs pandas: pip install 'mpdp[{FRAME_EXTRA}]'") from exc
        return pandas.DataFrame([dict(row) for row in self.rows()])

    def plot(self, ax: Axes | None = None) -> Figure:
        """Draw on ``ax`` (a matplotlib Axes; None: a new Figure, no pyplot, no backend switch) and return
        the Figure; save it with ``figure.savefig(path)`` (PNG, SVG, PDF by extension)."""
        return self.draw(ax)

    def __repr__(self) -> str:
        return f"<{type(self).__name__}: {self.summary()}>"

    def _repr_html_(self) -> str:
        import base64

        from mpdp.analysis.notebook_figure import png_bytes

        rows = list(self.rows())
        head = f"<p><b>{html.escape(type(self).__name__)}</b>: {html.escape(self.summary())}</p>"
        image = base64.b64encode(png_bytes(self.plot())).decode("ascii")
        picture = f'<img alt="{html.escape(type(self).__name__)} plot" src="data:image/png;base64,{image}"/>'
        if not rows:
            return head + picture
        columns = list(rows[0])
        cells = "".join(
            "<tr>" + "".join(f"<td>{html.escape(_cell(row.get(c)))}</td>" for c in columns) + "</tr>"
            for row in rows[:_HTML_ROWS])
        more = f"<p>... {len(rows) - _HTML_ROWS} more rows (to_frame() has them all)</p>" if len(rows) > _HTML_ROWS else ""
        header = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
        return f"{head}<table><thead><tr>{header}</tr></thead><tbody>{cells}</tbody></table>{more}{picture}"


def _cell(value: object) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)
