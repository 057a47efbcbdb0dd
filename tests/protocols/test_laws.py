"""Laws that hold for every input (hypothesis): monotonicity in epsilon, normalization, party >= observer."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.decision.factors import Factor
from mpdp.protocols.functions import TruthTable, accuracy_measure, parse_function
from mpdp.protocols.numerics.kron import kron_matvec
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules

eps_st = st.floats(0.0, 4.0, allow_nan=False)
SETTINGS = settings(max_examples=25, deadline=None)


@st.composite
def problems(draw):
    k = draw(st.integers(1, 4))
    eps = draw(st.lists(eps_st, min_size=k, max_size=k))
    values = draw(st.lists(st.integers(0, 2), min_size=1 << k, max_size=1 << k))
    measure = draw(st.sampled_from(["zero-one", "absolute-error", "squared-error"]))
    return eps, TruthTable(tuple(values)), measure


@SETTINGS
@given(problems(), st.integers(0, 3), st.floats(0.0, 2.0))
def test_accuracy_non_decreasing_in_each_epsilon(problem, who, extra):
    eps, function, measure = problem
    k = len(eps)
    i = who % k
    w = accuracy_measure(measure, function.output_size(k))
    more = list(eps)
    more[i] += extra
    base = optimal_rules([RandomizedResponse(e) for e in eps], function, w)
    better = optimal_rules([RandomizedResponse(e) for e in more], function, w)
    assert better.average.average_accuracy >= base.average.average_accuracy - 1e-9
    assert better.worst_case.worst_case_accuracy >= base.worst_case.worst_case_accuracy - 1e-8


@SETTINGS
@given(problems(), st.integers(0, 3))
def test_party_at_least_observer(problem, who):
    eps, function, measure = problem
    k = len(eps)
    w = accuracy_measure(measure, function.output_size(k))
    mechs = [RandomizedResponse(e) for e in eps]
    central = optimal_rules(mechs, function, w)
    party = optimal_rules(mechs, function, w, observer=who % k)
    assert party.average.average_accuracy >= central.average.average_accuracy - 1e-9
    assert party.worst_case.worst_case_accuracy >= central.worst_case.worst_case_accuracy - 1e-8


@SETTINGS
@given(st.integers(1, 40), eps_st, st.floats(0.0, 0.5))
def test_likelihood_rows_and_posteriors_sum_to_one(n, eps, delta):
    for mech in (RandomizedResponse(eps), RandomizedResponse(eps, delta, four_output=True)):
        if mech.four_output and n > 12:
            continue
        f = Factor(tuple(range(n)), mech)
        assert np.allclose(f.forward.sum(axis=1), 1.0, atol=1e-12)
        assert np.allclose(f.posterior.sum(axis=0), 1.0, atol=1e-12)
        assert (f.forward >= 0).all()


@SETTINGS
@given(problems())
def test_worst_case_rule_is_a_distribution(problem):
    eps, function, measure = problem
    w = accuracy_measure(measure, function.output_size(len(eps)))
    rule = optimal_rules([RandomizedResponse(e) for e in eps], function, w, rule="worst-case").worst_case.rule
    for table in rule.tables:
        assert (table >= 0).all() and np.allclose(table.sum(axis=1), 1.0)


def test_kron_matvec_equals_dense_kron():
    rng = np.random.default_rng(0)
    mats = [rng.random((2, 4)), rng.random((3, 2)), rng.random((2, 2)), rng.random((5, 3))]
    x = rng.random((4 * 2 * 2 * 3, 3))
    dense = mats[0]
    for m in mats[1:]:
        dense = np.kron(dense, m)
    assert np.allclose(kron_matvec(mats, x), dense @ x)
    y = rng.random(2 * 3 * 2 * 5)
    assert np.allclose(kron_matvec(mats, y, transpose=True), dense.T @ y)


@pytest.mark.parametrize("eps", [0.0, 1000.0, float("inf")])
def test_extreme_epsilon_large_symmetric_group(eps):
    w = accuracy_measure("zero-one", 2)
    result = optimal_rules([RandomizedResponse(eps)] * 301, parse_function("majority"), w, rule="average")
    value = result.average.average_accuracy
    expected = 0.5 if eps == 0.0 else 1.0
    assert np.isfinite(value) and value == pytest.approx(expected, abs=1e-12)
