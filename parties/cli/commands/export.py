"""``mpdp export RUN_DIR``: a run's transcripts in long form, one row per released symbol.

Columns: session, round (0-based index), party, repetition, symbol (0/1; 0-3 for four-output randomized
response), from RUN_DIR/transcripts.sqlite (``mpdp simulate --out RUN_DIR`` or ``mpdp observe --out``).
The format follows ``--out``'s extension (``.csv``, ``.parquet``); ``--format`` names it for another name (or
without ``--out``: RUN_DIR/transcripts.csv by default) and is refused when the extension says another.
Parquet needs pyarrow (``pip install 'mpdp[parquet]'``).
"""

from __future__ import annotations

import argparse

from mpdp.parties.cli.args import emit, option_names, plain_text
from mpdp.parties.session.output_paths import output_file

__all__ = ["register"]

EPILOG = """\
examples:
  mpdp simulate --dataset house-votes-84 --out run/ && mpdp export run/          # run/transcripts.csv
  mpdp export run/ --out house.parquet                                             # parquet, by its name
  python -c "import pandas; print(pandas.read_csv('run/transcripts.csv').groupby('round').symbol.mean())"
"""


def _run(args: argparse.Namespace) -> int:
    from mpdp.parties.session.export import export_transcripts

    out = None if args.out is None else output_file(args.out, "--out")
    with option_names(run_dir=("RUN_DIR", args.run_dir)):
        written = export_transcripts(args.run_dir, args.format, out)
    emit(args, {"path": str(written.path), "format": written.format, "rows": written.rows,
                "sessions": list(written.sessions)})
    print(f"wrote {written.path} ({written.format}): {written.rows:,} rows ({', '.join(written.sessions) or 'no session'})")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``export`` sub-command."""
    from mpdp.parties.session.export import EXPORT_FORMATS

    p = subparsers.add_parser("export", description=plain_text(__doc__), epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", metavar="RUN_DIR", help="a run's --out directory (holds transcripts.sqlite)")
    p.add_argument("--format", choices=EXPORT_FORMATS,
                   help="csv or parquet (needs pyarrow); default: as --out's extension says, else csv")
    p.add_argument("--out", metavar="FILE", help="the file to write, .csv or .parquet (default: "
                                                  "RUN_DIR/transcripts.csv, or .parquet with --format parquet)")
    p.set_defaults(run=_run)
