"""The error measures' closed forms (posterior mean / median, one-group accuracy pass) against the dense
|Y| x |Y| table path and brute force: the same decisions and accuracies (mpdp.protocols.decision.error_rules)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.protocols.decision.engines import build_problem, view_accuracy
from mpdp.protocols.functions import accuracy_measure, error_measure, measure_bounds, parse_function
from mpdp.protocols.numerics.kron import kron_matvec
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.protocols import brute

MEASURES = ("squared-error", "absolute-error")
#: Two outputs' expected gains this close (relative to the measure's scale) are a tie: either is optimal,
#: and the float sums of the dense path may order them either way (an exact half, a CDF of exactly 1/2).
TIE = 1e-12


def _dense_expected(problem, view_index):
    """The dense path's expected gain of every output on every transcript class, (classes, |Y|)."""
    view = problem.views[view_index]
    return kron_matvec([f.posterior for f in view.factors], view.gain, transpose=True)


def _compare(mechs, fname, mname, observer, engine):
    f = parse_function(fname)
    k = len(mechs)
    size = f.output_size(k)
    dense = optimal_rules(mechs, f, accuracy_measure(mname, size), observer, "average", engine, time_limit=None)
    closed = optimal_rules(mechs, f, error_measure(mname, size), observer, "average", engine, time_limit=None)
    assert closed.engine == dense.engine
    scale = max(1.0, abs(measure_bounds(accuracy_measure(mname, size))[0]))
    tied_anywhere = False
    for v, (ours, theirs) in enumerate(zip(closed.average.rule.tables, dense.average.rule.tables, strict=True)):
        expected = _dense_expected(dense.problem, v)
        best = expected.max(axis=1)
        near = expected >= best[:, None] - TIE * scale
        tied = near.sum(axis=1) > 1
        tied_anywhere |= bool(tied.any())
        np.testing.assert_array_equal(ours[~tied], theirs[~tied])
        assert near[np.arange(ours.size), ours].all()  # a tie: one of the maximizers, as the dense one
        # the one-group pass and the column sums of the dense path agree on any table
        np.testing.assert_allclose(view_accuracy(closed.problem.views[v], ours),
                                   view_accuracy(dense.problem.views[v], ours), rtol=1e-12, atol=1e-13 * scale)
    assert closed.average.average_accuracy == pytest.approx(dense.average.average_accuracy, rel=1e-12,
                                                            abs=1e-13 * scale)
    if not tied_anywhere:  # a tie decided the other way moves some input's accuracy, not the average
        assert closed.average.worst_case_accuracy == pytest.approx(dense.average.worst_case_accuracy, rel=1e-12,
                                                                   abs=1e-13 * scale)


EPSILONS = st.one_of(st.sampled_from([0.0, float("inf"), 1000.0]), st.floats(0.01, 6.0))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(EPSILONS, st.sampled_from([0.0, 0.0, 0.1])), min_size=1, max_size=8),
       st.sampled_from(MEASURES), st.sampled_from(["auto", "general", "symmetric"]), st.data())
def test_closed_forms_equal_the_dense_table(params, mname, engine, data):
    four = any(d > 0 for _, d in params)
    mechs = [RandomizedResponse(e, d, four_output=four) for e, d in params]
    observer = data.draw(st.one_of(st.none(), st.integers(0, len(mechs) - 1)))
    _compare(mechs, "sum", mname, observer, engine)


@pytest.mark.parametrize("mname", MEASURES)
@pytest.mark.parametrize("observer", [None, 0])
def test_closed_forms_equal_the_dense_table_on_a_band(mname, observer):
    # 2,101 parties of one epsilon: a banded likelihood (above PURE_GROUP_DENSE_MAX) for both observers
    _compare([RandomizedResponse(1.0)] * 2101, "sum", mname, observer, "symmetric")


def test_squared_error_of_a_band_beside_a_second_group():
    # several groups, one of them banded: the additive decomposition's Kronecker products with a CSR factor
    mechs = [RandomizedResponse(1.0)] * 2001 + [RandomizedResponse(2.0)]
    _compare(mechs, "sum", "squared-error", None, "symmetric")


