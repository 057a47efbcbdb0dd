"""XOR under floating-point near-ties (issue 12 item 5), the certified worst case (issue 10 items 6, 8)."""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.decision.closed_forms import corollary_3_1, xor_accuracy
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.parties.cli.invoke import ok

W = accuracy_measure("zero-one", 2)
XOR = parse_function("xor")


def _truth(k: int, eps: float) -> mpmath.mpf:
    with mpmath.workdps(60):
        return (1 + mpmath.tanh(mpmath.mpf(eps) / 2) ** k) / 2


@pytest.mark.parametrize("k,eps", [(14, 0.1), (20, 0.01), (16, 1e-3), (12, 0.5)])
def test_general_engine_rule_is_xor_where_the_sums_cancel(k, eps):
    result = optimal_rules([RandomizedResponse(eps)] * k, XOR, W, rule="average", engine="general").average
    taus = np.random.default_rng(k).integers(0, 2, (4096, k), dtype=np.uint8)
    assert (result.rule.decide(taus) == taus.sum(axis=1) % 2).all()
    assert result.worst_case_accuracy >= 0.5 and result.average_accuracy >= 0.5
    assert result.worst_case_accuracy == pytest.approx(float(_truth(k, eps)), abs=1e-15)


@pytest.mark.parametrize("k", [2, 15, 30, 40, 64])
@pytest.mark.parametrize("eps", [1e-3, 0.1, 1.0])
def test_symmetric_engine_xor_accuracy_at_least_a_coin(k, eps):
    result = optimal_rules([RandomizedResponse(eps)] * k, XOR, W, rule="average").average
    truth = float(_truth(k, eps))
    assert result.average_accuracy >= 0.5 and result.worst_case_accuracy >= 0.5
    assert result.average_accuracy == pytest.approx(truth, rel=1e-14)
    assert result.worst_case_accuracy == pytest.approx(truth, rel=1e-14)
    reports = np.random.default_rng(0).integers(0, 2, (512, k), dtype=np.uint8)
    assert (result.rule.decide(reports) == reports.sum(axis=1) % 2).all()


def test_party_and_four_output_xor_in_product_form():
    mechs = [RandomizedResponse(0.05, 0.01, four_output=True)] * 6 + [RandomizedResponse(0.05)] * 0
    party = optimal_rules([RandomizedResponse(0.01)] * 12, XOR, W, observer=4, rule="average").average
    assert party.worst_case_accuracy == pytest.approx(xor_accuracy([0.01] * 12, known=(4,)), abs=1e-16)
    assert party.worst_case_accuracy >= 0.5
    four = optimal_rules(mechs, XOR, W, rule="average", engine="general").average
    assert four.worst_case_accuracy == pytest.approx(xor_accuracy([0.05] * 6, [0.01] * 6), abs=1e-15)
    symbols = np.array(list(itertools.product(range(4), repeat=6)), dtype=np.uint8)
    # the XOR of the bits the symbols point to: 0 and 1 mean bit 0, 2 and 3 mean bit 1
    assert (four.rule.decide(symbols) == (symbols >= 2).sum(axis=1) % 2).all()


def test_cli_issue_command_reports_a_coin_not_zero(capsys):
    doc = ok(capsys, "accuracy", "--epsilon", "0.1*14", "--function", "xor", "--engine", "general",
             "--rule", "average", "--json")
    assert doc["rules"]["average"]["worst_case_accuracy"] == 0.5


@settings(max_examples=200, deadline=None)
@given(k=st.integers(1, 64), eps=st.floats(1e-3, 10.0))
def test_corollary_3_1_is_at_least_a_coin_and_exact(k, eps):
    value = corollary_3_1(k, eps)
    assert value >= 0.5
    assert value == pytest.approx(float(_truth(k, eps)), rel=2e-16 * (k + 4))


@pytest.mark.parametrize("k", [30, 40])
def test_worst_case_xor_never_below_a_coin_and_certified(k):
    # issue 10 item 6: the LP stopped at 0.499999999187 (its tolerance); the feasible average rule bounds it
    result = optimal_rules([RandomizedResponse(0.1)] * k, XOR, W, rule="both")
    wc = result.worst_case
    assert wc.worst_case_accuracy >= 0.5
    assert wc.worst_case_accuracy >= result.average.worst_case_accuracy
    assert wc.upper_bound is not None and wc.upper_bound >= wc.worst_case_accuracy
    assert wc.upper_bound - wc.worst_case_accuracy < 1e-8
    assert wc.worst_case_accuracy == pytest.approx(float(_truth(k, 0.1)), abs=1e-15)


@pytest.mark.parametrize("engine", ["general", "symmetric"])
def test_accuracies_never_leave_the_measure_range(engine):
    # issue 10 item 8: majority at epsilon 37 summed to 1.0000000000000009 before the clip
    for k, eps in ((4, 37.0), (5, 37.0), (5, 40.0), (5, 100.0)):
        result = optimal_rules([RandomizedResponse(eps)] * k, parse_function("majority"), W, engine=engine)
        for rep in (result.average, result.worst_case):
            assert 0.0 <= rep.worst_case_accuracy <= rep.average_accuracy <= 1.0
            assert rep.average_accuracy == pytest.approx(1.0, abs=1e-12)
    assert math.isclose(corollary_3_1(3, 1e9), 1.0)


@pytest.mark.parametrize("k,eps", [(30, 0.1), (435, 1.0), (64, 1e-3)])
def test_posterior_rule_and_live_theory_are_xor_at_large_k(k, eps):
    from mpdp.analysis.theory.theory import observer_accuracy_on_input
    from mpdp.protocols.rules.symmetric import observer_average_rule

    mechs = [RandomizedResponse(eps)] * k
    rule = observer_average_rule(mechs, XOR, W)
    reports = np.random.default_rng(k).integers(0, 2, (256, k), dtype=np.uint8)
    assert (rule.decide(reports) == reports.sum(axis=1) % 2).all()
    party = observer_average_rule(mechs, XOR, W, observer=2)
    bits = reports[:, 0]
    expected = (np.delete(reports, 2, axis=1).sum(axis=1) + bits) % 2
    assert (party.decide(reports, own_bits=bits) == expected).all()
    x = np.random.default_rng(1).integers(0, 2, k)
    theory = observer_accuracy_on_input(mechs, x, XOR, W)
    assert theory.exact and theory.value >= 0.5 and theory.tie_probability == 0.0
    assert theory.value == pytest.approx(float(_truth(k, eps)), abs=1e-15)
    # brute force at k = 5: sum P(reports | x) over the 32 report vectors where the rule is right
    five = [RandomizedResponse(e) for e in (0.2, 0.5, 1.0, 2.0, 0.05)]
    xs = np.array([1, 0, 1, 1, 0])
    reps = np.array(list(itertools.product((0, 1), repeat=5)), dtype=np.uint8)
    probs = np.prod([[m.channel[xi, r] for m, xi, r in zip(five, xs, row)] for row in reps], axis=1)
    right = observer_average_rule(five, XOR, W).decide(reps) == xs.sum() % 2
    assert observer_accuracy_on_input(five, xs, XOR, W).value == pytest.approx(float(probs[right].sum()),
                                                                               abs=1e-15)
