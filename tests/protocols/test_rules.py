"""The rule object: decisions on transcripts, sampling with an explicit generator, JSON round trip."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, sample_protocol
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.symmetric import SymmetricAverageRule, observer_average_rule
from mpdp.protocols.rules.table_rule import TableRule
from tests.frequencies import assert_counts_fit

MECHS = [RandomizedResponse(0.4), RandomizedResponse(0.9, 0.1, True), RandomizedResponse(0.4),
         RandomizedResponse(1.3)]


@pytest.mark.parametrize("engine", ["general", "symmetric"])
@pytest.mark.parametrize("observer", [None, 2])
def test_json_round_trip_and_same_decisions(engine, observer):
    w = accuracy_measure("zero-one", 2)
    result = optimal_rules(MECHS, parse_function("threshold:2"), w, observer, "both", engine)
    rng = np.random.default_rng(5)
    symbols = np.stack([sample_protocol(MECHS, rng.integers(0, 2, 4), 1, rng)[0] for _ in range(300)])
    own = rng.integers(0, 2, 300)
    for report in (result.average, result.worst_case):
        rule = report.rule
        back = TableRule.from_json(rule.to_json())
        assert back.groups == rule.groups and back.kind == rule.kind and back.observer == observer
        a = rule.decide(symbols, rng=np.random.default_rng(1), own_bits=own if observer is not None else None)
        b = back.decide(symbols, rng=np.random.default_rng(1), own_bits=own if observer is not None else None)
        assert (a == b).all()


def test_randomized_rule_needs_generator_and_samples_q():
    """The sampled decisions of a mixed transcript fit its row of Q (chi-square, alpha = 1e-6)."""
    mechs = [RandomizedResponse(0.5, 0.0)] * 2 + [RandomizedResponse(1.5)]
    w = accuracy_measure("zero-one", 2)
    rule = optimal_rules(mechs, parse_function("and"), w, rule="worst-case", engine="general").worst_case.rule
    assert rule.randomized
    taus = np.array(list(itertools.product([0, 1], repeat=3)), dtype=np.uint8)
    with pytest.raises(ParameterError, match="rng"):
        rule.decide(taus)
    mixed = int(np.argmax(rule.tables[0].max(axis=1) < 1 - 1e-9))
    reps = np.repeat(taus[mixed:mixed + 1], 20000, axis=0)
    counts = np.bincount(rule.decide(reps, rng=np.random.default_rng(2)), minlength=2)
    assert_counts_fit(counts, rule.tables[0][mixed], alpha=1e-6)


def test_bad_inputs_are_named():
    rule = optimal_rules(MECHS, parse_function("or"), accuracy_measure("zero-one", 2), 1, "average").average.rule
    with pytest.raises(ParameterError, match="own_bits"):
        rule.decide(np.zeros((2, 4), dtype=np.uint8))
    with pytest.raises(ParameterError, match="symbol of party 0"):
        rule.decide(np.array([[2, 0, 0, 0]], dtype=np.uint8), own_bits=0)
    with pytest.raises(ParameterError, match="shape"):
        rule.decide(np.zeros((2, 3), dtype=np.uint8), own_bits=0)
    with pytest.raises(ParameterError, match="format"):
        TableRule.from_json('{"format": "other"}')


@pytest.mark.parametrize("observer", [None, 1])
def test_posterior_rule_matches_class_rule_and_round_trips(observer):
    mechs = [RandomizedResponse(e) for e in (0.3, 0.8, 1.1, 0.3, 2.0)]
    f, w = parse_function("sum"), accuracy_measure("absolute-error", 6)
    post = observer_average_rule(mechs, f, w, observer)
    exact = optimal_rules(mechs, f, w, observer, "average").average.rule
    taus = np.array(list(itertools.product([0, 1], repeat=5)), dtype=np.uint8)
    for b in (0, 1):
        own = None if observer is None else b
        # equal posterior expectations can tie exactly; compare expected gains of the two decisions
        gains = post.expected_gain(taus, own)
        rows = np.arange(len(taus))
        assert np.allclose(gains[rows, post.decide(taus, own_bits=own)],
                           gains[rows, exact.decide(taus, own_bits=own)], atol=1e-12)
    back = SymmetricAverageRule.from_json(post.to_json())
    assert (back.decide(taus, own_bits=0 if observer is not None else None)
            == post.decide(taus, own_bits=0 if observer is not None else None)).all()
