"""Corollary 3.1, its expansion and the collaborative XOR of 002 §3, against the engines and mpmath."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from mpdp.protocols.decision.closed_forms import (
    collaborative_xor_accuracy,
    collaborative_xor_expansion,
    corollary_3_1,
    xor_accuracy,
    xor_high_privacy_expansion,
)
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules

W = accuracy_measure("zero-one", 2)


@pytest.mark.parametrize("k,eps", [(1, 0.3), (4, 1.0), (7, 0.2), (12, 2.5)])
def test_corollary_3_1_equals_engines_both_accuracies(k, eps):
    result = optimal_rules([RandomizedResponse(eps)] * k, parse_function("xor"), W)
    lam = math.exp(eps)
    printed = sum(math.comb(k, 2 * i) * lam ** (k - 2 * i) for i in range(k // 2 + 1)) / (1 + lam) ** k
    assert corollary_3_1(k, eps) == pytest.approx(printed, abs=1e-13)
    for value in (result.average.average_accuracy, result.average.worst_case_accuracy,
                  result.worst_case.worst_case_accuracy):
        assert value == pytest.approx(printed, abs=1e-9)


def test_optimal_xor_decision_is_xor_of_reports():
    mechs = [RandomizedResponse(e) for e in (0.3, 1.0, 2.0, 0.6)]
    rule = optimal_rules(mechs, parse_function("xor"), W, rule="average", engine="general").average.rule
    taus = np.array([[(t >> (3 - i)) & 1 for i in range(4)] for t in range(16)], dtype=np.uint8)
    assert (rule.decide(taus) == taus.sum(axis=1) % 2).all()


def test_heterogeneous_four_output_product_form_for_a_party():
    mechs = [RandomizedResponse(0.5, 0.1, True), RandomizedResponse(1.0, 0.0, True),
             RandomizedResponse(2.0, 0.3, True)]
    for observer in (None, 0, 2):
        result = optimal_rules(mechs, parse_function("xor"), W, observer)
        known = () if observer is None else (observer,)
        expected = xor_accuracy([m.epsilon for m in mechs], [m.delta for m in mechs], known)
        assert result.average.average_accuracy == pytest.approx(expected, abs=1e-12)
        assert result.worst_case.worst_case_accuracy == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_high_privacy_expansion(k):
    for eps in (1e-2, 2e-3):
        err = abs(corollary_3_1(k, eps) - xor_high_privacy_expansion(k, eps))
        assert err <= 2 ** (-k) * eps ** (k + 1) + 1e-15  # O(eps^{k+1})


def test_collaboration_beats_separate_release():
    for k in (2, 3, 6):
        for eps in (0.1, 1.0, 3.0):
            assert collaborative_xor_accuracy(eps) > corollary_3_1(k, eps)


def test_collaborative_expansion_misprint_checked_two_ways():
    """002 §3 prints lambda/(1+lambda) = 0.5 + (1/4) eps^2 + O(eps^3); the linear term is eps/4."""
    # 1) exact Taylor series of e^x/(1+e^x) at 0 with mpmath: 1/2, 1/4, 0, -1/48
    coeffs = mpmath.taylor(lambda x: mpmath.exp(x) / (1 + mpmath.exp(x)), 0, 3)
    assert [float(c) for c in coeffs] == pytest.approx([0.5, 0.25, 0.0, -1 / 48], abs=1e-15)
    # 2) numerically: the excess over 1/2 is linear in eps, not quadratic
    for eps in (1e-2, 1e-3):
        excess = collaborative_xor_accuracy(eps) - 0.5
        assert excess / eps == pytest.approx(0.25, rel=1e-4)
        assert excess / eps**2 > 20  # the printed eps^2/4 would give 0.25
        assert abs(collaborative_xor_accuracy(eps) - collaborative_xor_expansion(eps)) < eps**3
