"""The count-class Monte Carlo engine: its table is the rule, its estimates agree with the exact accuracy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest

from mpdp.analysis.statistics.monte_carlo import count_table
from mpdp.analysis.theory.accuracy import monte_carlo_accuracy, rule_accuracy
from mpdp.protocols.decision.factors import group_parties
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, sample_protocol
from mpdp.protocols.rules.optimal import optimal_rules
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.symmetric import observer_average_rule

PURE_TIES = [RandomizedResponse(1.0)] * 4  # majority of 4: two reported ones is a tie
TWO_TIERS = [RandomizedResponse(0.4)] * 3 + [RandomizedResponse(1.3)] * 2
FOUR = [RandomizedResponse(0.8, 0.1)] * 3 + [RandomizedResponse(0.3, 0.2)] * 2 + [RandomizedResponse(1.0, 0.05)]
NO_PRIVACY_GAIN = [RandomizedResponse(0.0)] * 3  # epsilon 0: every output ties


def _class_of(rule, symbols):
    """The count class of each transcript, from Factor.class_of (the order the engine claims)."""
    others = tuple(i for i in range(rule.k) if i != rule.observer)
    index = np.zeros(len(symbols), dtype=np.int64)
    for factor in group_parties(rule.mechanisms, others, grouped=True):
        index = index * factor.num_classes + factor.class_of(symbols[:, list(factor.members)])
    return index


CASES = [(m, f, o) for m in (PURE_TIES, TWO_TIERS, FOUR, NO_PRIVACY_GAIN)
         for f in ("majority", "xor", "sum") for o in (None, 1)]


@pytest.mark.parametrize(("mechs", "fname", "observer"), CASES)
def test_table_decision_equals_the_rules_own_on_every_sampled_transcript(mechs, fname, observer):
    f = parse_function(fname)
    rng = np.random.default_rng(5)
    x = rng.integers(0, 2, (3000, len(mechs)))
    symbols = np.concatenate([sample_protocol(mechs, row, 1, rng) for row in x])
    own = None if observer is None else x[:, observer]
    for rule in (observer_average_rule(mechs, f, np.eye(f.output_size(len(mechs))), observer),
                 decision_rule(mechs, f, kind="average", observer=observer),
                 decision_rule(mechs, f, kind="worst-case", observer=observer)):
        table = count_table(rule)
        if table is None:  # a general-engine table: not constant on count classes, never looked up
            assert rule.engine == "general"
            continue
        cls = _class_of(rule, symbols)
        bits = np.zeros(len(x), dtype=np.int64) if own is None else own
        probs = rule.probabilities(symbols, own)
        for b in (0, 1) if observer is not None else (0,):
            rows = bits == b
            np.testing.assert_array_equal(table.decisions[b][cls[rows]], probs[rows].argmax(axis=1))
            if table.mixed[b].any():
                np.testing.assert_allclose(np.diff(table.cumulative[b][cls[rows]], prepend=0.0, axis=1),
                                           probs[rows], atol=1e-15)
            else:
                np.testing.assert_array_equal(table.decisions[b][cls[rows]],
                                              rule.decide(symbols[rows], own_bits=b))


@pytest.mark.parametrize(("mechs", "fname", "observer", "kind"), [
    (PURE_TIES, "majority", None, "average"),
    ([RandomizedResponse(0.7)] * 31, "majority", None, "worst-case"),
    ([RandomizedResponse(0.7)] * 31, "majority", 4, "average"),
    (TWO_TIERS, "xor", 0, "worst-case"),
    (FOUR, "majority", None, "average"),
    (FOUR, "sum", 2, "worst-case"),
])
def test_estimate_agrees_with_exact_accuracy(mechs, fname, observer, kind):
    """Exact binomial test of the count of correct decisions at level 1e-3 (seeded: it does not flake)."""
    f = parse_function(fname)
    w = np.eye(f.output_size(len(mechs)))
    rule = decision_rule(mechs, f, w, kind=kind, observer=observer)
    assert count_table(rule) is not None
    exact = rule_accuracy(rule, f, w).average
    est = monte_carlo_accuracy(rule, f, w, 200_000, np.random.default_rng(17))
    assert est.successes is not None and est.successes == round(est.average * est.samples)
    assert binomtest(est.successes, est.samples, exact).pvalue > 1e-3


def test_same_seed_same_estimate_and_general_engine_falls_back():
    f = parse_function("majority")
    rule = decision_rule(TWO_TIERS, f, kind="worst-case")
    a = monte_carlo_accuracy(rule, f, np.eye(2), 50_000, np.random.default_rng(3))
    b = monte_carlo_accuracy(rule, f, np.eye(2), 50_000, np.random.default_rng(3))
    assert a == b
    forced = optimal_rules(PURE_TIES, f, np.eye(2), rule="average", engine="general").average.rule
    assert count_table(forced) is None  # equal parties, one class per party: ties may depend on the party
    est = monte_carlo_accuracy(forced, f, np.eye(2), 40_000, np.random.default_rng(4))
    assert binomtest(est.successes, est.samples, rule_accuracy(forced, f, np.eye(2)).average).pvalue > 1e-3


def test_squared_error_has_no_success_count():
    f = parse_function("sum")
    w = -np.subtract.outer(np.arange(5), np.arange(5)) ** 2.0
    rule = decision_rule(PURE_TIES, f, w)
    est = monte_carlo_accuracy(rule, f, w, 1000, np.random.default_rng(0))
    assert est.successes is None and -16.0 <= est.average <= 0.0


POOL = [RandomizedResponse(0.0), RandomizedResponse(0.6), RandomizedResponse(1.5), RandomizedResponse(0.6, 0.1)]


@settings(max_examples=40, deadline=None)
@given(picks=st.lists(st.integers(0, 2), min_size=1, max_size=6), four=st.booleans(),
       fname=st.sampled_from(["majority", "xor", "sum", "and", "threshold:2"]),
       observer=st.sampled_from([None, 0]), seed=st.integers(0, 2**32 - 1))
def test_count_table_is_the_posterior_rule_on_any_transcript(picks, four, fname, observer, seed):
    """For any parameters (drawn from a small pool, so that groups form) and any transcript, the table's
    decision on the transcript's count class is the posterior rule's own decision (ties included)."""
    mechs = [POOL[3] if four and i % 2 else POOL[p] for i, p in enumerate(picks)]
    f = parse_function(fname)
    rule = observer_average_rule(mechs, f, np.eye(f.output_size(len(mechs))), observer)
    table = count_table(rule)
    assert table is not None
    rng = np.random.default_rng(seed)
    symbols = np.stack([rng.integers(0, m.num_symbols, 64) for m in mechs], axis=1)
    own = rng.integers(0, 2, 64)
    cls = _class_of(rule, symbols)
    for b in (0,) if observer is None else (0, 1):
        rows = own == b if observer is not None else np.ones(64, dtype=bool)
        expected = rule.decide(symbols[rows], own_bits=None if observer is None else b)
        np.testing.assert_array_equal(table.decisions[b][cls[rows]], expected)
