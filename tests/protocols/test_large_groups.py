"""Large homogeneous groups: the banded likelihood equals the dense one; decisions equal the posterior rule."""

from __future__ import annotations

import numpy as np
import pytest

import mpdp.protocols.decision.factors as factors
from mpdp.protocols.decision.factors import banded_count_likelihood, pure_count_likelihood
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.symmetric import observer_average_rule


@pytest.mark.parametrize("n,eps", [(900, 0.1), (700, 0.0), (800, 4.0)])
def test_banded_equals_dense(n, eps):
    dense = pure_count_likelihood(n, eps)
    assert np.abs(banded_count_likelihood(n, eps).toarray() - dense).max() < 1e-14


def test_banded_engine_equals_dense_engine_and_posterior_rule(monkeypatch):
    k = 1201
    mechs = [RandomizedResponse(0.2)] * k
    f, w = parse_function("majority"), accuracy_measure("zero-one", 2)
    dense = optimal_rules(mechs, f, w, rule="average").average
    monkeypatch.setattr(factors, "PURE_GROUP_DENSE_MAX", 100)
    banded = optimal_rules(mechs, f, w, rule="average").average
    assert banded.average_accuracy == pytest.approx(dense.average_accuracy, abs=1e-12)
    assert banded.worst_case_accuracy == pytest.approx(dense.worst_case_accuracy, abs=1e-12)
    assert (banded.rule.tables[0] == dense.rule.tables[0]).all()
    counts = np.array([0, 300, 590, 600, 601, 610, 900, 1201])
    symbols = (np.arange(k)[None, :] < counts[:, None]).astype(np.uint8)
    assert (banded.rule.decide(symbols) == observer_average_rule(mechs, f, w).decide(symbols)).all()
