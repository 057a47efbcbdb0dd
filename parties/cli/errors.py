"""The one place the CLI turns an exception group into one line: the first cause, and how many more.

Task groups (asyncio.TaskGroup in the session runner, the workers and the party hosts) raise an
ExceptionGroup of every party's error; 10^4 parties under load failed with "ExceptionGroup (1992
sub-exceptions)". :func:`first_cause` picks the first mpdp error (depth first), else the first leaf, and
counts the other leaves; :func:`error_line` is what ``mpdp`` prints.
"""

from __future__ import annotations

import argparse
import difflib
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from mpdp.protocols.errors import CostLimitError, MpdpError, ParameterError

__all__ = ["error_line", "first_cause", "flag_named", "leaves", "options_spelt", "renamed", "unrecognized"]


def _flags(parser: argparse.ArgumentParser) -> dict[str, str]:
    """Each destination of ``parser``'s options -> how the user writes it: ``--delta-slack`` (the long option
    spelt like the keyword if there is one, else the first long one), a positional's metavar (``RUN_DIR``)."""
    flags: dict[str, str] = {}
    for action in parser._actions:
        long = [o for o in action.option_strings if o.startswith("--")] or list(action.option_strings)  # -k
        if not action.option_strings:
            flags.setdefault(action.dest, action.metavar if isinstance(action.metavar, str) else action.dest.upper())
        else:
            spelt = f"--{action.dest.replace('_', '-')}"
            if spelt in long or action.dest not in flags:
                flags[action.dest] = spelt if spelt in long else long[0]
    return flags


def unrecognized(extras: Sequence[str], parser: argparse.ArgumentParser) -> str:
    """argparse's ``unrecognized arguments: ...`` for ``parser`` (the command's), with the option the first
    unknown one most likely meant: a close spelling (``--epsilom``: ``--epsilon``) or, for a short flag, the
    option whose value it names (``-k``: ``--parties K``)."""
    text = "unrecognized arguments: " + " ".join(extras)
    option = next((t.partition("=")[0] for t in extras if t.startswith("-")), None)
    if option is None:
        return text
    flags = _flags(parser)
    named = [flags[a.dest] for a in parser._actions
             if a.option_strings and a.metavar == option.lstrip("-").upper() and a.dest in flags]
    close = named or difflib.get_close_matches(option, [o for a in parser._actions for o in a.option_strings], n=1)
    return text + (f" (did you mean {close[0]}?)" if close else f"; {parser.prog} --help lists the options")


def renamed(exc: ParameterError, name: str, value: Any) -> ParameterError:
    """``exc`` (of the same class, the same attributes) naming ``name`` and ``value`` instead of its own: its
    message's ``name=value`` part rewritten, the rest as it was."""
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(vars(exc), name=name, value=value)
    copy.args = tuple(str(a).replace(f"{exc.name}={exc.value!r}", f"{name}={value!r}", 1) for a in exc.args)
    copy.__traceback__ = exc.__traceback__
    return copy


def flag_named(exc: ParameterError, parser: argparse.ArgumentParser,
               from_config: Mapping[str, str] | None = None) -> ParameterError:
    """``exc`` as the command line says it: the library names a keyword (``delta_slack=2.0 is not allowed``,
    ``epsilon eps.txt: line 2: epsilon=...``), the command its option (``--delta-slack=2.0 ...``). The one place
    where the name depends on the caller: the Python API's errors keep the keyword. ``exc`` itself when its
    name starts with no option of ``parser``. An option whose value came from a ``--config`` file is named
    as there (``from_config``, :func:`mpdp.parties.cli.args.apply_config`: ``--config FILE: epsilon``). The
    keywords the rest of the message suggests are named as options too (:func:`options_spelt`)."""
    head, sep, rest = exc.name.partition(" ")
    flags = _flags(parser)
    flag = flags.get(head, head)
    shown = (from_config or {}).get(flag, flag)
    named = exc if shown == head else renamed(exc, shown + sep + rest, exc.value)
    return _options_named(named, flags, _switches(parser))


def _switches(parser: argparse.ArgumentParser) -> frozenset[str]:
    """The destinations of ``parser``'s flags that take no value (``--force``, ``--resume``)."""
    return frozenset(a.dest for a in parser._actions if a.option_strings and a.nargs == 0)


