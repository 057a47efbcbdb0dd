"""Party id ranges on the command line: ``0-217``, ``0-3,7,9-10`` (inclusive, ascending, disjoint)."""

from __future__ import annotations

from collections.abc import Iterable

from mpdp.protocols.errors import ParameterError

__all__ = ["format_ranges", "parse_ranges"]

_ALLOWED = "comma-separated ids or inclusive ranges A-B of party ids in 0..{top}, ascending, no overlap"


def parse_ranges(spec: str, k: int, name: str = "--parties") -> tuple[int, ...]:
    """The party ids of ``spec`` (e.g. ``"0-217"`` or ``"0-3,7"``) among k parties, ascending.

    Raises:
        ParameterError: empty, malformed, out of 0..k-1, descending or overlapping (names ``spec``).
    """
    allowed = _ALLOWED.format(top=k - 1)
    ids: list[int] = []
    for piece in spec.split(","):
        low_text, dash, high_text = piece.strip().partition("-")
        if not low_text.isdigit() or (dash and not high_text.isdigit()):
            raise ParameterError(name, spec, allowed)
        low, high = int(low_text), int(high_text) if dash else int(low_text)
        if low > high or high >= k or (ids and low <= ids[-1]):
            raise ParameterError(name, spec, allowed)
        ids.extend(range(low, high + 1))
    return tuple(ids)


def format_ranges(ids: Iterable[int]) -> str:
    """Ascending ids written compactly: ``[0, 1, 2, 5]`` -> ``"0-2,5"``; ``""`` for none."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    return ",".join(f"{a}-{b}" if b > a else str(a) for a, b in spans)
