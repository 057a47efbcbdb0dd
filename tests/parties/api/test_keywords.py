"""A misspelt keyword of ``mpdp.accuracy`` / ``mpdp.compose`` / ``mpdp.sweep``: the project's one-line
ParameterError naming it, the closest allowed keyword and every allowed one, never Python's TypeError."""

from __future__ import annotations

import pytest

import mpdp
from mpdp.protocols.errors import ParameterError

ACCURACY = ("epsilon, function, delta, parties, measure, party, rule, engine, time_limit, samples, seed, "
            "progress")
COMPOSE = "epsilon, delta, k, delta_slack, total_delta, rel_width, resolution, time_limit"
SWEEP = ("epsilon, dataset, label_column, live, broker, workers, round_timeout, executor, jobs, time_limit, "
         "progress, parties, delta, function, rule, observer, samples, seed, alpha, scale, protocol")


@pytest.mark.parametrize(("call", "line"), [
    (lambda: mpdp.accuracy(1.0, partie=3),
     f"partie=3 is not allowed: an option of mpdp.accuracy (did you mean parties?): {ACCURACY}"),
    (lambda: mpdp.compose(1.0, k=2, deltaa=0.0),
     f"deltaa=0.0 is not allowed: an option of mpdp.compose (did you mean delta?): {COMPOSE}"),
    (lambda: mpdp.sweep("1", sampels=10),
     f"sampels=10 is not allowed: an option of mpdp.sweep (did you mean samples?): {SWEEP}"),
    (lambda: mpdp.sweep("1", xyzzy=1), f"xyzzy=1 is not allowed: an option of mpdp.sweep: {SWEEP}"),
])
def test_a_misspelt_keyword_names_the_closest_and_the_allowed_ones(call, line) -> None:
    with pytest.raises(ParameterError) as caught:
        call()
    assert str(caught.value) == line


def test_the_right_keywords_still_work() -> None:
    """The check lets every real keyword through (the values: 002's k = 1 randomized response, e^1/(1+e))."""
    r = mpdp.accuracy(1.0, function="xor", parties=1, rule="average")
    assert r.to_dict()["rules"]["average"]["average_accuracy"] == pytest.approx(2.718281828459045 / 3.718281828459045)
