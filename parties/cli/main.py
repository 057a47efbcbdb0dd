"""The ``mpdp`` command line: one sub-command per module in :mod:`mpdp.parties.cli.commands`.

Every sub-command module exposes ``register(subparsers)``, which adds its parser and sets
``run=callable(args) -> int``. Only the chosen command's module is imported (``mpdp --help`` and
``mpdp --version`` import none, and so neither numpy nor the network stack); :data:`COMMANDS` lists
every command with its one-line help. Errors of the :class:`mpdp.protocols.MpdpError` family print one
line, ``mpdp: error: ...``, and exit with code 2; Ctrl-C, also while the command's modules are still
being imported, prints ``mpdp: interrupted`` and exits with 130; SIGTERM and SIGHUP stop the run the same
clean way (exit codes 143 and 129; :mod:`mpdp.parties.cli.signals`). An option value that looks like a
negative number (``--epsilon -1``, ``--budget -1,0``, ``--epsilon -inf``) is passed to the option, whose
own check then names it (:func:`mpdp.parties.cli.args.join_negative_values`).

Every command gets the same ``--json [FILE]``, ``--quiet`` and ``--config TOML``
(:func:`mpdp.parties.cli.args.add_common_options`, added here to each command's parser; the run goes
through :func:`mpdp.parties.cli.args.command_output`, the config file through
:func:`mpdp.parties.cli.args.apply_config` before parsing); ``mpdp -v``/``--log-level`` set the
``mpdp.*`` loggers (:func:`mpdp.parties.cli.args.configure_logging`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

import mpdp
from mpdp.parties.cli import signals
from mpdp.parties.cli.args import (
    PAPER_CODES,
    add_common_options,
    add_logging_options,
    apply_config,
    command_output,
    configure_logging,
    join_negative_values,
    papers_epilog,
    value_options,
    whole_numbers,
)
from mpdp.parties.cli.errors import error_line, first_cause, flag_named, unrecognized
from mpdp.parties.cli.parser import CommandParser
from mpdp.protocols.errors import MpdpError, ParameterError

__all__ = ["COMMANDS", "build_parser", "main"]

#: Sub-commands in the order ``--help`` lists them: name -> one-line help. The module of ``name`` is
#: ``mpdp.parties.cli.commands.<name with - as _>``.
COMMANDS: dict[str, str] = {
    "simulate": "run parties and the central observer over a real MQTT broker",
    "accuracy": "optimal decision rules and their exact accuracy",
    "sweep": "accuracy against epsilon: exact theory vs Monte Carlo, a verdict per point, figure and table",
    "compose": "privacy of k composed (epsilon, delta)-DP mechanisms: exact optimum and bounds",
    "audit": "measure a party's privacy on its real publishing path: a certified lower bound on epsilon",
    "mechanism": "optimal DP mechanism for a binary function on a graph",
    "compare-central": "central (trusted curator) vs distributed accuracy",
    "compare": "rr, curator and mpc live on the same data: accuracy and cost side by side",
    "export": "a run's transcripts in long form (session, round, party, repetition, symbol) as CSV or Parquet",
    "report": "a finished run (simulate, sweep, observe) as a self-contained HTML page and Markdown",
    "verify": "a run's stored answers proven against its parties' public keys (signatures, signed bundles)",
    "figures": "every figure of the three papers, redrawn from computation (PNG at 300 dpi, SVG, PDF)",
    "calibrate": "noise for k queries under a total (epsilon, delta): budgets and variances",
    "theorem-3-1": "random interactive protocols vs randomized response (002 Theorem 3.1)",
    "keys": "make a deployed session's roster and private key files",
    "party": "host some parties of a deployed session (one process per party host)",
    "observe": "the central observer and coordinator of a deployed session",
    "mpc-server": "one compute server of a deployed mpc session (MPyC with its peers, releases over MQTT)",
    "broker": "broker set-up of a deployed session: `broker config` writes a TLS + ACL mosquitto",
    "schema": "the JSON Schemas of every --json document (what schemas/ holds)",
}


def build_parser(*commands: str) -> argparse.ArgumentParser:
    """The ``mpdp`` parser: every sub-command listed, the named ``commands`` registered in full.

    Args:
        commands: names from :data:`COMMANDS` whose modules are imported and whose options are added
            (``build_parser(*COMMANDS)`` builds the whole parser); the others parse no options.

    Raises:
        KeyError: a name that is not in :data:`COMMANDS`.
    """
    parser = CommandParser(
        prog="mpdp",
        description=(
            "Multi-party differential privacy you can run: parties privatize their bits with "
            "randomized response, broadcast them over MQTT, and a central observer computes a "
            "function of all bits with the optimal decision rule (Kairouz, Oh, Viswanath 2015)."
        ),
        epilog=papers_epilog(*PAPER_CODES),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"mpdp {mpdp.__version__}")
    add_logging_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = {name: COMMANDS[name] for name in commands}
    for name, summary in COMMANDS.items():
        if name in chosen:
            importlib.import_module(f"mpdp.parties.cli.commands.{name.replace('-', '_')}").register(sub)
            for leaf in _leaves(sub.choices[name]):
                add_common_options(leaf)
                whole_numbers(leaf)
            # list it like the others (argparse lists a sub-parser only when add_parser got a help=)
            sub._choices_actions.append(sub._ChoicesPseudoAction(name, (), summary))
        else:
            sub.add_parser(name, help=summary)
    return parser


def _leaves(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """The parsers under ``parser`` that run a command (``parser`` itself when it has no sub-commands)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return [leaf for action in subs for child in action.choices.values() for leaf in _leaves(child)] or [parser]


