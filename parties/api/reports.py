"""``mpdp.report``: a finished run directory as a self-contained HTML page and a Markdown summary.

The work is :func:`mpdp.parties.session.run_report.write_report`; this is its place in the API
(``mpdp report RUN_DIR`` is the command line twin).
"""

from __future__ import annotations

from pathlib import Path

from mpdp.parties.session.run_report import ReportFiles, write_report

__all__ = ["ReportFiles", "report"]


def report(run_dir: str | Path, *, out: str | Path | None = None) -> ReportFiles:
    """Write ``report.html``, ``report.md`` and the figures (PNG) of a finished run.

    Args:
        run_dir: what ``mpdp.simulate(out=...)``/``mpdp simulate --out``, ``mpdp sweep --out`` or
            ``mpdp observe --out`` wrote. out: where to write (default ``run_dir``).

    Returns:
        :class:`~mpdp.parties.session.run_report.ReportFiles`: the paths (``html``, ``markdown``,
        ``figures``), the run's ``kind`` and the ``rows`` of its per-round table.

    Raises:
        ParameterError: ``run_dir`` holds no finished run (names what it should hold), or ``out`` is
            not a writable directory.

    Example (a live run, then its report; not run as a doctest)::

        import mpdp
        mpdp.simulate(dataset="house-votes-84", epsilon=1.0, repetitions=50, seed=3, out="run")
        files = mpdp.report("run")
        files.html  # run/report.html: open it in a browser
    """
    return write_report(run_dir, out)
