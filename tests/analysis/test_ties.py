"""Ties (issue 10 item 7): the rule stays deterministic (the smallest output) and every output says when a
tie decided (docs/guide/accuracy.md)."""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.analysis.reports.report import evaluate_decisions
from mpdp.analysis.theory.theory import observer_accuracy_on_input
from mpdp.parties.cli.display import print_results
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule, tied_rows

W = accuracy_measure("zero-one", 2)
MAJORITY = parse_function("majority")


def test_epsilon_zero_every_transcript_ties_and_the_rule_answers_zero():
    mechs = [RandomizedResponse(0.0)] * 5
    passed = observer_accuracy_on_input(mechs, np.array([1, 1, 1, 0, 0]), MAJORITY, W)
    failed = observer_accuracy_on_input(mechs, np.array([1, 0, 0, 0, 0]), MAJORITY, W)
    assert passed.value == 0.0 and failed.value == 1.0  # the deterministic tie rule: always 0
    assert passed.tie_probability == pytest.approx(1.0) and failed.tie_probability == pytest.approx(1.0)
    assert "ties with probability 1" in passed.method and "smallest output" in passed.method
    rule = observer_average_rule(mechs, MAJORITY, W)
    taus = np.random.default_rng(3).integers(0, 2, (50, 5), dtype=np.uint8)
    assert tied_rows(rule.expected_gain(taus)).all() and (rule.decide(taus) == 0).all()


def test_no_tie_mass_where_the_posterior_decides():
    # 21 parties at epsilon 1 (the House runs at epsilon 1, odd and even counts): no transcript ties
    rng = np.random.default_rng(1)
    for n in (21, 20):
        x = rng.integers(0, 2, n)
        result = observer_accuracy_on_input([RandomizedResponse(1.0)] * n, x, MAJORITY, W)
        assert result.tie_probability == 0.0 and "ties" not in result.method


def test_round_table_marks_a_tied_round(capsys):
    mechs = [RandomizedResponse(0.0)] * 3
    x = np.array([1, 1, 0])
    theory = observer_accuracy_on_input(mechs, x, MAJORITY, W)
    result = evaluate_decisions("bill", x, np.zeros(20, dtype=np.int64), MAJORITY, theory, rounds=1, alpha=0.05)
    assert result.tie_probability == pytest.approx(1.0) and result.to_json()["tie_probability"] == 1.0
    document = {"dataset": "test", "protocol": "rr", "function": "majority", "repetitions": 20, "alpha": 0.05,
                "broker": {"kind": "embedded", "url": "mqtt://127.0.0.1:1"}, "wall_time_s": 0.1, "note": ""}
    print_results(document, [result])
    out = " ".join(capsys.readouterr().out.split())  # rich wraps the footnote
    assert "(tie 100%)" in out and "answers 0 there" in out
