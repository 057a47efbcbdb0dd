"""protocols.optimal.check_worst_case_size: the worst-case LP is refused above WORST_CASE_MAX_CLASSES
transcript classes, counted here independently by enumerating each group's count vectors."""

from __future__ import annotations

import itertools
import math

import pytest

from mpdp.protocols import RandomizedResponse, SizeLimitError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.optimal import (
    WORST_CASE_MAX_CLASSES,
    check_worst_case_size,
    optimal_rules,
)


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


@pytest.mark.parametrize("k", [30, 40])
def test_the_worst_case_optimum_is_never_below_a_feasible_rule(k: int) -> None:
    """XOR of k parties at epsilon 1 (issue 10, item 6): the LP's rule came out at 0.499999999187, below
    the fair coin's 1/2 and the average rule's worst case. The exact XOR worst case of the average rule
    is 1/2 + tanh(1/2)^k / 2 (002 Corollary 3.1); the coin has 1/2; the optimum is at least both."""
    mechs = [RandomizedResponse(1.0)] * k
    result = optimal_rules(mechs, parse_function("xor"), accuracy_measure("zero-one", 2))
    assert result.average is not None and result.worst_case is not None
    closed = 0.5 + 0.5 * math.tanh(0.5) ** k
    assert result.average.worst_case_accuracy == pytest.approx(closed, rel=1e-12)
    assert result.worst_case.worst_case_accuracy >= max(0.5, result.average.worst_case_accuracy)
    assert result.worst_case.upper_bound is not None
    assert result.worst_case.upper_bound >= result.worst_case.worst_case_accuracy
