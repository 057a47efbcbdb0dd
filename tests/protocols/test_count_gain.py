"""The posterior rule decided from reported-one counts (identical pure parties) against the per-transcript
Poisson-binomial posterior it replaces: the same decisions at every count, the same gains."""

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols import RandomizedResponse, accuracy_measure, count_posterior, observer_average_rule, parse_function
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.rules.count_gain import count_gains, gain_steps
from mpdp.protocols.rules.count_threshold import count_threshold_rule
from mpdp.protocols.rules.symmetric import argmax_decision

FUNCTIONS = ["majority", "and", "or", "threshold:2", "threshold:3", "sum"]


def _posterior_decisions(epsilon: float, k: int, gain: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The rule before the count path: per transcript count_posterior of P(x_i = 1 | symbol), @ gain,
    argmax with the tie rule; for the transcripts 1^t 0^(k - t), t = 0..k (every count)."""
    post = RandomizedResponse(epsilon).posterior_one
    symbols = (np.arange(k)[None, :] < np.arange(k + 1)[:, None]).astype(np.int64)
    expected = count_posterior(post[symbols]) @ gain
    return argmax_decision(expected), expected


@settings(max_examples=120, deadline=None)
@given(k=st.integers(1, 40), epsilon=st.one_of(st.floats(0.0, 12.0), st.sampled_from([0.0, 1e-9, np.inf])),
       name=st.sampled_from(FUNCTIONS), measure=st.sampled_from(["zero-one", "absolute-error", "squared-error"]))
def test_count_path_decides_as_the_posterior_at_every_count(k: int, epsilon: float, name: str,
                                                            measure: str) -> None:
    f = parse_function(name)
    w = accuracy_measure(measure, f.output_size(k))
    rule = observer_average_rule([RandomizedResponse(epsilon)] * k, f, w)
    symbols = (np.arange(k)[None, :] < np.arange(k + 1)[:, None]).astype(np.uint8)
    want, want_gain = _posterior_decisions(epsilon, k, rule.gain)
    if gain_steps(rule.gain).size <= 4:
        assert rule.by_reported_ones  # the count path is the one under test
    np.testing.assert_allclose(rule.expected_gain(symbols), want_gain, rtol=1e-9, atol=1e-12)
    if rule.parity_alpha is not None:  # a gain of parity form (k = 1, or XOR) decides by its sign product,
        return  # without the tie rule, before and after the count path
    np.testing.assert_array_equal(rule.decide(symbols), want)
    # the counts alone decide: any order of the reported ones
    shuffled = np.random.default_rng(k).permuted(symbols, axis=1)
    np.testing.assert_array_equal(rule.decide(shuffled), want)


@pytest.mark.parametrize("epsilon", [0.05, 0.5, 1.0, 3.0])
@pytest.mark.parametrize("name", ["majority", "threshold:180", "or"])
def test_count_path_at_k_500_decides_as_the_posterior(epsilon: float, name: str) -> None:
    k = 500
    f = parse_function(name)
    rule = observer_average_rule([RandomizedResponse(epsilon)] * k, f, np.eye(2))
    symbols = (np.arange(k)[None, :] < np.arange(k + 1)[:, None]).astype(np.uint8)
    want, _ = _posterior_decisions(epsilon, k, rule.gain)
    got = rule.decide(symbols)
    np.testing.assert_array_equal(got, want)
    if name == "majority":
        assert 0 < got.sum() < k + 1  # a real threshold inside 0..k


def test_zero_epsilon_ties_go_to_the_smallest_decision() -> None:
    """At epsilon = 0 every count leaves P(majority) = 1/2 (odd k): a tie, decided 0 as before."""
    rule = observer_average_rule([RandomizedResponse(0.0)] * 7, parse_function("majority"), np.eye(2))
    symbols = (np.arange(7)[None, :] < np.arange(8)[:, None]).astype(np.uint8)
    np.testing.assert_array_equal(rule.decide(symbols), np.zeros(8))


def test_other_rules_keep_the_posterior_path() -> None:
    """A party observer, mixed epsilons, four-output symbols and sums over many counts do not use counts."""
    f = parse_function("majority")
    assert observer_average_rule([RandomizedResponse(1.0)] * 5, f, np.eye(2), observer=0).by_reported_ones is False
    assert observer_average_rule([RandomizedResponse(1.0), RandomizedResponse(2.0)], f, np.eye(2)).by_reported_ones is False
    assert observer_average_rule([RandomizedResponse(1.0, 0.1)] * 3, f, np.eye(2)).by_reported_ones is False
    total = parse_function("sum")
    assert observer_average_rule([RandomizedResponse(1.0)] * 9, total, np.eye(10)).by_reported_ones is False


def test_count_out_of_range_is_refused() -> None:
    with pytest.raises(ParameterError, match="count"):
        count_gains(1.0, np.eye(2)[[0, 0, 1, 1]], np.array([4]))


def test_large_round_cost_does_not_grow_with_repetitions() -> None:
    """k = 20,000 identical parties, 400 repetitions: the per-count posterior took O(k^2) per distinct
    count (hundreds of them); by counts the round decides in seconds even on a loaded machine."""
    k, reps = 20_000, 400
    mechs, f = [RandomizedResponse(0.5)] * k, parse_function("majority")
    rule = observer_average_rule(mechs, f, np.eye(2))
    rng = np.random.default_rng(7)
    symbols = (rng.random((reps, k)) < 0.5).astype(np.uint8)
    start = time.process_time()
    got = rule.decide(symbols)
    assert time.process_time() - start < 30.0  # measured ~0.3 s CPU; the old path: ~170 s CPU here
    # the count engine's threshold (found by bisection on point values, no tie rule) decides the same
    np.testing.assert_array_equal(got, count_threshold_rule(mechs, f, np.eye(2)).decide(symbols))
    assert 0 < got.sum() < reps


def test_bad_symbols_are_refused_by_name() -> None:
    rule = observer_average_rule([RandomizedResponse(1.0)] * 3, parse_function("majority"), np.eye(2))
    with pytest.raises(ParameterError, match="shape"):
        rule.decide(np.array([1, 0, 1], dtype=np.uint8))
    with pytest.raises(ParameterError, match="symbol of party 2"):
        rule.decide(np.array([[1, 0, 1], [0, 0, 2]], dtype=np.uint8))