@pytest.mark.parametrize("mname", MEASURES)
@pytest.mark.parametrize("fname", ["majority", "threshold:2", "table:0,2,1,3,1,0,2,2"])
def test_other_functions_take_the_formula_too(fname, mname):
    mechs = [RandomizedResponse(e) for e in (0.4, 1.3, 2.2)]
    for observer in (None, 1):
        _compare(mechs, fname, mname, observer, "auto")


@pytest.mark.parametrize("eps,delta,mname,observer", [
    ([0.5, 0.5, 1.0, 2.0], [0, 0, 0, 0], "squared-error", 2),
    ([0.4, 0.9, 0.4], [0.1, 0.0, 0.1], "absolute-error", 0),
    ([0.3, 1.7, 0.9, 2.5, 1.1], [0, 0, 0, 0, 0], "absolute-error", None),
    ([0.3, 1.7, 0.9, 2.5, 1.1], [0, 0, 0, 0, 0], "squared-error", None),
])
def test_closed_forms_equal_brute_force(eps, delta, mname, observer):
    four = any(d > 0 for d in delta)
    mechs = [RandomizedResponse(e, d, four_output=four) for e, d in zip(eps, delta)]
    f = parse_function("sum")
    k = len(mechs)
    avg, worst, _ = brute.observer_values([m.channel for m in mechs], f.truth_table(k),
                                          accuracy_measure(mname, k + 1), observer)
    for engine in ("general", "symmetric"):
        result = optimal_rules(mechs, f, error_measure(mname, k + 1), observer, "average", engine).average
        assert result.average_accuracy == pytest.approx(avg, rel=1e-12)
        assert result.worst_case_accuracy == pytest.approx(worst, rel=1e-12)


def test_known_values_one_party():
    # one party at epsilon: report r, P(x = r | r) = p = e^eps / (1 + e^eps); the posterior mean p r + q (1 - r)
    # rounds to r (p > 1/2), and so does the median: accuracy -P(wrong) = -q for both measures
    eps = 1.0
    q = 1.0 / (1.0 + np.exp(eps))
    for mname in MEASURES:
        rules = optimal_rules([RandomizedResponse(eps)], parse_function("sum"), error_measure(mname, 2), None,
                              "average").average
        np.testing.assert_array_equal(rules.rule.tables[0], [0, 1])
        assert rules.average_accuracy == pytest.approx(-q, rel=1e-14)


def test_epsilon_zero_ties_go_to_the_smaller_output():
    # no information: the posterior is Binomial(k, 1/2), mean k/2 and CDF(floor(k/2)) = 1/2 for odd k: both
    # rules answer the smaller of the two middle counts, on every transcript
    k = 5
    for mname in MEASURES:
        rules = optimal_rules([RandomizedResponse(0.0)] * k, parse_function("sum"), error_measure(mname, k + 1),
                              None, "average").average
        assert set(rules.rule.tables[0].tolist()) == {2}


def test_no_table_in_the_estimate_or_the_problem():
    # sum of 10^5 parties: w would be 10^10 float64 (80 GB); the formula's estimate counts vectors of k + 1 and
    # the band's blocks (read as it is made, never held)
    mechs = [RandomizedResponse(1.0)] * 100_000
    f = parse_function("sum")
    table = symmetric_rule_cost(mechs, f)
    formula = symmetric_rule_cost(mechs, f, measure="squared-error")
    assert table is not None and formula is not None
    assert table.memory_bytes > 4 * 8.0 * 100_001**2  # the four |Y|-column tables
    assert formula.memory_bytes < 0.5e9 and formula.seconds < table.seconds / 100
    problem = build_problem([RandomizedResponse(1.0)] * 50, f, error_measure("absolute-error", 51))
    assert problem.measure == error_measure("absolute-error", 51)
    assert not problem.views[0]._gain  # no gain table built by the average rule
    closed = optimal_rules([RandomizedResponse(1.0)] * 50, f, problem.measure, None, "average")
    assert not closed.problem.views[0]._gain
