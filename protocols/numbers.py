"""A number argument that is a bool: refused by every check of a number (``True`` is the int 1 to Python, so
``accuracy(epsilon=True)`` ran as epsilon = 1 and ``time_limit=True`` as one second)."""

from __future__ import annotations

import sys
from typing import Any

from mpdp.protocols.errors import ParameterError

__all__ = ["refuse_bool"]


def refuse_bool(name: str, value: Any, allowed: str) -> None:
    """Raise :class:`ParameterError` (named ``name``, saying ``allowed``) when ``value`` is a bool or numpy bool.

    Example:
        >>> refuse_bool("epsilon", 1.0, "a number >= 0")  # a number passes
        >>> refuse_bool("epsilon", True, "a number >= 0")
        Traceback (most recent call last):
        ...
        mpdp.protocols.errors.ParameterError: epsilon=True is not allowed: a number >= 0 (true or false is not a number)
    """
    numpy = sys.modules.get("numpy")  # not imported here: ``mpdp --help`` imports this module and no numpy
    if isinstance(value, bool) or (numpy is not None and isinstance(value, numpy.bool_)):
        raise ParameterError(name, value, allowed, hint="true or false is not a number")
