"""Every engine against brute force over all inputs and transcripts (dense matrices), k <= 8."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from mpdp.protocols.decision import engines
from mpdp.protocols.decision.engines import average_decisions, build_problem
from mpdp.protocols.errors import SizeLimitError
from mpdp.protocols.functions import TruthTable, accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.protocols import brute

CASES = [  # (eps, delta, function, measure, observer)
    ([0.3, 1.1], [0, 0], "table:2,0,1,1", "absolute-error", None),
    ([0.7, 0.2, 1.5], [0, 0, 0], "table:0,1,1,1,0,0,1,0", "zero-one", None),
    ([0.7, 0.2, 1.5], [0, 0, 0], "table:0,1,1,1,0,0,1,0", "zero-one", 1),
    ([0.5, 0.5, 1.0, 2.0], [0, 0, 0, 0], "sum", "squared-error", 2),
    ([0.5, 0.5, 1.0, 2.0], [0, 0, 0, 0], "majority", "zero-one", None),
    ([0.4, 0.9, 0.4], [0.1, 0.0, 0.1], "threshold:2", "zero-one", None),
    ([0.4, 0.9, 0.4], [0.1, 0.0, 0.1], "sum", "absolute-error", 0),
    ([1.0, 1.0], [0.2, 0.2], "table:0,2,1,0", "squared-error", 1),
    ([0.6] * 5, [0] * 5, "xor", "zero-one", 3),
    ([0.0, float("inf"), 1000.0], [0, 0, 0], "majority", "zero-one", None),
]


@pytest.mark.parametrize("eps,delta,fname,mname,observer", CASES)
def test_engines_equal_brute_force(eps, delta, fname, mname, observer):
    four = any(d > 0 for d in delta)
    mechs = [RandomizedResponse(e, d, four_output=four) for e, d in zip(eps, delta)]
    function = parse_function(fname)
    k = len(mechs)
    w = accuracy_measure(mname, function.output_size(k))
    avg, worst, lp = brute.observer_values([m.channel for m in mechs], function.truth_table(k), w, observer)
    engines = ["general", "symmetric"] if function.count_values(k) is not None else ["general"]
    for engine in engines:
        result = optimal_rules(mechs, function, w, observer, "both", engine)
        assert result.average.average_accuracy == pytest.approx(avg, abs=1e-12)
        assert result.average.worst_case_accuracy == pytest.approx(worst, abs=1e-12)
        assert result.worst_case.worst_case_accuracy == pytest.approx(lp, abs=1e-9)
        assert result.worst_case.upper_bound >= lp - 1e-9


def test_average_rule_and_accuracy_k8_random_table():
    rng = np.random.default_rng(8)
    k = 8
    mechs = [RandomizedResponse(e) for e in rng.uniform(0.1, 2.0, k)]
    function = TruthTable(tuple(rng.integers(0, 3, 1 << k)))
    w = accuracy_measure("absolute-error", 3)
    p = brute.likelihood([m.channel for m in mechs])
    gain = w[function.truth_table(k)]
    d = brute.average_rule(p, gain)
    acc = brute.per_input(p, gain, brute.onehot(d, 3))
    result = optimal_rules(mechs, function, w, None, "average")
    taus = np.array(list(itertools.product([0, 1], repeat=k)), dtype=np.uint8)
    assert (result.average.rule.decide(taus) == d).all()
    assert result.average.average_accuracy == pytest.approx(acc.mean(), abs=1e-12)
    assert result.average.worst_case_accuracy == pytest.approx(acc.min(), abs=1e-12)


def test_symmetric_groups_k8_match_brute_force_lp():
    mechs = [RandomizedResponse(0.5)] * 4 + [RandomizedResponse(1.5)] * 4
    function = parse_function("sum")
    w = accuracy_measure("absolute-error", 9)
    avg, worst, lp = brute.observer_values([m.channel for m in mechs], function.truth_table(8), w)
    result = optimal_rules(mechs, function, w, None, "both", "symmetric")
    assert [f.n for f in result.problem.views[0].factors] == [4, 4]
    assert result.average.average_accuracy == pytest.approx(avg, abs=1e-12)
    assert result.average.worst_case_accuracy == pytest.approx(worst, abs=1e-12)
    assert result.worst_case.worst_case_accuracy == pytest.approx(lp, abs=1e-9)


def test_reduced_lp_equals_full_lp():
    """The symmetry-reduced LP (count classes) equals the general engine's LP over all transcripts."""
    mechs = [RandomizedResponse(0.8)] * 3 + [RandomizedResponse(0.3, 0.1, four_output=True)] * 2
    function = parse_function("majority")
    w = accuracy_measure("zero-one", 2)
    sym = optimal_rules(mechs, function, w, None, "worst-case", "symmetric").worst_case
    gen = optimal_rules(mechs, function, w, None, "worst-case", "general").worst_case
    assert sym.worst_case_accuracy == pytest.approx(gen.worst_case_accuracy, abs=1e-9)


def test_lp_never_below_best_deterministic_rule():
    rng = np.random.default_rng(3)
    for _ in range(3):
        mechs = [RandomizedResponse(e) for e in rng.uniform(0.1, 2.0, 3)]
        function = TruthTable(tuple(rng.integers(0, 2, 8)))
        w = accuracy_measure("zero-one", 2)
        p = brute.likelihood([m.channel for m in mechs])
        best = brute.deterministic_worst_cases(p, w[function.truth_table(3)])
        lp = optimal_rules(mechs, function, w, None, "worst-case").worst_case.worst_case_accuracy
        assert lp >= best - 1e-12


def test_auto_engine_choice_and_refusal(monkeypatch: pytest.MonkeyPatch):
    w = accuracy_measure("zero-one", 2)
    homogeneous = [RandomizedResponse(1.0)] * 30
    assert build_problem(homogeneous, parse_function("majority"), w).engine == "symmetric"
    table = TruthTable(tuple([0, 1] * 8))
    assert build_problem(homogeneous[:4], table, w).engine == "general"
    # The refusal past the general engine's limit, at a limit of 2^10 instead of 2^24: the same branch,
    # without a 2^25-entry table (62 s of a loaded machine's CPU).
    monkeypatch.setattr(engines, "GENERAL_MAX_TRANSCRIPTS", 1 << 10)
    big = TruthTable((0, 1) * (1 << 10))
    with pytest.raises(SizeLimitError, match="at most 1024") as err:
        build_problem([RandomizedResponse(1.0)] * 11, big, w)
    assert "symmetric function" in str(err.value)


def test_four_output_count_classes_decide_as_brute_force():
    """Three equal four-output parties: the symmetric engine's C(3 + 3, 3) = 20 count classes, each
    deciding what the brute-force average rule decides on every one of the 4^3 transcripts in it."""
    mechs = [RandomizedResponse(1.0, 0.3)] * 3
    function, w = parse_function("and"), accuracy_measure("zero-one", 2)
    problem = build_problem(mechs, function, w, engine="symmetric")
    (view,) = problem.views
    (factor,) = view.factors
    d = average_decisions(view)
    taus = np.array(list(itertools.product(range(4), repeat=3)), dtype=np.uint8)
    classes = factor.class_of(taus)
    assert d.dtype == np.int64 and sorted(set(classes.tolist())) == list(range(d.shape[0]))
    p = brute.likelihood([m.channel for m in mechs])
    expected = brute.average_rule(p, w[function.truth_table(3)])
    assert d[classes].tolist() == expected.tolist()
