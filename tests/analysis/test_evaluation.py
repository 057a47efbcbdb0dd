"""evaluate_round against independent computations: Clopper-Pearson and the binomial test from
scipy.stats.binomtest, the theory by enumerating every transcript of a small round."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.stats import binomtest

from mpdp.analysis.reports.evaluation import PartyEvaluation, RoundEvaluation, evaluate_round
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule

MECHS = [RandomizedResponse(0.6), RandomizedResponse(1.2, 0.05, True), RandomizedResponse(0.9)]
X = np.array([1, 0, 1])
MAJORITY = parse_function("majority")


def _transcripts() -> tuple[np.ndarray, np.ndarray]:
    """Every transcript of MECHS and its probability given X (products of channel entries)."""
    taus = np.array(list(itertools.product(*[range(m.num_symbols) for m in MECHS])))
    p = np.array([np.prod([MECHS[i].channel[X[i], t[i]] for i in range(len(MECHS))]) for t in taus])
    return taus, p


def _decisions(correct: int, n: int, truth: int) -> np.ndarray:
    return np.array([truth] * correct + [1 - truth] * (n - correct))


def _check_figures(result, correct: int, n: int, theory: float, rounds: int, alpha: float) -> None:
    ci = binomtest(correct, n).proportion_ci(confidence_level=0.95, method="exact")
    assert (result.ci_low, result.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert result.empirical_accuracy == correct / n and result.correct == correct
    assert result.theoretical_accuracy == pytest.approx(theory, abs=1e-12)
    p_value = binomtest(correct, n, theory).pvalue
    assert result.p_value == pytest.approx(p_value, rel=1e-9)
    assert result.consistent == (p_value >= alpha / rounds)


@pytest.mark.parametrize("rule", ["average", "worst-case"])
def test_observer_round_measured_and_exact_theory(rule):
    taus, p = _transcripts()
    engine = "posterior" if rule == "average" else "auto"
    live = decision_rule(MECHS, MAJORITY, kind=rule, engine=engine)
    theory = float(p @ live.probabilities(taus)[:, MAJORITY(X)])
    truth = MAJORITY(X)
    for correct in (140, 60):  # one consistent round, one far off
        out = evaluate_round("bill", MECHS, X, _decisions(correct, 200, truth), MAJORITY, rule=rule, rounds=4,
                             alpha=0.05, rng=np.random.default_rng(0), messages_received=3)
        assert out.result.theory_exact and out.parties is None and out.rr_theoretical_accuracy is None
        assert (out.result.n_parties, out.result.yes_count, out.result.truth) == (3, 2, truth)
        _check_figures(out.result, correct, 200, theory, rounds=4, alpha=0.05)
    assert not out.result.consistent


def test_party_decisions_missing_measured_and_theory_per_party():
    taus, p = _transcripts()
    truth = MAJORITY(X)
    party = np.array([_decisions(30, 40, truth), _decisions(20, 40, truth), [-1] * 40])
    cache = RuleCache()
    out = evaluate_round("bill", MECHS, X, _decisions(25, 40, truth), MAJORITY, rule="average", rounds=1,
                         alpha=0.05, rng=np.random.default_rng(0), rules=cache, party_decisions=party)
    expected = []
    for j in range(3):
        rule = decision_rule(MECHS, MAJORITY, observer=j)
        expected.append(float(p @ rule.probabilities(taus, own_bits=int(X[j]))[:, truth]))
    assert out.parties is not None
    assert out.parties.accuracy == pytest.approx(50 / 80)
    assert out.parties.decisions_missing == 1
    assert out.parties.theoretical_accuracy == pytest.approx(np.mean(expected), abs=1e-12)
    assert out.parties.theoretical_min == pytest.approx(min(expected), abs=1e-12)
    assert out.parties.law_holds is True  # 002: each party's optimal average accuracy >= the observer's


def test_curator_round_with_the_rr_theory_beside_it():
    level = RandomizedResponse(1.0)
    mechs = [level] * 3
    taus = np.array(list(itertools.product([0, 1], repeat=3)))
    p = np.array([np.prod([level.channel[X[i], t[i]] for i in range(3)]) for t in taus])
    rr = float(p @ decision_rule(mechs, MAJORITY, engine="posterior").probabilities(taus)[:, 1])
    out = evaluate_round("bill", mechs, X, _decisions(70, 100, 1), MAJORITY, rule="curator", rounds=2,
                         alpha=0.05, rng=np.random.default_rng(0), level=level, status="timeout", absent=2)
    assert out.rr_theoretical_accuracy == pytest.approx(rr, abs=1e-12)
    assert out.result.theory_exact and out.result.theoretical_accuracy > rr  # the curator knows more
    _check_figures(out.result, 70, 100, out.result.theoretical_accuracy, rounds=2, alpha=0.05)
    entry = out.to_json()
    assert list(entry)[-4:] == ["status", "absent", "lost", "rr_theoretical_accuracy"]
    assert (entry["status"], entry["absent"], entry["lost"]) == ("timeout", 2, [])


def test_json_entry_order_for_party_decisions():
    result = evaluate_round("r", MECHS, X, _decisions(5, 10, 1), MAJORITY, rule="average", rounds=1, alpha=0.05,
                            rng=np.random.default_rng(0)).result
    entry = RoundEvaluation(result, parties=PartyEvaluation(0.5, None, None, 0, None)).to_json()
    assert list(entry)[:2] == ["round", "n_parties"]
    assert list(entry)[-8:] == ["status", "absent", "lost", "party_accuracy", "party_theoretical_accuracy",
                                "party_theoretical_min", "party_decisions_missing", "party_law_holds"]


@pytest.mark.parametrize(("options", "match"), [
    ({"rule": "best"}, "rule"),
    ({"rule": "curator"}, "level"),
    ({"rule": "curator", "level": RandomizedResponse(1.0), "party_decisions": np.zeros((3, 4), dtype=np.int64)},
     "party_decisions"),
])
def test_bad_arguments_are_named(options, match):
    with pytest.raises(ParameterError, match=match):
        evaluate_round("r", MECHS, X, np.zeros(4, dtype=np.int64), MAJORITY, rounds=1, alpha=0.05,
                       rng=np.random.default_rng(0), **options)
