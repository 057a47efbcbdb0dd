"""An integer keyword of the API given a float (``mpdp.compose(k=1e3)`` was accepted, ``party=0.0`` raised
numpy's IndexError): refused by name, with the integer to write when the float is whole."""

from __future__ import annotations

import numpy as np
import pytest

import mpdp
from mpdp.parties.api.params import check_count
from mpdp.protocols.errors import ParameterError


@pytest.mark.parametrize(("call", "line"), [
    (lambda: mpdp.compose(epsilon=0.1, delta=0.0, k=1e3), "k=1000.0 is not allowed: an integer >= 1 (a float; write 1000)"),
    (lambda: mpdp.compose(epsilon=0.1, delta=0.0, k=2.5), "k=2.5 is not allowed: an integer >= 1"),
    (lambda: mpdp.compose(epsilon=0.1, delta=0.0, k=True), "k=True is not allowed: an integer >= 1"),
    (lambda: mpdp.accuracy(1.0, parties=5.0), "parties=5.0 is not allowed: an integer >= 1 (a float; write 5)"),
    (lambda: mpdp.accuracy("1,1,1", party=0.0), "party=0.0 is not allowed: an integer >= 0 (a float; write 0)"),
    (lambda: mpdp.accuracy(1.0, parties=5, samples=1e3), "samples=1000.0 is not allowed: an integer >= 1 (a float; write 1000)"),
    (lambda: mpdp.accuracy(1.0, parties=5, seed=1.0), "seed=1.0 is not allowed: an integer >= 0 (a float; write 1)"),
    (lambda: mpdp.estimate(1.0, parties=5, samples=100.0), "samples=100.0 is not allowed: an integer >= 1 (a float; write 100)"),
    (lambda: mpdp.estimate(1.0, parties=5, party=-1), "party=-1 is not allowed: an integer >= 0"),
    (lambda: mpdp.estimate(1.0, parties=5, seed=2.0), "seed=2.0 is not allowed: an integer >= 0 (a float; write 2)"),
    (lambda: mpdp.sweep("1", parties=5.0), "parties=5.0 is not allowed: an integer >= 1"),
    (lambda: mpdp.sweep("1", parties=5, samples=1e3), "samples=1000.0 is not allowed: an integer >= 1"),
    (lambda: mpdp.sweep("1", parties=5, seed=1.0), "seed=1.0 is not allowed: an integer >= 0"),
])
def test_a_float_where_an_integer_is_meant_is_refused_by_name(call, line) -> None:
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value) == line


def test_integers_of_any_kind_are_taken() -> None:
    """numpy integers are integers: k = 30 compositions of pure epsilon 0.1 at slack 0 compose to exactly
    k * epsilon = 3.0 (000 Theorem 3.3 at delta_tilde = 0: the basic bound is tight)."""
    assert check_count("k", np.int64(30)) == 30 and check_count("seed", 0, low=0) == 0
    r = mpdp.compose(epsilon=0.1, delta=0.0, k=np.int32(30), delta_slack=0.0)
    assert r.to_dict()["k"] == 30 and r.to_dict()["epsilon_tilde"] == pytest.approx(3.0)
