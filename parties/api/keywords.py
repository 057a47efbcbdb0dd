"""A misspelt keyword argument of the Python API as the project's one-line error, not Python's TypeError.

``mpdp.sweep("1", sampels=10)`` raised ``TypeError: plan_sweep() got an unexpected keyword argument``;
:func:`checked_keywords` makes it ``sampels=10 is not allowed: an option of mpdp.sweep (did you mean
samples?): ...`` (:func:`unknown_option`, which :class:`~mpdp.parties.api.simulation_config.SimulationConfig`
gives its unknown options too).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, ParamSpec, TypeVar

from mpdp.protocols.errors import ParameterError

__all__ = ["checked_keywords", "unknown_option"]

P = ParamSpec("P")
R = TypeVar("R")


def unknown_option(name: str, value: Any, allowed: Iterable[str], where: str,
                   label: str | None = None) -> ParameterError:
    """The error of an option ``name`` (given ``value``) that ``where`` does not take: the closest of
    ``allowed`` suggested (:func:`difflib.get_close_matches`), then every one listed. ``label``: how the
    error names it (default ``name``; a ``--config`` file's key: ``--config FILE: key``)."""
    names = list(allowed)
    close = difflib.get_close_matches(name, names, n=1)
    return ParameterError(label or name, value, f"an option of {where}"
                          + (f" (did you mean {close[0]}?)" if close else "") + f": {', '.join(names)}")


def checked_keywords(where: str, *more: Iterable[str]) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an API function so that a keyword argument it does not take raises :func:`unknown_option`
    (naming ``where``, e.g. ``mpdp.sweep``) instead of a TypeError. Its own parameters are allowed, and
    ``more`` (the keys of a ``**options`` TypedDict it passes on)."""

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        parameters = inspect.signature(func).parameters.values()
        allowed = [p.name for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        allowed += [name for names in more for name in names if name not in allowed]

        @functools.wraps(func)
        def checked(*args: P.args, **kwargs: P.kwargs) -> R:
            for name, value in kwargs.items():
                if name not in allowed:
                    raise unknown_option(name, value, allowed, where)
            return func(*args, **kwargs)

        return checked

    return decorate
