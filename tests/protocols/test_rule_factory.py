"""The one decision-rule factory: each kind and engine against brute force on small k, the cache, errors."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule, zero_one_rules
from mpdp.protocols.rules.rules import DecisionRule
from mpdp.protocols.rules.symmetric import SymmetricAverageRule
from mpdp.protocols.rules.table_rule import TableRule
from tests.protocols import brute

MECHS = [RandomizedResponse(0.4), RandomizedResponse(0.9, 0.1, True), RandomizedResponse(0.4),
         RandomizedResponse(1.3)]


def _transcripts(mechs: list[RandomizedResponse]) -> np.ndarray:
    return np.array(list(itertools.product(*[range(m.num_symbols) for m in mechs])), dtype=np.int64)


def _accuracy_per_input(rule: DecisionRule, mechs, table: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A[x] = sum_tau P[x, tau] sum_y w[f(x), y] Q[tau, y], Q from the rule, P by enumeration."""
    p = brute.likelihood([m.channel for m in mechs])
    gain = w[table]
    taus = _transcripts(mechs)
    if rule.observer is None:
        return brute.per_input(p, gain, rule.probabilities(taus))
    acc = np.zeros(p.shape[0])
    for b in (0, 1):
        rows = brute.rows_with_bit(len(mechs), rule.observer, b)
        acc[rows] = brute.per_input(p[rows], gain[rows], rule.probabilities(taus, own_bits=b))
    return acc


@pytest.mark.parametrize("function", ["majority", "threshold:2", "table:0,1,1,0,1,0,0,1,1,1,0,0,0,1,1,2"])
@pytest.mark.parametrize("observer", [None, 1, 3])
def test_each_kind_is_optimal_by_brute_force(function, observer):
    f = parse_function(function)
    table = f.truth_table(len(MECHS))
    w = accuracy_measure("zero-one", f.output_size(len(MECHS)))
    avg_opt, _, lp_opt = brute.observer_values([m.channel for m in MECHS], table, w, observer)
    average = decision_rule(MECHS, f, w, kind="average", observer=observer)
    worst = decision_rule(MECHS, f, w, kind="worst-case", observer=observer)
    assert isinstance(average, TableRule) and isinstance(worst, TableRule)
    assert _accuracy_per_input(average, MECHS, table, w).mean() == pytest.approx(avg_opt, abs=1e-9)
    assert _accuracy_per_input(worst, MECHS, table, w).min() == pytest.approx(lp_opt, abs=1e-7)
    if f.count_values(len(MECHS)) is not None:
        posterior = decision_rule(MECHS, f, w, kind="average", observer=observer, engine="posterior")
        assert isinstance(posterior, SymmetricAverageRule)
        assert _accuracy_per_input(posterior, MECHS, table, w).mean() == pytest.approx(avg_opt, abs=1e-9)


def test_both_implementations_are_decision_rules_and_decide_like_their_probabilities():
    f = parse_function("majority")
    taus = _transcripts(MECHS)
    for rule in (decision_rule(MECHS, f), decision_rule(MECHS, f, engine="posterior"),
                 decision_rule(MECHS, f, kind="worst-case")):
        assert isinstance(rule, DecisionRule)
        probs = rule.probabilities(taus)
        assert np.allclose(probs.sum(axis=1), 1.0)
        if not rule.randomized:
            assert np.array_equal(rule.decide(taus), probs.argmax(axis=1))


def test_measure_none_is_zero_one_sized_to_the_participants():
    f = parse_function("sum")  # |Y| = n + 1 grows with the participants
    for n in (2, 3):
        mechs = MECHS[:n]
        implicit = decision_rule(mechs, f)
        explicit = decision_rule(mechs, f, np.eye(n + 1))
        taus = _transcripts(mechs)
        assert np.array_equal(implicit.decide(taus), explicit.decide(taus))
        assert implicit.probabilities(taus).shape == (taus.shape[0], n + 1)


def test_no_participants_outputs_f_of_the_empty_input():
    for function, expected in (("majority", 0), ("sum", 0), ("and", 1)):
        f = parse_function(function)
        for kind in ("average", "worst-case"):
            rule = decision_rule([], f, kind=kind)
            assert rule.decide(np.zeros((3, 0), dtype=np.int64)).tolist() == [f([])] * 3 == [expected] * 3


def test_cache_builds_once_and_relabels_for_each_party():
    f = parse_function("majority")
    mechs = [RandomizedResponse(0.7)] * 5
    cache = RuleCache()
    rules = [decision_rule(mechs, f, kind="worst-case", observer=j, cache=cache) for j in range(5)]
    assert len(cache) == 1  # the others' mechanisms agree: one table set for the five parties
    assert [r.observer for r in rules] == list(range(5))
    assert all(r.tables[0] is rules[0].tables[0] for r in rules)  # type: ignore[attr-defined]
    taus = _transcripts(mechs)
    for j, rule in enumerate(rules):
        fresh = decision_rule(mechs, f, kind="worst-case", observer=j)
        for b in (0, 1):
            assert np.allclose(rule.probabilities(taus, own_bits=b), fresh.probabilities(taus, own_bits=b))
    decision_rule(mechs, f, kind="worst-case", cache=cache)
    decision_rule(mechs, f, kind="average", engine="posterior", cache=cache)
    assert len(cache) == 3  # the central rule and another engine are other entries


def test_zero_one_rules_ignores_the_observer_measure_and_uses_the_cache():
    cache = RuleCache()
    factory = zero_one_rules("worst-case", cache=cache)
    f = parse_function("sum")
    rule = factory(MECHS[:3], f, np.eye(2))  # the observer's (wrong-sized) measure is not used
    taus = _transcripts(MECHS[:3])
    assert rule.probabilities(taus).shape[1] == 4
    assert np.allclose(rule.probabilities(taus),
                       decision_rule(MECHS[:3], f, kind="worst-case").probabilities(taus))
    assert len(cache) == 1


@pytest.mark.parametrize(("call", "match"), [
    (lambda f: decision_rule(MECHS, f, kind="best"), "rule"),
    (lambda f: decision_rule(MECHS, f, engine="lp"), "engine"),
    (lambda f: decision_rule(MECHS, f, kind="worst-case", engine="posterior"), "engine"),
    (lambda f: decision_rule(MECHS, f, observer=4), "observer"),
    (lambda f: decision_rule(MECHS, parse_function("table:0,1,1,0,1,0,0,1,1,1,0,0,0,1,1,0"),
                             cache=RuleCache()), "symmetric"),
    (lambda f: zero_one_rules("both"), "rule"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises(ParameterError, match=match):
        call(parse_function("majority"))
