"""Shared command-line argument helpers of the ``mpdp`` sub-commands.

Every sub-command validates its arguments with these before it does any work, so a bad value gives
one line (``mpdp: error: ...``, exit 2) naming the value and what is allowed, never a traceback:

* :func:`parse_number_list` -- ``--voters 1,3,5``, ``--epsilon 0.1,0.5``: an empty item is an error.
* :data:`PAPER_CODES` / :func:`papers_epilog` -- what the paper codes 000, 001, 002 of the docs mean.
* :func:`add_time_limit` -- ``--time-limit SECONDS`` of a long computation (default
  :data:`mpdp.protocols.numerics.cost.DEFAULT_TIME_LIMIT`): work estimated to take longer is refused up front.
* :func:`join_negative_values` -- ``--epsilon -1`` / ``--budget -1,0`` / ``--epsilon -inf`` reach the
  option (which then names the bad value) instead of argparse's "expected one argument".
* :func:`add_common_options` / :func:`command_output` / :func:`emit` -- ``--json [FILE]``, ``--quiet``
  and ``--config TOML`` of every command (:func:`apply_config` feeds the TOML to argparse as defaults);
  :func:`add_logging_options` / :func:`configure_logging` -- ``mpdp -v``/``--log-level``; :func:`input_paths` --
  what a command reads by its options: no file it writes may be one of them.

The paths a command writes are checked by :mod:`mpdp.parties.session.output_paths`, its JSON written by
:func:`mpdp.analysis.reports.documents.to_json_text` (the Python API uses both too).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW
from mpdp.parties.api.keywords import unknown_option
from mpdp.parties.api.value_lists import parse_number_list
from mpdp.parties.cli.errors import renamed
from mpdp.parties.rounds.text_files import read_text_file
from mpdp.parties.session.output_paths import output_file, reading
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT

__all__ = [
    "LOG_FORMAT",
    "PAPER_CODES",
    "add_label_column",
    "add_time_limit",
    "join_negative_values",
    "option_names",
    "papers_epilog",
    "parse_number_list",
    "plain_text",
    "seed_value",
    "value_options",
    "whole_numbers",
]

#: The papers the docs cite by code (files /work/shared/papers/NNN_*.txt).
PAPER_CODES: dict[str, str] = {
    "000": "Kairouz, Oh, Viswanath, The Composition Theorem for Differential Privacy, ICML 2015",
    "001": "Differential Privacy for Binary Functions via Randomized Graph Colorings (optimal central "
           "mechanisms)",
    "002": "Kairouz, Oh, Viswanath, Secure Multi-party Differential Privacy, NeurIPS 2015",
}


def papers_epilog(*codes: str) -> str:
    """A ``--help`` epilog paragraph explaining the paper ``codes`` (e.g. ``"000", "002"``), one a line."""
    return "papers:\n" + "".join(f"  {code} = {PAPER_CODES[code]}\n" for code in codes)

#: A token that is a value although it starts with '-': -1, -.5, -1:2, -1,0, -inf, -nan, -Infinity.
_NEGATIVE_VALUE = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def plain_text(doc: str) -> str:
    """A module docstring as terminal text for ``--help``: reST inline literals (double backticks) and
    cross-references (``:mod:`x```) lose their markup."""
    return re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", doc).replace("``", "")


def add_label_column(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """Add ``--label-column``/``--no-label-column`` (``args.label_column``: True, False or None) for a
    CSV dataset: column 1 holds party labels, or votes; by default labels only when every cell of it is
    text (:func:`mpdp.parties.session.datasets.parse_csv`)."""
    parser.add_argument("--label-column", action=argparse.BooleanOptionalAction, default=None,
                        help="a CSV's column 1 holds party labels (or, with --no-label-column, votes); "
                             "default: labels when every cell of it is text, an error when it mixes text "
                             "and votes")


def add_time_limit(parser: argparse.ArgumentParser | argparse._ArgumentGroup, what: str,
                   default: float = DEFAULT_TIME_LIMIT) -> None:
    """Add ``--time-limit SECONDS`` (``args.time_limit``, float) for ``what`` (``"the worst-case LP"``):
    the computation's up-front estimate (:class:`mpdp.protocols.numerics.cost.CostEstimate`) is refused when it
    exceeds the limit, naming the estimate and the alternative. The command checks the value with
    :func:`mpdp.protocols.numerics.cost.check_time_limit` (``args.time_limit``, "--time-limit"), so a bad one is
    the usual one-line error."""
    parser.add_argument("--time-limit", type=float, default=default, metavar="SECONDS",
                        help=f"seconds allowed for {what} (default {default:g}); work "
                             "estimated to take longer is refused before it starts, with the estimate")


def add_deployed_session(parser: argparse.ArgumentParser, keys_help: str) -> None:
    """The options every role of a deployed session takes: ``--roster FILE``, ``--keys DIR`` (what ``keys_help``
    says it holds) and ``--broker URL`` of the running broker."""
    parser.add_argument("--roster", type=Path, required=True, metavar="FILE", help="roster.json from `mpdp keys`")
    parser.add_argument("--keys", type=Path, required=True, metavar="DIR", help=keys_help)
    add_broker_options(parser, "URL", "mqtt|mqtts|ws|wss://[USER[:PASSWORD]@]HOST[:PORT] of the running "
                                      "broker (default: $MPDP_BROKER_URL)")


def add_broker_options(parser: argparse.ArgumentParser, metavar: str, broker_help: str,
                       window_default: str = f"{DEFAULT_RECONNECT_WINDOW:g} s") -> None:
    """``--broker URL`` (``broker_help``) and how to log in to it: ``--cafile``, ``--cert``, ``--key``,
    ``--mqtt-version``, and ``--reconnect-window SECONDS`` (its default in words: ``window_default``; the
    option's value None when not given) (read back by :func:`broker_options`). The user name and password
    go in the URL or in ``MPDP_BROKER_USERNAME``/``MPDP_BROKER_PASSWORD`` (the environment keeps them out of
    ``ps``)."""
    group = parser.add_argument_group(
        "broker", "the login may be in the URL (USER:PASSWORD@) or in $MPDP_BROKER_USERNAME and "
                  "$MPDP_BROKER_PASSWORD; the password is never printed")
    group.add_argument("--broker", default=None, metavar=metavar, help=broker_help)
    group.add_argument("--cafile", default=None, metavar="PEM",
                       help="CA certificate that signed the broker's (mqtts/wss; default: $MPDP_BROKER_CAFILE, "
                            "else the system's CAs)")
    group.add_argument("--cert", default=None, metavar="PEM",
                       help="this client's TLS certificate (default: $MPDP_BROKER_CERT)")
    group.add_argument("--key", default=None, metavar="PEM",
                       help="this client's TLS private key (default: $MPDP_BROKER_KEY)")
    group.add_argument("--mqtt-version", choices=("3.1.1", "5"), default=None,
                       help="MQTT protocol version (default: the URL's ?protocol=, else 3.1.1)")
    group.add_argument("--reconnect-window", type=float, default=None, metavar="SECONDS",
                       help="how long a client keeps reconnecting to a broker that went away (backoff with "
                            "jitter; what it publishes meanwhile waits) before the command fails; 0: no retry "
                            f"(default: {window_default})")


def add_validators_option(parser: argparse.ArgumentParser) -> None:
    """``--validators N``: the observer's validator processes (:mod:`mpdp.parties.session.validators`)."""
    parser.add_argument("--validators", type=int, default=0, metavar="N",
                        help="observer scale-out: N processes verify the parties' messages (MQTT 5 shared "
                             "subscription) and forward them to the observer; needs mosquitto or an external "
                             "MQTT 5 broker (default: 0, the observer verifies them itself)")


def broker_options(args: argparse.Namespace) -> dict[str, Any]:
    """The keyword arguments of :meth:`mpdp.broker.settings.BrokerSettings.from_url` that the options of
    :func:`add_broker_options` give (``url`` included)."""
    return {"url": args.broker, "cafile": args.cafile, "cert": args.cert, "key": args.key,
            "protocol": args.mqtt_version, "reconnect_window": args.reconnect_window}


def value_options(parser: argparse.ArgumentParser) -> frozenset[str]:
    """Every option string of ``parser`` and its sub-parsers that takes a value (nargs != 0)."""
    found: set[str] = set()
    stack = [parser]
    while stack:
        current = stack.pop()
        for action in current._actions:
            if isinstance(action, argparse._SubParsersAction):
                stack.extend(action.choices.values())
            elif action.option_strings and action.nargs != 0:
                found.update(action.option_strings)
    return frozenset(found)


def join_negative_values(argv: Sequence[str], options: Iterable[str]) -> list[str]:
    """``["--epsilon", "-1:2"]`` -> ``["--epsilon=-1:2"]`` for the ``options`` that take a value.

    argparse reads a token starting with '-' as an option unless it is a plain negative number, so
    ``--budget -1,0`` or ``--epsilon -inf`` fail with "expected one argument" before the option's own
    check can name the bad value. A following token that starts with '-' and then a digit, '.', 'inf'
    or 'nan' is joined to its option. Other tokens, and everything after ``--``, are left alone.
    """
    takes_value = set(options)
    out: list[str] = []
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "--":  # the rest are positional arguments
            out.extend(tokens[i:])
            break
        if (token in takes_value and i + 1 < len(tokens) and _NEGATIVE_VALUE.match(tokens[i + 1])):
            out.append(f"{token}={tokens[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def integer_value(text: str) -> int:
    """argparse ``type=`` of every ``type=int`` option (:func:`whole_numbers` sets it): ``--parties 1e3``
    says what is allowed (the option's range is the command's own check), not ``invalid int value``."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: an integer in digits (1000, not 1e3 or "
                                         "1.5)") from None


def whole_numbers(parser: argparse.ArgumentParser) -> None:
    """Give each ``type=int`` option of ``parser`` :func:`integer_value`."""
    for action in parser._actions:
        if action.type is int:
            action.type = integer_value


def _integer_at_least(text: str, minimum: int, shown: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{shown} is not allowed: an integer >= {minimum}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{shown} is not allowed: an integer >= {minimum}")
    return value


@contextlib.contextmanager
def option_names(**options: str | tuple[str, Any]) -> Iterator[None]:
    """Re-raise a :class:`ParameterError` of the Python API that names a keyword argument (a key of
    ``options``) as naming the command-line option and the text the user typed instead (where the text typed
    reads better than the API's value; the option's name alone is given to every error by ``mpdp`` itself,
    :func:`mpdp.parties.cli.errors.flag_named`):
    ``option_names(delta=("--delta", args.delta))`` turns ``delta=[0.5, 0.2] is not allowed: ...`` into
    ``--delta='0.5,0.2' is not allowed: ...``; an option alone (``budget="--budget"``) keeps the API's
    value. Other errors pass unchanged."""
    try:
        yield
    except ParameterError as exc:
        if exc.name not in options:
            raise
        given = options[exc.name]
        option, typed = (given, exc.value) if isinstance(given, str) else given
        raise renamed(exc, option, typed) from None


def seed_value(text: str) -> int:
    """argparse ``type=`` for ``--seed``: an integer >= 0 (numpy's SeedSequence takes no negatives)."""
    return _integer_at_least(text, 0, f"--seed={text!r}")


def count_value(text: str) -> int:
    """argparse ``type=`` for a count (``--samples``, ``--jobs``): an integer >= 1."""
    return _integer_at_least(text, 1, repr(text))


#: Options every command has (added by :func:`add_common_options`), left out of a document's ``inputs``.
COMMON_OPTIONS = ("json", "quiet", "config")
#: Names argparse adds that are no option of the user's (and ``output``: the CommandOutput of command_output).
_NOT_INPUTS = frozenset({"run", "command", "verbose", "log_level", "output", *COMMON_OPTIONS})
#: How a log record of the ``mpdp`` loggers is printed: the prefix is the formatter's, never the message's.
LOG_FORMAT = "mpdp %(levelname)s %(name)s: %(message)s"
#: ``--log-level`` choices, quietest last.
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """Add the options every ``mpdp`` command has: ``--json [FILE]`` (``args.json``: None, ``"-"`` for
    standard output, or the file), ``--quiet`` (``args.quiet``) and ``--config TOML`` (``args.config``; read
    by :func:`apply_config`). :func:`command_output` then does what they say."""
    group = parser.add_argument_group("output (every command)")
    group.add_argument("--json", nargs="?", const="-", default=None, metavar="FILE",
                       help="write the result as one JSON document to FILE (checked before any work), or with "
                            "no FILE to standard output (the human text then goes to standard error)")
    group.add_argument("--quiet", action="store_true", help="no progress bars, tables or summaries (errors still show)")
    group.add_argument("--config", metavar="TOML", default=None,
                       help="read option values from a TOML file (keys: option names, - or _); options given "
                            "on the command line win")


def add_logging_options(parser: argparse.ArgumentParser) -> None:
    """Add the top-level ``-v/--verbose`` (repeatable: INFO, then DEBUG) and ``--log-level LEVEL`` of the
    ``mpdp`` logger hierarchy; :func:`configure_logging` applies them."""
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log more on standard error: -v for INFO, -vv for DEBUG (default: warnings only)")
    parser.add_argument("--log-level", type=str.upper, choices=LOG_LEVELS, default=None, metavar="LEVEL",
                        help=f"level of the mpdp.* loggers: {', '.join(LOG_LEVELS)} (default WARNING; wins over -v)")


def configure_logging(verbose: int, level: str | None) -> int:
    """Send the ``mpdp`` loggers' records at ``level`` (else WARNING lowered one step per ``verbose``) to
    standard error (:func:`logging.basicConfig`); returns the numeric level."""
    import logging

    number = getattr(logging, level) if level is not None else max(logging.DEBUG, logging.WARNING - 10 * verbose)
    logging.basicConfig(format=LOG_FORMAT)
    logging.getLogger("mpdp").setLevel(number)
    return int(number)


def command_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed options of a command (``vars(args)`` without argparse's own and the common options):
    the ``inputs`` of its JSON document, paths as strings, a URL's password as ``***``."""
    def shown(value: Any) -> Any:
        if isinstance(value, os.PathLike):
            return os.fspath(value)
        if isinstance(value, str) and "://" in value:
            from mpdp.broker.settings import redact_url  # imported here: pydantic costs a query ~0.3 s

            return redact_url(value)
        return value

    return {key: shown(value) for key, value in vars(args).items() if key not in _NOT_INPUTS and not callable(value)}


#: Options that name what a command writes (``--json FILE``, ``--out``, ``--plot``); every other option's path is
#: an input (:func:`input_paths`).
OUTPUT_OPTIONS = frozenset({"json", "out", "plot"})


def input_paths(args: argparse.Namespace) -> list[str]:
    """What a command may read by its options: ``--config`` and the text of every other option (each item of a
    list) but the outputs (:data:`OUTPUT_OPTIONS`) -- :func:`mpdp.parties.session.output_paths.reading` keeps
    those that name a file or folder."""
    values = [getattr(args, "config", None)] + [
        value for key, value in vars(args).items() if key not in _NOT_INPUTS | OUTPUT_OPTIONS]
    items = [item for value in values for item in (value if isinstance(value, list | tuple) else [value])]
    return [os.fspath(item) for item in items if isinstance(item, str | os.PathLike)]


class CommandOutput:
    """Where a command's output goes (made by :func:`command_output`).

    Attributes:
        json_file: the ``--json FILE`` (checked writable), or None. to_stdout: ``--json`` without a FILE.
        quiet: ``--quiet``. stdout: the real standard output (the JSON's, when ``to_stdout``).
    """

    def __init__(self, args: argparse.Namespace, stdout: Any) -> None:
        given = getattr(args, "json", None)
        self.to_stdout = given == "-"
        self.json_file = None if given in (None, "-") else output_file(given, "--json")
        self.quiet = bool(getattr(args, "quiet", False))
        self.stdout = stdout
        self._inputs = command_inputs(args)
        self._kind = str(getattr(args, "command", ""))

    @property
    def wanted(self) -> bool:
        """True when ``--json`` was given (to a file or standard output)."""
        return self.to_stdout or self.json_file is not None

    def emit(self, document: Mapping[str, Any], indent: int | None = 1) -> None:
        """Write ``document`` where ``--json`` says (nothing without ``--json``). A document without the header
        of :func:`mpdp.analysis.reports.documents.versioned` gets it, with the command's parsed options as ``inputs``.

        Raises:
            ParameterError: a NaN in the document (:func:`mpdp.analysis.reports.documents.to_json_text`).
        """
        if not self.wanted:
            return
        from mpdp.analysis.reports.documents import to_json_text, versioned

        full = document if "schema_version" in document else versioned(self._kind, document, self._inputs)
        text = to_json_text(full, indent=indent) + "\n"
        if self.json_file is not None:
            self.json_file.write_text(text, encoding="utf-8")
        else:
            self.stdout.write(text)
            self.stdout.flush()


@contextlib.contextmanager
def command_output(args: argparse.Namespace) -> Iterator[CommandOutput]:
    """Run a command under its common options: check ``--json FILE`` before any work, send the human text
    (what the command prints to standard output) to standard error with ``--json`` alone, and nowhere
    with ``--quiet``. Sets ``args.output`` (the :class:`CommandOutput` whose ``emit`` writes the JSON). No file
    the command writes may be one it reads (:func:`input_paths`, :func:`mpdp.parties.session.output_paths.reading`)."""
    import sys

    with contextlib.ExitStack() as stack:
        stack.enter_context(reading(input_paths(args)))
        output = CommandOutput(args, sys.stdout)
        args.output = output
        if output.quiet:
            stack.enter_context(contextlib.redirect_stdout(stack.enter_context(open(os.devnull, "w"))))
        elif output.to_stdout:
            stack.enter_context(contextlib.redirect_stdout(sys.stderr))
        yield output


def emit(args: argparse.Namespace, document: Mapping[str, Any], indent: int | None = 1) -> None:
    """Write ``document`` as ``--json`` says (:meth:`CommandOutput.emit` of ``args.output``)."""
    output: CommandOutput = args.output
    output.emit(document, indent)


def _config_path(argv: Sequence[str]) -> str | None:
    """The value of ``--config FILE`` / ``--config=FILE`` in ``argv`` (the last one), or None."""
    found = None
    for i, token in enumerate(argv):
        if token == "--":
            break
        if token == "--config" and i + 1 < len(argv):
            found = argv[i + 1]
        elif token.startswith("--config="):
            found = token.split("=", 1)[1]
    return found


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> dict[str, str]:
    """Feed the ``--config TOML`` of ``argv`` (if any) to the command's ``parser`` as defaults.

    The TOML's keys are option names with dashes or underscores (``delta-slack`` or ``delta_slack``; no
    leading ``--``); each value is handed to argparse as if typed (lists become comma-separated text, booleans
    switch a flag), so argparse's own checks run on it; options on the command line win. A required option
    given in the file is no longer required on the command line.

    Returns:
        each option string whose value came from the file -> how an error names it there
        (``--config FILE: key``; :func:`mpdp.parties.cli.errors.flag_named`).

    Raises:
        ParameterError: the file missing or not TOML (names it and the reason), a key that names no option
            of the command (names the key and the allowed ones), a value of the wrong shape, or two keys the
            command line refuses together (``rule`` and ``worst-case``).
    """
    path = _config_path(argv)
    if path is None:
        return {}
    import tomllib

    text = read_text_file(path, "--config", "TOML file")
    try:
        table = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ParameterError("--config", path, f"a TOML file ({exc})") from None
    actions = {option.lstrip("-").replace("-", "_"): a for a in parser._actions for option in a.option_strings
               if option.startswith("--") and a.dest not in ("help", "config")}
    actions |= {a.dest: a for a in parser._actions  # -k: the key is its dest
                if a.option_strings and a.dest not in actions and a.dest not in ("help", "config")}
    allowed = sorted(name.replace("_", "-") for name in actions)
    exclusive = {a: group._group_actions for group in parser._mutually_exclusive_groups for a in group._group_actions}
    typed = argv[:argv.index("--")] if "--" in argv else argv
    defaults: dict[str, Any] = {}
    keys: dict[argparse.Action, str] = {}
    named: dict[str, str] = {}
    for key, value in table.items():
        action = actions.get(key.replace("-", "_"))
        if action is None:
            raise unknown_option(key.replace("_", "-"), key, allowed, "this command", label=f"--config {path}: key")
        other = next((keys[a] for a in exclusive.get(action, [action]) if a in keys), None)
        if other is not None:  # as argparse refuses --worst-case with --rule
            raise ParameterError(f"--config {path}: key", key, f"not with {other} (one of them)")
        keys[action] = key
        defaults[action.dest] = _config_value(action, key, value, path)
        action.required = False
        if not any(t == o or t.startswith(o + "=") for t in typed for o in action.option_strings):
            named.update(dict.fromkeys(action.option_strings, f"--config {path}: {key}"))
    parser.set_defaults(**defaults)
    return named


def _config_value(action: argparse.Action, key: str, value: Any, path: str) -> Any:
    """A TOML value as argparse would have parsed it from the command line (through its ``type`` and
    ``choices``)."""
    if action.nargs == 0:  # a flag: true/false
        if not isinstance(value, bool):
            raise ParameterError(f"--config {path}: {key}", value, "true or false (a flag)")
        if isinstance(action, argparse._CountAction):
            return int(value)
        if isinstance(action, argparse.BooleanOptionalAction):  # --x/--no-x: its const is None
            return value
        return action.const if value else action.default
    if action.nargs == "?" and action.const is not None:  # --json [FILE]: true, or a file name
        if isinstance(value, bool):
            return action.const if value else action.default
        if not isinstance(value, str):
            raise ParameterError(f"--config {path}: {key}", value, "a file name (text), or true")
    if isinstance(value, list) and action.type in _TYPE_NAMES:  # one number, not a list of one
        raise ParameterError(f"--config {path}: {key}", value, f"{_TYPE_NAMES[action.type]}, not a list")
    items = value if isinstance(value, list) else [value]
    texts = [str(v).lower() if isinstance(v, bool) else str(v) for v in items]
    if isinstance(action, argparse._AppendAction) or action.nargs not in (None, "?"):
        return [_typed(action, key, text, path) for text in texts]
    return _typed(action, key, ",".join(texts), path)


#: What a TOML value must be for an option of a built-in ``type=`` (the others say it in their error).
_TYPE_NAMES: dict[Any, str] = {int: "an integer", integer_value: "an integer", float: "a number"}


def _typed(action: argparse.Action, key: str, text: str, path: str) -> Any:
    """``text`` through the option's ``type`` and ``choices``; a refusal names the key, the value and the type
    or values allowed, never Python's own words (``invalid literal for int()``)."""
    convert = action.type if callable(action.type) else str
    try:
        value = convert(text)
    except (argparse.ArgumentTypeError, TypeError, ValueError) as exc:
        allowed = (exc.allowed if isinstance(exc, ParameterError) else _TYPE_NAMES.get(convert)
                   or (str(exc) if isinstance(exc, argparse.ArgumentTypeError) else None)
                   or f"a value {getattr(convert, '__name__', 'the option')} accepts")
        raise ParameterError(f"--config {path}: {key}", text, allowed) from None
    if action.choices is not None and value not in action.choices:
        raise ParameterError(f"--config {path}: {key}", text, "one of " + ", ".join(map(str, action.choices)))
    return value
