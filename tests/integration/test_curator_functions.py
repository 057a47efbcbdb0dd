"""The live curator releases every binary symmetric function (not only the majority) by
``central_mechanism``: k = 5 parties over a real mosquitto, threshold:2 and xor; each round's released
outputs are right as often as ``central_mechanism(f, n).truthful[c]`` says (n the participants, c their
ones), and a function the curator cannot release (sum) is a one-line error naming the allowed ones."""

from __future__ import annotations

import numpy as np
import pytest

import mpdp
from mpdp.analysis.statistics.stats import consistency_test
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.protocols.colorings.majority_mechanism import central_mechanism
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import parse_function

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

EPSILON, DELTA, REPETITIONS, ALPHA = 0.8, 0.02, 300, 0.01
# 5 parties x 4 rounds (-1: takes no part): counts of ones 1 of 5, 2 of 5 (threshold:2's boundary), 2 of 4
# (one absent), 4 of 5
VOTES = np.array([[1, 1, 1, 1],
                  [0, 1, -1, 1],
                  [0, 0, 1, 1],
                  [0, 0, 0, 1],
                  [0, 0, 0, 0]], dtype=np.int64)


@pytest.mark.parametrize("function", ["threshold:2", "xor"])
def test_the_live_curator_releases_the_central_mechanism(mosquitto: BrokerEndpoint, function: str) -> None:
    """Per round: truth f(x), theory central_mechanism's P(output = f(c) | c) on the participants, and the
    measured right releases consistent with it by an exact binomial test at alpha = 0.01 (Bonferroni over
    the 4 rounds; seeded, so deterministic)."""
    r = mpdp.simulate(votes=VOTES, epsilon=EPSILON, delta=DELTA, repetitions=REPETITIONS, function=function,
                      protocol="curator", seed=3, workers=1, broker=f"mqtt://127.0.0.1:{mosquitto.port}",
                      progress=False)
    f = parse_function(function)
    for j, got in enumerate(r.rounds):
        votes = VOTES[VOTES[:, j] >= 0, j]
        n, c = votes.size, int(votes.sum())
        truthful = float(central_mechanism(function, n, EPSILON, DELTA).truthful[c])
        assert (got.n_parties, got.yes_count, got.truth) == (n, c, int(f.count_values(n)[c]))
        assert got.theoretical_accuracy == pytest.approx(truthful, abs=1e-12)
        assert got.repetitions == REPETITIONS
        assert consistency_test(got.correct, REPETITIONS, truthful, alpha=ALPHA, rounds=len(r.rounds)).consistent
    if function == "xor":  # parity's optimum: P(output = xor) = (e^eps + delta)/(1 + e^eps) on every input
        level = (np.exp(EPSILON) + DELTA) / (1 + np.exp(EPSILON))
        assert [g.theoretical_accuracy for g in r.rounds] == pytest.approx([level] * 4, abs=1e-12)


def test_the_curator_refuses_the_sum_in_one_line(mosquitto: BrokerEndpoint) -> None:
    with pytest.raises(ParameterError) as refused:
        mpdp.simulate(votes=VOTES, epsilon=EPSILON, function="sum", protocol="curator", seed=3, workers=1,
                      broker=f"mqtt://127.0.0.1:{mosquitto.port}", progress=False)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("function='sum' is not allowed")
    assert "majority (or passed), and, or, xor (or parity), threshold:T for the curator protocol" in message
