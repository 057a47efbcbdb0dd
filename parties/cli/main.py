"""The ``mpdp`` command line: one sub-command per module in :mod:`mpdp.parties.cli.commands`.

Every sub-command module exposes ``register(subparsers)``, which adds its parser and sets
``run=callable(args) -> int``. Errors of the :class:`mpdp.protocols.MpdpError` family print one line,
``mpdp: error: ...``, and exit with code 2; Ctrl-C exits with 130. An option value that looks like a
negative number (``--epsilon -1``, ``--budget -1,0``, ``--epsilon -inf``) is passed to the option, whose
own check then names it (:func:`mpdp.parties.cli.args.join_negative_values`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from mpdp.parties.cli.args import (
    PAPER_CODES,
    join_negative_values,
    papers_epilog,
    value_options,
)
from mpdp.protocols.errors import MpdpError

__all__ = ["build_parser", "main"]

#: Sub-command modules under parties.commands, in the order ``--help`` lists them.
COMMANDS: tuple[str, ...] = (
    "simulate",
    "accuracy",
    "compose",
    "mechanism",
    "compare_central",
    "theorem_3_1",
    "keys",
    "party",
    "observe",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="mpdp",
        description=(
            "Multi-party differential privacy you can run: parties privatize their bits with "
            "randomized response, broadcast them over MQTT, and a central observer computes a "
            "function of all bits with the optimal decision rule (Kairouz, Oh, Viswanath 2015)."
        ),
        epilog=papers_epilog(*PAPER_CODES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMANDS:
        importlib.import_module(f"mpdp.parties.cli.commands.{name}").register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mpdp`` script; returns the process exit code."""
    parser = build_parser()
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(join_negative_values(argv, value_options(parser)))
    try:
        return int(args.run(args) or 0)
    except MpdpError as exc:
        print(f"mpdp: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("mpdp: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
