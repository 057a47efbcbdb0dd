"""Interactive protocols: the transcript matrix, exact privacy of each view, optimal accuracy of any P."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.interactive.interactive import (
    InteractiveProtocol,
    random_protocol,
    repeated_response,
    view_delta,
    view_epsilon,
)
from mpdp.protocols.interactive.transcript_rules import transcript_accuracy
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.protocols import brute


def test_transcript_matrix_of_a_hand_built_interactive_protocol() -> None:
    # party 0 sends RR(eps) of its bit; party 1 repeats what it heard if its bit is 1, else flips it
    p = math.exp(1.0) / (1 + math.exp(1.0))
    first = RandomizedResponse(1.0).channel[None]  # (1, 2, 2)
    second = np.array([[[0.9, 0.1], [0.1, 0.9]], [[0.1, 0.9], [0.9, 0.1]]])
    proto = InteractiveProtocol(2, 2, (first, second))
    matrix = proto.transcript_matrix()
    # x = (1, 0) -> tau = (1, 0): party 0 says 1 (prob p), party 1 with bit 0 after prefix 1 says 0 (0.1)
    assert matrix[0b10, 0b10] == pytest.approx(p * 0.1, abs=1e-15)
    assert matrix[0b01, 0b00] == pytest.approx(p * 0.1, abs=1e-15)
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-15)
    # party 1's view is exactly log(9)-DP (its channel's ratio), party 0's exactly eps = 1
    assert view_epsilon(matrix, 2, 1) == pytest.approx(math.log(9.0), abs=1e-12)
    assert view_epsilon(matrix, 2, 0) == pytest.approx(1.0, abs=1e-12)


def test_non_interactive_protocol_is_the_product_of_channels() -> None:
    eps = [0.3, 1.1, 0.7]
    proto = repeated_response(eps, rounds=1)
    np.testing.assert_allclose(proto.transcript_matrix(),
                               brute.likelihood([RandomizedResponse(e).channel for e in eps]), atol=1e-15)


@pytest.mark.parametrize("rounds", [1, 2, 3])
def test_repeated_response_spends_rounds_times_epsilon(rounds: int) -> None:
    eps = [0.4, 0.9]
    matrix = repeated_response(eps, rounds).transcript_matrix()
    for i, e in enumerate(eps):  # r agreeing copies: likelihood ratio e^(r eps)
        assert view_epsilon(matrix, 2, i) == pytest.approx(rounds * e, rel=1e-12)


@pytest.mark.parametrize("eps, delta", [(0.5, 0.1), (1.3, 0.02), (0.0, 0.3)])
def test_view_delta_of_four_output_response(eps: float, delta: float) -> None:
    rr = RandomizedResponse(eps, delta)
    matrix = InteractiveProtocol(1, 4, (rr.channel[None],)).transcript_matrix()
    assert view_delta(matrix, 1, 0, eps) == pytest.approx(delta, abs=1e-15)
    assert view_epsilon(matrix, 1, 0) == math.inf  # symbols 0 and 3 reveal the bit
    # at epsilon 0 the criterion is the total variation distance: delta + (1 - delta) tanh(eps / 2)
    assert view_delta(matrix, 1, 0, 0.0) == pytest.approx(delta + (1 - delta) * math.tanh(eps / 2), abs=1e-15)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(1, 3), with_delta=st.booleans())
def test_random_protocols_stay_within_their_budgets(seed: int, k: int, with_delta: bool) -> None:
    rng = np.random.default_rng(seed)
    budgets = rng.uniform(0.0, 2.0, k)
    deltas = rng.uniform(0.0, 0.2, k) if with_delta else None
    proto = random_protocol(budgets, rng, deltas=deltas, rounds=2, symbols=4 if with_delta else 3)
    matrix = proto.transcript_matrix()
    np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=1e-12)
    for i in range(k):
        if deltas is None:
            assert view_epsilon(matrix, k, i) <= budgets[i] + 1e-12
        else:
            assert view_delta(matrix, k, i, budgets[i]) <= deltas[i] + 1e-12


def test_protocol_is_interactive() -> None:
    # the second message's channel differs across prefixes (a fresh garbling per prefix)
    proto = random_protocol([1.0, 1.0], np.random.default_rng(3), rounds=2)
    assert not np.allclose(proto.channels[1][0], proto.channels[1][1])


@pytest.mark.parametrize("seed", range(4))
def test_transcript_accuracy_matches_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    channels = [RandomizedResponse(e).channel @ rng.dirichlet(np.ones(3), size=2) for e in rng.uniform(0.2, 2, k)]
    table = rng.integers(0, 3, 1 << k)
    w = accuracy_measure("absolute-error", 3)
    matrix = brute.likelihood(channels)
    for observer in [None, *range(k)]:
        avg, _, lp = brute.observer_values(channels, table, w, observer)
        got = transcript_accuracy(matrix, table, w, observer)
        assert got.average == pytest.approx(avg, abs=1e-12)
        assert got.worst_case == pytest.approx(lp, abs=1e-9)
        assert got.worst_case - 1e-12 <= got.upper_bound and got.upper_bound == pytest.approx(lp, abs=1e-8)


def test_transcript_accuracy_of_xor_is_corollary_3_1() -> None:
    eps = [0.5, 1.0, 1.5]
    xor = parse_function("xor")
    got = transcript_accuracy(repeated_response(eps, 1).transcript_matrix(), xor.truth_table(3), np.eye(2))
    expected = 0.5 + 0.5 * np.prod(np.tanh(np.array(eps) / 2))  # XOR seen through three binary symmetric channels
    assert got.average == pytest.approx(expected, abs=1e-14)
    assert got.worst_case == pytest.approx(expected, abs=1e-9)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ParameterError, match="channels"):
        InteractiveProtocol(2, 2, (np.full((1, 2, 2), 0.5),))  # one message for two parties
    with pytest.raises(ParameterError, match=r"channels\[0\]"):
        InteractiveProtocol(1, 2, (np.full((1, 2, 2), 0.7),))
    with pytest.raises(SizeLimitError):
        random_protocol([1.0] * 4, np.random.default_rng(0), rounds=3, symbols=3)
    with pytest.raises(ParameterError, match="symbols"):
        random_protocol([1.0], np.random.default_rng(0), deltas=[0.1], symbols=3)
    with pytest.raises(ParameterError, match="party"):
        view_epsilon(np.full((4, 2), 0.5), 2, 2)
    with pytest.raises(ParameterError, match="observer"):
        transcript_accuracy(np.full((4, 2), 0.5), np.array([0, 1, 1, 0]), np.eye(2), observer=5)