def options_spelt(text: str, flags: Mapping[str, str]) -> str:
    """``text`` with each keyword it suggests named as the command's option (``flags``: keyword -> option): a
    switch (``force=True``) as ``--force``, turned off (``resume=False``) as ``without --resume``, a value
    (``time_limit=SECONDS``, ``rule='average'``) as ``--time-limit SECONDS``, ``--rule average``.

    Example:
        >>> options_spelt("or resume=False, or time_limit=SECONDS", {"resume": "--resume", "time_limit": "--time-limit"})
        'or without --resume, or --time-limit SECONDS'
    """
    for dest, flag in flags.items():
        if not flag.startswith("-"):  # a positional: no keyword of the API spells it
            continue
        key = rf"(?<![^\s(\[]){re.escape(dest)}="  # a word of its own: not a URL's ?protocol=, not --force=
        text = re.sub(key + r"True\b", flag, text)  # an option is letters and dashes
        text = re.sub(key + r"False\b", f"without {flag}", text)
        text = re.sub(key + r"(['\"]?)([\w.:/+-]+)\1", flag + r" \2", text)  # / for dask://HOST:PORT
    return text


def _options_named(exc: ParameterError, flags: Mapping[str, str], switches: frozenset[str]) -> ParameterError:
    """``exc`` with the keywords its ``allowed`` and hint suggest spelt by :func:`options_spelt`, a switch's own
    refusal ``--force=True is not allowed`` as ``--force is not allowed`` and a missing value's ``--epsilon=None
    is not allowed`` as ``--epsilon is required``; ``exc`` itself when nothing changes. The name it refuses
    stays as given (``--config FILE: repetitions='abc'`` names the file's key)."""
    allowed = options_spelt(exc.allowed, flags)
    hint = None if exc.hint is None else options_spelt(exc.hint, flags)
    message = str(exc.args[0]) if exc.args else ""
    limit = getattr(exc, "limit", None)  # a CostLimitError's own message says "over {limit}"
    for old in (exc.hint, exc.allowed, limit if isinstance(limit, str) else None):
        if old:
            message = message.replace(old, options_spelt(old, flags))
    if isinstance(exc, CostLimitError):  # estimates and their alternatives only, nested refusals' included
        message = options_spelt(message, flags)
    head = f"{exc.name}={exc.value!r} is not allowed"
    if exc.value is True and exc.name.startswith("--") and exc.name[2:].replace("-", "_") in switches:
        message = message.replace(head, f"{exc.name} is not allowed", 1)
    elif exc.name.startswith("-") and exc.value is None:
        message = message.replace(head, f"{exc.name} is required", 1)
    if exc.args and message == str(exc.args[0]):
        return exc
    copy = type(exc).__new__(type(exc))
    copy.__dict__.update(vars(exc), allowed=allowed, hint=hint)
    copy.args = (message, *exc.args[1:])
    copy.__traceback__ = exc.__traceback__
    return copy


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions of a (nested) group that are not groups, depth first; [exc] for a plain one."""
    if not isinstance(exc, BaseExceptionGroup):
        return [exc]
    return [leaf for inner in exc.exceptions for leaf in leaves(inner)]


def first_cause(exc: BaseException) -> tuple[BaseException, list[BaseException]]:
    """(the first cause, the other leaves): the first MpdpError among the leaves, else the first leaf.

    An MpdpError raised ``from`` a group (the runner surfaces its first error so) counts that group's
    other leaves."""
    if isinstance(exc, BaseExceptionGroup):
        found = leaves(exc)
        first = next((e for e in found if isinstance(e, MpdpError)), found[0])
    else:
        first = exc
        found = leaves(exc.__cause__) if isinstance(exc.__cause__, BaseExceptionGroup) else [exc]
    return first, [e for e in found if e is not first]


def error_line(exc: BaseException) -> str:
    """``first cause`` or ``first cause (and 1,991 more: 1,991 TimeoutError)``, one line."""
    first, rest = first_cause(exc)
    text = str(first) if isinstance(first, MpdpError) else f"{type(first).__name__}: {first}"
    if rest:
        kinds = Counter(type(e).__name__ for e in rest)
        text += f" (and {len(rest):,} more: " + ", ".join(f"{n:,} {k}" for k, n in kinds.most_common()) + ")"
    return " ".join(text.split())
