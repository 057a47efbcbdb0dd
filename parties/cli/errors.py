"""The one place the CLI turns an exception group into one line: the first cause, and how many more.

Task groups (asyncio.TaskGroup in the session runner, the workers and the party hosts) raise an
ExceptionGroup of every party's error; 10^4 parties under load failed with "ExceptionGroup (1992
sub-exceptions)". :func:`first_cause` picks the first mpdp error (depth first), else the first leaf, and
counts the other leaves; :func:`error_line` is what ``mpdp`` prints.
"""

from __future__ import annotations

from collections import Counter

from mpdp.protocols.errors import MpdpError

__all__ = ["error_line", "first_cause", "leaves"]


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
