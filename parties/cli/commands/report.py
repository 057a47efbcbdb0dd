"""``mpdp report RUN_DIR``: a finished run as one self-contained HTML page and a Markdown summary.

    mpdp simulate --dataset house-votes-84 --epsilon 1 --repetitions 50 --seed 3 --out run
    mpdp report run                  # run/report.html, run/report.md, run/report-*.png

RUN_DIR is what ``mpdp simulate --out``, ``mpdp sweep --out`` or ``mpdp observe --out`` wrote. The page
shows the configuration, the per-round table (a sweep: one row per point), the accuracy figures redrawn
from the JSON, each party's privacy spent by the optimal composition against basic composition, the
rejected messages by reason and the per-round timings (from transcripts.sqlite, when recorded). It needs
no network and no other file: the figures are inside it. Open it in any browser.
"""

from __future__ import annotations

import argparse

from mpdp.parties.api.reports import report
from mpdp.parties.cli.args import emit, plain_text

__all__ = ["register"]


def _run(args: argparse.Namespace) -> int:
    files = report(args.run_dir, out=args.out)
    emit(args, {"run_kind": files.kind, "rows": files.rows, "html": str(files.html),
                "markdown": str(files.markdown), "figures": [str(f) for f in files.figures]})
    print(f"{files.kind} run, {files.rows} rows, {len(files.figures)} figure(s)")
    print(f"wrote {files.html}")
    print(f"wrote {files.markdown}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``report`` sub-command."""
    p = subparsers.add_parser("report", description=plain_text(__doc__),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run's --out directory (simulate, sweep or observe)")
    p.add_argument("--out", metavar="DIR", help="write the report here (default: RUN_DIR; created if missing)")
    p.set_defaults(run=_run)
