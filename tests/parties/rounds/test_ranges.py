"""--parties / --split RANGES: parse and format."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.protocols import ParameterError


def test_ranges_and_single_ids() -> None:
    assert parse_ranges("0-217", 435) == tuple(range(218))
    assert parse_ranges("0-2, 5,7-8", 9) == (0, 1, 2, 5, 7, 8)
    assert format_ranges([8, 0, 1, 2, 5, 7]) == "0-2,5,7-8" and format_ranges([]) == ""


@pytest.mark.parametrize("spec", ["", "-3", "3-", "a", "0-9", "2-1", "0-3,3", "4,2", "0--1", "1,,2"])
def test_bad_specs_are_named(spec: str) -> None:
    with pytest.raises(ParameterError, match="ids in 0..8"):
        parse_ranges(spec, 9)


@given(st.sets(st.integers(0, 63), min_size=1))
def test_format_then_parse_is_the_identity(ids: set[int]) -> None:
    assert parse_ranges(format_ranges(ids), 64) == tuple(sorted(ids))
