"""The curator's exact accuracy on one input, checked against closed forms and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mpdp.analysis.theory.central_vs_distributed import (
    curator_accuracy_on_input,
    curator_release_probability,
)
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism, central_mechanism
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import parse_function


@pytest.mark.parametrize("epsilon", [0.0, 0.3, 1.0, 5.0])
def test_one_voter_is_randomized_response(epsilon: float) -> None:
    """k = 1, delta = 0: the optimal mechanism reports the vote with probability e^eps / (1 + e^eps)."""
    truthful = 1.0 / (1.0 + math.exp(-epsilon))
    for vote in (0, 1):
        got = curator_accuracy_on_input(np.array([vote]), epsilon, 0.0)
        assert got.exact and got.value == pytest.approx(truthful, abs=1e-12)


@pytest.mark.parametrize(("k", "epsilon", "delta"), [(5, 1.0, 0.0), (6, 0.5, 0.05), (7, 2.0, 0.01)])
def test_brute_force_over_all_inputs(k: int, epsilon: float, delta: float) -> None:
    """Average over all 2^k inputs equals the mechanism's average accuracy; per input the value is the
    probability of releasing the true majority; neighbours satisfy (epsilon, delta)-DP."""
    mechanism = central_majority_mechanism(k, epsilon, delta)
    values = []
    for x in itertools.product([0, 1], repeat=k):
        votes = np.array(x)
        p_one = curator_release_probability(int(votes.sum()), k, epsilon, delta)
        truth = int(2 * votes.sum() > k)
        value = curator_accuracy_on_input(votes, epsilon, delta).value
        assert value == pytest.approx(p_one if truth else 1.0 - p_one, abs=1e-15)
        values.append(value)
    assert np.mean(values) == pytest.approx(mechanism.average_accuracy(), abs=1e-12)
    assert min(values) == pytest.approx(mechanism.worst_case_accuracy(), abs=1e-12)
    p = mechanism.release_one
    for out in (p, 1.0 - p):  # neighbouring counts c, c + 1, both outputs
        assert (out[1:] <= math.exp(epsilon) * out[:-1] + delta + 1e-12).all()
        assert (out[:-1] <= math.exp(epsilon) * out[1:] + delta + 1e-12).all()


@pytest.mark.parametrize("epsilon", [math.inf, 1000.0])
def test_infinite_epsilon_is_exact(epsilon: float) -> None:
    rng = np.random.default_rng(3)
    for n in (1, 2, 9, 10, 435):
        x = rng.integers(0, 2, size=n)
        assert curator_accuracy_on_input(x, epsilon, 0.0).value == 1.0


def test_no_voters_and_bad_input() -> None:
    assert curator_accuracy_on_input(np.zeros(0, dtype=int), 1.0, 0.0).value == 1.0
    assert curator_release_probability(0, 0, 1.0, 0.0) == 0.0
    with pytest.raises(ParameterError):
        curator_accuracy_on_input(np.array([0, 2]), 1.0, 0.0)
    with pytest.raises(ParameterError):
        curator_release_probability(4, 3, 1.0, 0.0)
    with pytest.raises(ParameterError):
        curator_accuracy_on_input(np.array([0, 1]), -1.0, 0.0)


@pytest.mark.parametrize("function", ["threshold:2", "xor", "and", "or"])
def test_other_functions_brute_force(function: str) -> None:
    """Any binary symmetric f: per input, P(release = f(x)) from the release probability; over all 2^k
    inputs, the mean and minimum are central_mechanism's average and worst-case accuracy (k = 5)."""
    k, epsilon, delta = 5, 0.9, 0.03
    mechanism = central_mechanism(function, k, epsilon, delta)
    f = parse_function(function)
    values = []
    for x in itertools.product([0, 1], repeat=k):
        votes = np.array(x)
        p_one = curator_release_probability(int(votes.sum()), k, epsilon, delta, function)
        truth = int(f.truth_table(k)[int("".join(map(str, x)), 2)])
        value = curator_accuracy_on_input(votes, epsilon, delta, function).value
        assert value == pytest.approx(p_one if truth else 1.0 - p_one, abs=1e-15)
        values.append(value)
    assert np.mean(values) == pytest.approx(mechanism.average_accuracy(), abs=1e-12)
    assert min(values) == pytest.approx(mechanism.worst_case_accuracy(), abs=1e-12)


@pytest.mark.parametrize(("function", "value"), [("and", 1.0), ("threshold:0", 1.0), ("or", 0.0), ("xor", 0.0),
                                                 ("threshold:1", 0.0)])
def test_no_voters_release_f_of_nobody(function: str, value: float) -> None:
    assert curator_release_probability(0, 0, 1.0, 0.0, function) == value
    assert curator_accuracy_on_input(np.zeros(0, dtype=int), 1.0, 0.0, function).value == 1.0
    with pytest.raises(ParameterError, match="sum"):
        curator_release_probability(1, 3, 1.0, 0.0, "sum")
