"""Lists of numbers as text, as the command line's options and a text ``epsilon=`` of the API read them.

``"0.1,0.5"`` (:func:`parse_number_list`); ``"0.5,1,2*3"`` with runs of equal values as ``VALUE*COUNT``
(:func:`parse_list`: ``--epsilon`` of ``mpdp accuracy``/``compose``, a text ``epsilon=`` of
``mpdp.accuracy``/``estimate``/``compose``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, overload

from mpdp.protocols.errors import ParameterError

__all__ = ["parse_list", "parse_number_list"]

T = TypeVar("T")


@overload
def parse_number_list(text: str, name: str) -> list[float]: ...
@overload
def parse_number_list(text: str, name: str, convert: Callable[[str], T]) -> list[T]: ...
def parse_number_list(text: str, name: str, convert: Callable[[str], Any] = float) -> list[Any]:
    """The comma-separated values of ``text``, each passed through ``convert`` (after stripping spaces).

    Args:
        text: e.g. ``"0.1,0.5, 1"``.
        name: the option as the user wrote it (``"--epsilon"``), for the error message.
        convert: str -> value (``float``, ``int``, or any parser raising ValueError/ParameterError).

    Returns:
        one value per item, in order (at least one).

    Raises:
        ParameterError: ``text`` empty, an empty item (``"3,,5"``, ``"0.1,"``: names the item position),
            or an item ``convert`` rejects (names the item and its position).
    """
    kind = "integers" if convert is int else "numbers"
    allowed = f"a comma-separated list of {kind}, e.g. {'1,3,5' if convert is int else '0.1,0.5'}"
    if not text or not text.strip():
        raise ParameterError(name, text, allowed)
    items = text.split(",")
    values: list[Any] = []
    for position, item in enumerate(items, start=1):
        item = item.strip()
        if not item:
            raise ParameterError(name, text, f"{allowed}; item {position} of {len(items)} is empty")
        try:
            values.append(convert(item))
        except ParameterError:
            raise
        except (TypeError, ValueError, OverflowError):
            raise ParameterError(name, text, f"{allowed}; item {position} ({item!r}) is not one") from None
    return values


def _piece(text: str, name: str) -> list[float]:
    value, star, count = text.partition("*")
    try:
        number = float(value)
        times = int(count) if star else 1
    except ValueError:
        raise ParameterError(name, text, "numbers, or VALUE*COUNT, comma-separated") from None
    if times < 1 or times > 10_000_000:
        raise ParameterError(name, text, "a count between 1 and 10^7")
    return [number] * times


def parse_list(text: str, name: str) -> list[float]:
    """``"0.5,1,2*3"`` -> [0.5, 1.0, 2.0, 2.0, 2.0].

    Raises:
        ParameterError: a malformed piece, or an empty one (``"1,,2"``; see
            :func:`parse_number_list`).
    """
    pieces = parse_number_list(text.replace(" ", ""), name, lambda piece: _piece(piece, name))
    return [value for piece in pieces for value in piece]
