"""Exact accuracy of any rule (average, worst case, one input) and the labelled Monte Carlo estimate."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mpdp.analysis.theory.accuracy import input_accuracy, monte_carlo_accuracy, rule_accuracy
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.protocols import brute

MECHS = [RandomizedResponse(e) for e in (0.3, 1.2, 0.3, 0.7)]


@pytest.mark.parametrize("observer", [None, 0, 3])
@pytest.mark.parametrize("engine", ["general", "symmetric"])
def test_rule_and_input_accuracy_equal_brute_force(observer, engine):
    f, w = parse_function("sum"), accuracy_measure("squared-error", 5)
    result = optimal_rules(MECHS, f, w, observer, "both", engine)
    p = brute.likelihood([m.channel for m in MECHS])
    gain = w[f.truth_table(4)]
    taus = np.array(list(itertools.product([0, 1], repeat=4)), dtype=np.uint8)
    xs = np.array(list(itertools.product([0, 1], repeat=4)))
    for report in (result.average, result.worst_case):
        rule = report.rule
        acc = rule_accuracy(rule, f, w)
        assert acc.exact and acc.average == pytest.approx(report.average_accuracy, abs=1e-12)
        per_x = []
        for x in xs:
            own = None if observer is None else x[observer]
            q = rule.probabilities(taus, None if own is None else np.full(len(taus), own))
            per_x.append(p[int("".join(map(str, x)), 2)] @ (q @ w[f(x)]))
        assert acc.average == pytest.approx(np.mean(per_x), abs=1e-12)
        assert acc.worst_case == pytest.approx(np.min(per_x), abs=1e-12)
        for x, value in zip(xs[::5], per_x[::5]):
            assert input_accuracy(rule, f, w, x) == pytest.approx(value, abs=1e-12)
    assert gain.shape == (16, 5)


def test_monte_carlo_interval_covers_exact_and_is_labelled():
    """The 99% interval (alpha = 0.01) of 40,000 seeded samples covers the exact accuracy."""
    f, w = parse_function("majority"), accuracy_measure("zero-one", 2)
    exact = optimal_rules(MECHS, f, w, rule="average").average.average_accuracy
    rule = observer_average_rule(MECHS, f, w)
    est = monte_carlo_accuracy(rule, f, w, 40_000, np.random.default_rng(11), confidence=0.99)
    assert not est.exact and est.worst_case is None and est.samples == 40_000
    lo, hi = est.interval
    assert lo <= exact <= hi and hi - lo < 0.03


def test_input_accuracy_rejects_bad_x():
    f, w = parse_function("or"), accuracy_measure("zero-one", 2)
    rule = optimal_rules(MECHS, f, w, rule="average").average.rule
    with pytest.raises(ParameterError, match="x="):
        input_accuracy(rule, f, w, np.array([0, 1, 2, 0]))


def test_monte_carlo_interval_stays_within_the_gains() -> None:
    mechs = [RandomizedResponse(0.5 + 0.01 * i) for i in range(40)]
    f = parse_function("majority")
    rule = observer_average_rule(mechs, f, accuracy_measure("zero-one", 2))
    est = monte_carlo_accuracy(rule, f, np.eye(2), 1, np.random.default_rng(1))
    assert 0.0 <= est.interval[0] <= est.average <= est.interval[1] <= 1.0
