"""protocols.optimal.check_worst_case_size: the worst-case LP is refused above WORST_CASE_MAX_CLASSES
transcript classes, counted here independently by enumerating each group's count vectors."""

from __future__ import annotations

import itertools
import math

import pytest

from mpdp.protocols import RandomizedResponse, SizeLimitError
from mpdp.protocols.optimal import WORST_CASE_MAX_CLASSES, check_worst_case_size


def _enumerated_classes(mechanisms: list[RandomizedResponse]) -> int:
    """Product over parameter groups of the number of distinct symbol counts of the group's n parties."""
    groups: dict[RandomizedResponse, int] = {}
    for mech in mechanisms:
        groups[mech] = groups.get(mech, 0) + 1
    return math.prod(sum(1 for _ in itertools.combinations_with_replacement(range(m.num_symbols), n))
                     for m, n in groups.items())


# the largest number of distinct parameters whose 2^n classes the LP still takes
BITS = WORST_CASE_MAX_CLASSES.bit_length() - 1
CASES = {
    "distinct at the limit": [RandomizedResponse(0.1 * i) for i in range(1, BITS + 1)],
    "one distinct more": [RandomizedResponse(0.1 * i) for i in range(1, BITS + 2)],
    "two groups": [RandomizedResponse(1.0)] * 5 + [RandomizedResponse(2.0)] * 7,
    "four-output groups": [RandomizedResponse(1.0, 0.1)] * 9 + [RandomizedResponse(1.0, 0.2)] * 9,
    "small four-output groups": [RandomizedResponse(1.0, 0.1)] * 4 + [RandomizedResponse(0.5)] * 3,
}


@pytest.mark.parametrize("mechanisms", CASES.values(), ids=CASES.keys())
def test_refused_exactly_above_the_limit(mechanisms: list[RandomizedResponse]) -> None:
    classes = _enumerated_classes(mechanisms)
    if classes > WORST_CASE_MAX_CLASSES:
        with pytest.raises(SizeLimitError, match=str(classes)):
            check_worst_case_size(mechanisms)
    else:
        check_worst_case_size(mechanisms)


def test_the_cases_reach_both_sides_of_the_limit() -> None:
    sides = {_enumerated_classes(m) > WORST_CASE_MAX_CLASSES for m in CASES.values()}
    assert sides == {True, False}


def test_one_parameter_group_has_no_extra_limit() -> None:
    check_worst_case_size([RandomizedResponse(1.0)] * (4 * WORST_CASE_MAX_CLASSES))