def _positionals(argv: Sequence[str]) -> list[str]:
    """The tokens of ``argv`` before ``--`` that are no option (the value of ``--log-level`` skipped)."""
    tokens = list(argv[:argv.index("--")] if "--" in argv else argv)
    return [t for i, t in enumerate(tokens) if not t.startswith("-") and (i == 0 or tokens[i - 1] != "--log-level")]


def _chosen_command(argv: Sequence[str]) -> list[str]:
    """The sub-command ``argv`` names (its first token that is not an option), if it is one of ours."""
    first = next(iter(_positionals(argv)), None)
    return [first] if first in COMMANDS else []


def _chosen_parser(parser: argparse.ArgumentParser, argv: Sequence[str]) -> argparse.ArgumentParser | None:
    """The leaf parser ``argv`` selects (``mpdp broker config``: config's), or None (no command named)."""
    words = _positionals(argv)
    current = parser
    while True:
        subs = [a for a in getattr(current, "_actions", ()) if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            return current
        choice = next((w for w in words if w in subs[0].choices), None)
        if choice is None:
            return None
        words = words[words.index(choice) + 1:]
        current = subs[0].choices[choice]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mpdp`` script; returns the process exit code."""
    argv = sys.argv[1:] if argv is None else argv
    chosen: argparse.ArgumentParser | None = None
    from_config: dict[str, str] = {}
    try:
        with signals.stop_like_interrupt():
            with signals.starting():  # the command's imports: a stop signal is never taken for an unhandled Ctrl-C
                parser = build_parser(*_chosen_command(argv))
                chosen = _chosen_parser(parser, argv)
                if chosen is not None and chosen is not parser:
                    from_config = apply_config(chosen, argv)
                args, extras = parser.parse_known_args(join_negative_values(argv, value_options(parser)))
                if extras:  # the command's usage and the option meant, not the top level's usage alone
                    (chosen or parser).error(unrecognized(extras, chosen or parser))
            configure_logging(getattr(args, "verbose", 0), getattr(args, "log_level", None))
            with command_output(args):
                return int(args.run(args) or 0)
    except MpdpError as exc:
        named = flag_named(exc, chosen, from_config) if isinstance(exc, ParameterError) and chosen is not None else exc
        print(f"mpdp: error: {error_line(named)}", file=sys.stderr)
        return 2
    except ExceptionGroup as group:  # a task group's errors that are not ours: the first, and a count
        first, _ = first_cause(group)
        print(f"mpdp: error: {error_line(group)}", file=sys.stderr)
        return 2 if isinstance(first, MpdpError) else 1
    except KeyboardInterrupt:
        print("mpdp: interrupted", file=sys.stderr)
        return signals.exit_code()
    except BrokenPipeError:  # `mpdp ... --json | head`: the reader has gone, which is no error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at exit's flush
        return 128 + 13  # as if killed by SIGPIPE, the shell's convention


if __name__ == "__main__":
    sys.exit(main())
