"""The one-edge step map of 001 eq. (1) and its closed-form iterates, against a brute-force loop."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.colorings.coloring_steps import ColoringStep
from mpdp.protocols.errors import ParameterError


def _brute_step(t: float, eps: float, delta: float) -> float:
    if math.isinf(eps):
        return 1.0
    if eps > 700:  # a t + delta >= 1 for any t > 0 representable
        return 1.0 if t > 0 else min(1.0, delta)
    a = math.exp(eps)
    return min(1.0, a * t + delta, (t + a - 1 + delta) / a)


def _brute_iterate(t: float, n: int, eps: float, delta: float) -> float:
    for _ in range(n):
        t = _brute_step(t, eps, delta)
    return t


@pytest.mark.parametrize("eps, delta", [(0.3, 0.1), (0.0, 0.1), (0.0, 0.0), (2.0, 0.0), (1000.0, 0.1),
                                        (math.inf, 0.2), (1e-9, 0.01), (1000.0, 0.0), (1e-300, 0.1)])
def test_iterate_matches_the_loop_at_extreme_parameters(eps: float, delta: float) -> None:
    step = ColoringStep(eps, delta)
    t = np.concatenate([[0.0, 1.0, 1e-310, step.theta], np.linspace(0, 1, 23)])
    for n in range(0, 25):
        got = step.iterate(t, n)
        want = [_brute_iterate(float(x), n, eps, delta) for x in t]
        np.testing.assert_allclose(got, want, atol=1e-12, rtol=0)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.0, 5.0), delta=st.floats(0.0, 0.9), t=st.floats(0.0, 1.0), n=st.integers(0, 40))
def test_iterate_is_the_n_fold_step(eps: float, delta: float, t: float, n: int) -> None:
    step = ColoringStep(eps, delta)
    assert float(step.iterate(t, n)) == pytest.approx(_brute_iterate(t, n, eps, delta), abs=1e-10)


@settings(max_examples=60, deadline=None)
@given(eps=st.floats(0.01, 5.0), delta=st.floats(0.001, 0.9), t=st.floats(0.0, 1.0))
def test_abel_function_counts_steps(eps: float, delta: float, t: float) -> None:
    step = ColoringStep(eps, delta)
    nxt = float(step(t))
    if nxt < 1.0:
        assert float(step.abel(nxt)) == pytest.approx(float(step.abel(t)) + 1.0, abs=1e-8)


def test_step_is_the_two_dp_inequalities() -> None:
    # R_d <= a R_d' + delta and (1 - R_d') <= a (1 - R_d) + delta, tight at step(R_d')
    eps, delta = math.log(2), 0.1
    step = ColoringStep(eps, delta)
    for r in np.linspace(0, 1, 11):
        top = float(step(r))
        assert top <= 2 * r + delta + 1e-15 and (1 - r) <= 2 * (1 - top) + delta + 1e-15
        assert top == 1.0 or math.isclose(top, 2 * r + delta) or math.isclose(1 - r, 2 * (1 - top) + delta)


def test_transition_point_separates_the_regimes() -> None:
    step = ColoringStep(math.log(1.3), 0.1)
    assert step.theta == pytest.approx(0.9 / 2.3)
    assert float(step.regime_one_steps(0.2)) == 2  # 0.2 -> 0.36 -> 0.568 > theta
    assert float(step.regime_one_steps(0.5)) == 0


@pytest.mark.parametrize("eps, delta", [(-1.0, 0.0), (float("nan"), 0.0), (1.0, 1.0), (1.0, -0.1)])
def test_bad_privacy_levels_are_refused(eps: float, delta: float) -> None:
    with pytest.raises(ParameterError):
        ColoringStep(eps, delta)



@pytest.mark.parametrize("delta", [0.0, 0.2])
def test_huge_epsilon_iterates_without_overflow(delta: float) -> None:
    # n eps overflows float64 for eps = 1e308, n >= 2; step(t) = min(1, a t + delta, ...) with a = e^eps:
    # any t > 0 reaches 1 in one step, t = 0 moves to delta (then to 1), or stays at 0 when delta = 0
    t = np.array([0.0, 1e-300, 0.3, 0.7, 1.0])
    for epsilon in (1e200, 1e308):
        step = ColoringStep(epsilon, delta)
        for n in (1, 2, 5, 10**6):
            first = delta if n == 1 else (1.0 if delta > 0 else 0.0)
            assert step.iterate(t, n).tolist() == pytest.approx([first, 1.0, 1.0, 1.0, 1.0], abs=1e-15)
        assert step.terminal(np.array([0.5, 0.9]), np.array([3.0, 10**6])).tolist() == [1.0, 1.0]
