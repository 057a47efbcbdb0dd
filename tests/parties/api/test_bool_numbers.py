"""A bool where the API takes a number (``mpdp.accuracy(epsilon=True)`` ran as k = 1, epsilon = 1; ``False`` as
0): refused by name wherever a number is checked (:func:`mpdp.protocols.numbers.refuse_bool`)."""

from __future__ import annotations

import numpy as np
import pytest

import mpdp
from mpdp.protocols.errors import ParameterError

LIST = "a number, a text such as '0.5,1*3', or a sequence of numbers (true or false is not a number)"


@pytest.mark.parametrize(("call", "line"), [
    (lambda: mpdp.accuracy(epsilon=True), f"epsilon=True is not allowed: {LIST}"),
    (lambda: mpdp.accuracy(epsilon=False, parties=3), f"epsilon=False is not allowed: {LIST}"),
    (lambda: mpdp.accuracy(epsilon=[1.0, True]), "epsilon[1]=True is not allowed: a number (true or false is not a number)"),
    (lambda: mpdp.accuracy(epsilon=[1.0, np.bool_(True)]),
     "epsilon[1]=np.True_ is not allowed: a number (true or false is not a number)"),
    (lambda: mpdp.accuracy(epsilon=1.0, parties=3, delta=False), f"delta=False is not allowed: {LIST}"),
    (lambda: mpdp.accuracy(epsilon=1.0, parties=3, time_limit=True),
     "time_limit=True is not allowed: a number of seconds > 0 (true or false is not a number)"),
    (lambda: mpdp.estimate(epsilon=True, parties=3), f"epsilon=True is not allowed: {LIST}"),
    (lambda: mpdp.compose(epsilon=True, k=3), f"epsilon=True is not allowed: {LIST}"),
    (lambda: mpdp.compose(epsilon=0.1, k=3, delta_slack=False),
     "delta_slack=False is not allowed: a number in [0, 1) (true or false is not a number)"),
    (lambda: mpdp.mechanism(epsilon=True, graph="majority:3"),
     "epsilon=True is not allowed: a number >= 0 (inf allowed) (true or false is not a number)"),
    (lambda: mpdp.sweep(epsilon=[True], parties=3),
     "epsilon=True is not allowed: a number >= 0 (inf allowed) (true or false is not a number)"),
    (lambda: mpdp.audit(epsilon=True, samples=100),
     "epsilon=True is not allowed: a number >= 0 (inf allowed) (true or false is not a number)"),
])
def test_a_bool_is_not_a_number(call, line) -> None:
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value) == line


def test_numbers_of_every_kind_are_still_taken() -> None:
    """An int and a numpy float: at k = 1 the optimal rule's average accuracy is randomized response's truth
    probability e^eps / (1 + e^eps) (002 eq. (9))."""
    e = np.e / (1 + np.e)
    assert mpdp.accuracy(epsilon=1, parties=1).average_accuracy() == pytest.approx(e)
    assert mpdp.accuracy(epsilon=[np.float64(1.0)]).average_accuracy() == pytest.approx(e)
