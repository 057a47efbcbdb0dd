"""The observer's posterior of f(x) and of the number of ones, against enumeration of all 2^k inputs."""

import itertools
import math

import numpy as np
import pytest

from mpdp.analysis.theory.observer_posterior import round_posterior
from mpdp.protocols import ParameterError, RandomizedResponse
from mpdp.protocols.functions import parse_function

MECHANISMS = [RandomizedResponse(0.7), RandomizedResponse(1.5, 0.1), RandomizedResponse(0.0),
              RandomizedResponse(3.0), RandomizedResponse(0.2, 0.3)]


def _brute_force(mechanisms, function, tau):
    """P(f(x) = y | tau) and E[|x| | tau] under the uniform prior, by enumerating x (002 eq. 1)."""
    k = len(mechanisms)
    out, ones, total = np.zeros(function.output_size(k)), 0.0, 0.0
    for x in itertools.product([0, 1], repeat=k):
        like = math.prod(m.channel[xi, t] for m, xi, t in zip(mechanisms, x, tau, strict=True))
        out[function(np.array(x))] += like
        ones += like * sum(x)
        total += like
    return out / total, ones / total


@pytest.mark.parametrize("name", ["majority", "sum", "xor", "threshold:2"])
def test_matches_enumeration_on_every_transcript(name: str) -> None:
    function = parse_function(name)
    taus = np.array(list(itertools.product(*[range(m.num_symbols) for m in MECHANISMS])), dtype=np.uint8)
    got = round_posterior(MECHANISMS, function, taus)
    for r, tau in enumerate(taus):
        output, ones = _brute_force(MECHANISMS, function, tau)
        np.testing.assert_allclose(got.output[r], output, rtol=0, atol=1e-12)
        assert got.expected_ones[r] == pytest.approx(ones, abs=1e-12)
    decisions = got.output.argmax(axis=1)
    assert np.array_equal(got.of(decisions), got.output.max(axis=1))


def test_extreme_epsilons_give_no_nan() -> None:
    mechanisms = [RandomizedResponse(math.inf), RandomizedResponse(1000.0), RandomizedResponse(0.0)]
    got = round_posterior(mechanisms, parse_function("majority"), np.array([[1, 1, 0], [0, 1, 1]], np.uint8))
    assert np.isfinite(got.output).all() and np.allclose(got.output.sum(axis=1), 1.0)
    # two certain reports and a coin: ones = 2 + 1/2, resp. 1 + 1/2; majority of 3 certain when both are 1
    np.testing.assert_allclose(got.expected_ones, [2.5, 1.5])
    np.testing.assert_allclose(got.output, [[0.0, 1.0], [0.5, 0.5]], atol=1e-300)


def test_bad_input_is_named() -> None:
    with pytest.raises(ParameterError, match="symmetric"):
        round_posterior(MECHANISMS[:2], parse_function("table:0,1,0,0"), np.zeros((1, 2), np.uint8))
    with pytest.raises(ParameterError, match="shape"):
        round_posterior(MECHANISMS, parse_function("sum"), np.zeros((1, 2), np.uint8))
    with pytest.raises(ParameterError, match="symbols"):
        round_posterior(MECHANISMS[:1], parse_function("sum"), np.array([[2]], np.uint8))
