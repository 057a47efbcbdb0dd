"""Exact accuracy on one input against enumeration of every transcript, and the Monte Carlo fallback."""

import itertools

import numpy as np
import pytest

from mpdp.analysis import observer_accuracy_on_input
from mpdp.analysis.theory import theory
from mpdp.protocols import (
    ParameterError,
    RandomizedResponse,
    accuracy_measure,
    observer_average_rule,
    parse_function,
)


def _enumerated(mechs, x, f, w):
    rule = observer_average_rule(mechs, f, w)
    taus = np.array(list(itertools.product(*[range(m.num_symbols) for m in mechs])), dtype=np.uint8)
    prob = np.ones(len(taus))
    for i, m in enumerate(mechs):
        prob *= m.channel[x[i], taus[:, i]]
    return float(prob @ w[f(x), rule.decide(taus)])


CASES = [
    ([RandomizedResponse(1.0)] * 7, [1, 1, 0, 1, 0, 0, 1], "majority", "zero-one"),
    ([RandomizedResponse(0.5)] * 3 + [RandomizedResponse(2.0)] * 4, [1, 1, 0, 1, 0, 0, 1], "majority", "zero-one"),
    ([RandomizedResponse(1.0, 0.1)] * 5, [1, 1, 0, 0, 0], "majority", "zero-one"),
    ([RandomizedResponse(1.0, 0.1)] * 3 + [RandomizedResponse(0.3)] * 4, [1, 1, 0, 0, 0, 1, 0], "sum", "absolute-error"),
    ([RandomizedResponse(0.0)] * 5, [1, 1, 1, 0, 0], "majority", "zero-one"),
    ([RandomizedResponse(np.inf)] * 4 + [RandomizedResponse(0.7)] * 2, [1, 0, 1, 1, 0, 0], "xor", "zero-one"),
]


@pytest.mark.parametrize("mechs, x, name, measure", CASES)
def test_exact_accuracy_equals_enumeration(mechs, x, name, measure) -> None:
    f = parse_function(name)
    w = accuracy_measure(measure, f.output_size(len(mechs)))
    result = observer_accuracy_on_input(mechs, np.array(x), f, w)
    assert result.exact and result.samples == 0
    assert result.value == pytest.approx(_enumerated(mechs, np.array(x), f, w), abs=1e-12)


def test_homogeneous_house_size_is_exact_and_matches_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    x = (rng.random(301) < 0.53).astype(int)
    mechs = [RandomizedResponse(0.8)] * 301
    f, w = parse_function("majority"), np.eye(2)
    exact = observer_accuracy_on_input(mechs, x, f, w)
    estimate = observer_accuracy_on_input(mechs, x, f, w, rng=rng, max_classes=1, mc_transcripts=4000)
    assert exact.exact and not estimate.exact and estimate.samples == 4000
    assert estimate.ci_low <= exact.value <= estimate.ci_high
    assert "Monte Carlo" in estimate.method


@pytest.mark.parametrize("n, ones, eps, name", [(301, 150, 0.8, "majority"), (300, 171, 0.2, "majority"),
                                                (250, 3, 1.5, "or"), (250, 249, 1.5, "and")])
def test_one_large_group_by_the_count_threshold_equals_the_enumeration(monkeypatch: pytest.MonkeyPatch, n: int,
                                                                       ones: int, eps: float, name: str) -> None:
    """Above COUNT_PATH_MIN one group of equal pure parties takes the count engine's threshold (O(n), exact);
    here the bound is lowered so the same input is also enumerated by count classes (the O(n^3) path)."""
    x = np.array([1] * ones + [0] * (n - ones))
    mechs, f, w = [RandomizedResponse(eps)] * n, parse_function(name), np.eye(2)
    enumerated = observer_accuracy_on_input(mechs, x, f, w)
    monkeypatch.setattr(theory, "COUNT_PATH_MIN", 200)
    by_count = observer_accuracy_on_input(mechs, x, f, w)
    assert "count classes" in enumerated.method and "count threshold" in by_count.method, by_count.method
    assert by_count.exact and by_count.value == pytest.approx(enumerated.value, abs=1e-12)


def test_fallback_needs_a_generator() -> None:
    mechs = [RandomizedResponse(e) for e in np.linspace(0.1, 2, 30)]
    with pytest.raises(ParameterError, match="rng"):
        observer_accuracy_on_input(mechs, np.ones(30, int), parse_function("majority"), np.eye(2))


def test_bad_input_vector() -> None:
    with pytest.raises(ParameterError, match="x="):
        observer_accuracy_on_input([RandomizedResponse(1.0)] * 3, np.array([1, 2, 0]),
                                   parse_function("majority"), np.eye(2))


def test_accuracy_stays_a_probability_when_probabilities_sum_to_one_plus_rounding() -> None:
    """Two (0.5, 0) parties, one yes, majority: the rule always says "failed", which is right, so the
    accuracy is exactly 1 (the unclamped sum of class probabilities was 1 + 2.2e-16)."""
    mechs = [RandomizedResponse(0.5)] * 2
    result = observer_accuracy_on_input(mechs, np.array([1, 0]), parse_function("majority"), np.eye(2))
    assert result.exact and result.value == 1.0


def test_the_cached_posteriors_of_a_pure_group_are_each_rows_convolution_and_read_only() -> None:
    """Row t of a pure group's posteriors is Bin(t, p) * Bin(n - t, 1 - p), computed here one t at a time;
    the cache hands out one read-only array per (n, p), so no round can change another's."""
    from scipy.stats import binom

    n, p = 40, RandomizedResponse(0.9).p_truth
    post = theory._pure_posteriors(n, p)
    for t in range(n + 1):
        row = np.convolve(binom.pmf(np.arange(t + 1), t, p), binom.pmf(np.arange(n - t + 1), n - t, 1.0 - p))
        assert np.allclose(post[t], row, rtol=1e-13, atol=0.0)
    assert theory._pure_posteriors(n, p) is post and not post.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        post[0, 0] = 1.0


def test_rounds_sharing_the_cached_posteriors_give_the_values_of_a_cold_cache_bit_for_bit() -> None:
    """Rounds of one run (same mechanisms, different inputs) read the cached posteriors; each value equals
    the one computed with an empty cache, to the bit; so does the first group taken as it is versus its
    combination with the empty group (the code before), with zero-probability classes dropped (epsilon 6)."""
    rng = np.random.default_rng(3)
    f, w = parse_function("majority"), np.eye(2)
    for mechs in ([RandomizedResponse(6.0)] * 150, [RandomizedResponse(0.4)] * 9 + [RandomizedResponse(1.3)] * 11):
        inputs = [rng.integers(0, 2, len(mechs)) for _ in range(4)]
        warm = [observer_accuracy_on_input(mechs, x, f, w) for x in inputs]
        for x, value in zip(inputs, warm):
            theory._pure_posteriors.cache_clear()
            cold = observer_accuracy_on_input(mechs, x, f, w)
            assert (cold.value, cold.tie_probability) == (value.value, value.tie_probability)
    prob, post = theory._pure_group(150, 140, RandomizedResponse(6.0).p_truth)
    keep = prob > 0
    assert not keep.all()  # classes of probability 0 (underflow) are dropped
    combined = theory._combine(np.ones(1), np.ones((1, 1)), prob[keep], post[keep])
    assert np.array_equal(combined[0], prob[keep]) and np.array_equal(combined[1], post[keep])
