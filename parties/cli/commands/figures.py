"""``mpdp figures``: every figure of the three papers, redrawn from computation, as PNG (300 dpi), SVG and PDF.

Writes DIR/<name>.png, .svg and .pdf for each figure (000 Figures 1-3; 001 Figs. 1-3, the Theorem 2
example and the infeasible (log 1.1, 0) example with its violated edge; 002's XOR accuracy against k with
the collaborative curve; the optimal rule for sum against the debiased count local-DP tools report, in
expected absolute error against epsilon); the parameters are in each title. ``--only NAME,...`` draws a subset,
``--formats svg`` writes only those formats (the docs' gallery: ``--out docs/gallery --formats svg``).
"""

from __future__ import annotations

import argparse

from mpdp.analysis.figures.paper_figures import PAPER_FIGURES
from mpdp.analysis.plot_style import save_figure
from mpdp.parties.cli.args import emit, papers_epilog
from mpdp.parties.session.output_paths import output_dir
from mpdp.protocols.errors import ParameterError

__all__ = ["FORMATS", "register", "run"]

#: The file formats written, in order.
FORMATS = ("png", "svg", "pdf")

EPILOG = """\
examples:
  mpdp figures --out figures/
  mpdp figures --out figures/ --only 000-fig2-composition,002-xor --json
  mpdp figures --out docs/gallery --formats svg

figures: """ + ", ".join(PAPER_FIGURES) + "\n" + papers_epilog("000", "001", "002")


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add the ``figures`` sub-command."""
    p = subparsers.add_parser("figures", description=__doc__, epilog=EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, metavar="DIR", help="directory to write to (created if missing)")
    p.add_argument("--only", help="comma-separated figure names (default: all)")
    p.add_argument("--formats", default=",".join(FORMATS),
                   help=f"comma-separated file formats among {', '.join(FORMATS)} (default: all; PNG at 300 dpi)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Draw the figures and write each in the chosen formats (PNG, SVG, PDF); print the paths. Returns 0."""
    names = list(PAPER_FIGURES) if args.only is None else [n.strip() for n in args.only.split(",")]
    unknown = [n for n in names if n not in PAPER_FIGURES]
    if unknown:
        raise ParameterError("--only", unknown[0], "figure names among " + ", ".join(PAPER_FIGURES))
    formats = [f.strip().lower() for f in args.formats.split(",")]
    wrong = [f for f in formats if f not in FORMATS]
    if wrong:
        raise ParameterError("--formats", wrong[0], "formats among " + ", ".join(FORMATS))
    out = output_dir(args.out, "--out")
    written: dict[str, list[str]] = {}
    for name in names:
        figure = PAPER_FIGURES[name]()
        paths = [out / f"{name}.{suffix}" for suffix in formats]
        for path in paths:
            save_figure(figure, path)
        written[name] = [str(p) for p in paths]
    emit(args, {"out": str(out), "figures": written})
    for name, files in written.items():
        print(f"{name:<22} {'  '.join(files)}")
    return 0
