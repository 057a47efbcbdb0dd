"""analysis.debiased: the debiased count, checked by exact enumeration, and against the optimal rule."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from mpdp.analysis.debiased import (
    debiased_figure,
    debiased_sum,
    debiasing_table,
    expected_absolute_error,
    optimal_sum_error,
)
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.mechanisms import RandomizedResponse

MECHS = [RandomizedResponse(0.7), RandomizedResponse(1.5, 0.2, four_output=True), RandomizedResponse(3.0)]


@pytest.mark.parametrize("mech", [RandomizedResponse(0.3), RandomizedResponse(2.0),
                                  RandomizedResponse(1.0, 0.1, four_output=True)])
def test_each_party_is_unbiased_with_the_stated_variance(mech: RandomizedResponse) -> None:
    g, variance = debiasing_table(mech)
    m = mech.channel
    assert m @ g == pytest.approx([0.0, 1.0], abs=1e-12)  # E[g | x] = x
    assert m @ g**2 - np.array([0.0, 1.0]) == pytest.approx([variance, variance], rel=1e-12)
    p = math.exp(mech.epsilon) / (1 + math.exp(mech.epsilon))
    assert variance == pytest.approx((1 - mech.delta) * p * (1 - p) / (2 * p - 1) ** 2, rel=1e-12)


def test_the_sum_is_unbiased_over_every_transcript() -> None:
    """Exact expectation over all transcripts for every input x of three mixed parties."""
    for x in itertools.product([0, 1], repeat=3):
        mean = 0.0
        for tau in itertools.product(*[range(m.num_symbols) for m in MECHS]):
            prob = math.prod(m.channel[xi, t] for m, xi, t in zip(MECHS, x, tau))
            mean += prob * debiased_sum(MECHS, list(tau)).estimate
        assert mean == pytest.approx(sum(x), abs=1e-12)
    result = debiased_sum(MECHS, [1, 3, 0])
    assert result.standard_error == pytest.approx(math.sqrt(sum(debiasing_table(m)[1] for m in MECHS)))
    lo, hi = result.interval
    assert lo < result.estimate < hi and hi - lo == pytest.approx(2 * 1.959963984540054 * result.standard_error)
    assert 0 <= result.clipped <= 3 and result.as_dict()["post_processed"]["clipped"] == result.clipped


def test_epsilon_zero_is_a_clear_error_or_left_out() -> None:
    mechs = [RandomizedResponse(1.0), RandomizedResponse(0.0)]
    with pytest.raises(ParameterError, match="party 1 epsilon"):
        debiased_sum(mechs, [1, 0])
    result = debiased_sum(mechs, [1, 0], leave_out_uninformative=True)
    assert result.excluded == (1,) and result.included == 1
    assert result.estimate == pytest.approx(debiasing_table(mechs[0])[0][1])


@pytest.mark.parametrize("clipped", [False, True])
def test_expected_absolute_error_by_enumeration(clipped: bool) -> None:
    k, eps = 4, 0.8
    mech = RandomizedResponse(eps)
    g = debiasing_table(mech)[0]
    total = 0.0
    for x in itertools.product([0, 1], repeat=k):
        for tau in itertools.product([0, 1], repeat=k):
            prob = math.prod(mech.channel[xi, t] for xi, t in zip(x, tau)) / 2**k
            est = sum(g[t] for t in tau)
            if clipped:
                est = min(max(round(est), 0), k)
            total += prob * abs(est - sum(x))
    assert expected_absolute_error(k, eps, post_processed=clipped) == pytest.approx(total, rel=1e-12)


def test_the_figure_shows_the_computed_values_and_the_optimal_rule_is_never_worse(tmp_path) -> None:
    eps = [0.25, 1.0, 3.0]
    fig = debiased_figure(6, eps, tmp_path / "debiased.png")
    data = fig.mpdp_data
    assert (tmp_path / "debiased.png").stat().st_size > 0
    for i, e in enumerate(eps):
        assert data["debiased"][i] == pytest.approx(expected_absolute_error(6, e))
        assert data["optimal_rule"][i] == pytest.approx(optimal_sum_error(6, e))
        # the clipped estimator is one rule with outputs in 0..k; the optimal rule minimizes over all
        assert data["optimal_rule"][i] <= data["debiased_clipped"][i] + 1e-12
    plotted = fig.axes[0].lines[0].get_ydata()
    assert list(plotted) == pytest.approx(data["optimal_rule"])
