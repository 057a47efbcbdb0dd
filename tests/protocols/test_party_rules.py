"""Every party's rule built once per group of equal mechanisms (mpdp.protocols.rules.party_rules): the same decisions
as the per-party construction (brute force over every party, own bit and transcript), O(k) memory, and the cost
estimate of the party decisions."""

from __future__ import annotations

import dataclasses
import itertools
import tracemalloc
import weakref

import numpy as np
import pytest

from mpdp.analysis.theory.accuracy import input_accuracy, rule_accuracy
from mpdp.analysis.theory.party_theory import round_rule_theory
from mpdp.protocols.decision.engine_cost import TRANSCRIPT_SYMBOL_BYTES, party_rules_cost
from mpdp.protocols.decision.engines import DecisionProblem, build_problem
from mpdp.protocols.decision.worst_case import lp_cost, symmetric_lp_cost
from mpdp.protocols.errors import CostLimitError, ParameterError, SizeLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.party_rules import PartyRuleSet
from mpdp.protocols.rules.rule_factory import RuleCache, decision_rule, zero_one_measure
from mpdp.protocols.rules.table_rule import TableRule

A, B = RandomizedResponse(1.0, 0.0, False), RandomizedResponse(0.4, 0.0, False)
C = RandomizedResponse(1.5, 0.1, True)
#: 6-12 parties in 2-3 groups, interleaved (a group's first member is not always party 0)
ROUNDS = [(A, B, A, A, B, A), (B, A, A, C, B, A, C), (A,) * 5 + (B,) * 3, (B, A) * 5 + (A, B)]


def _transcripts(mechs: tuple[RandomizedResponse, ...]) -> np.ndarray:
    return np.array(list(itertools.product(*[range(m.num_symbols) for m in mechs])), dtype=np.uint8)


@pytest.mark.parametrize("mechs", ROUNDS[:3])
@pytest.mark.parametrize("name", ["majority", "sum", "xor", "and"])
@pytest.mark.parametrize("engine", ["auto", "posterior"])
def test_average_decisions_equal_the_per_party_construction(mechs: tuple[RandomizedResponse, ...], name: str,
                                                            engine: str) -> None:
    f = parse_function(name)
    rules = PartyRuleSet(mechs, f, engine=engine, cache=RuleCache())
    transcripts = _transcripts(mechs)
    table = rules.decisions(transcripts)
    for j, b in itertools.product(range(len(mechs)), (0, 1)):
        old = decision_rule(mechs, f, observer=j, engine=engine).decide(transcripts, own_bits=b)  # built for j
        assert np.array_equal(table.decide(j, b), old)
        assert np.array_equal(rules.rule(j).decide(transcripts, own_bits=b), old)
        assert np.array_equal(rules.materialized(j).decide(transcripts, own_bits=b), old)
    assert rules.rules_built == len(set(mechs))


@pytest.mark.parametrize("mechs", [ROUNDS[0], ROUNDS[1]])
@pytest.mark.parametrize("name", ["majority", "and"])
def test_worst_case_rules_are_the_representatives_relabelled_and_as_accurate(
        mechs: tuple[RandomizedResponse, ...], name: str) -> None:
    """The worst-case LP may have several optima: party j's rule is its representative's on the transposed
    transcript, as accurate in the worst case as the LP solved for j itself (002 eq. (4)), and the same draws."""
    f = parse_function(name)
    w = zero_one_measure(f, len(mechs))
    rules = PartyRuleSet(mechs, f, kind="worst-case")
    transcripts = _transcripts(mechs)
    table = rules.decisions(transcripts)
    for j in range(len(mechs)):
        own = rules.materialized(j)
        assert isinstance(own, TableRule) and own.observer == j
        for b in (0, 1):
            probabilities = own.probabilities(transcripts, b)
            assert np.array_equal(table.probabilities(j, b), probabilities)
            assert np.array_equal(rules.rule(j).probabilities(transcripts, b), probabilities)
            assert np.array_equal(table.decide(j, b, np.random.default_rng(7)),
                                  own.decide(transcripts, np.random.default_rng(7), b))
        old = decision_rule(mechs, f, kind="worst-case", observer=j)
        assert rule_accuracy(own, f, w).worst_case == pytest.approx(rule_accuracy(old, f, w).worst_case, abs=1e-9)


@pytest.mark.parametrize("mechs", ROUNDS)
def test_party_theory_equals_each_party_rule_evaluated_on_its_own(mechs: tuple[RandomizedResponse, ...]) -> None:
    f = parse_function("majority")
    w = zero_one_measure(f, len(mechs))
    x = np.array([1, 0, 0, 1, 1, 0, 1, 0, 1, 1, 0, 0][: len(mechs)])
    theory = round_rule_theory(mechs, x, f, "average", RuleCache(), central=False)
    assert theory.parties is not None
    for j in range(len(mechs)):
        old = decision_rule(mechs, f, observer=j)
        assert isinstance(old, TableRule)
        assert theory.parties[j] == pytest.approx(input_accuracy(old, f, w, x), abs=1e-12)
    assert theory.evaluations <= 2 * len(set(mechs))


@pytest.mark.parametrize("kind", ["average", "worst-case"])
def test_party_theory_builds_each_rule_s_problem_once(monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    """The likelihoods (at 10^5 parties a band of 10-30 s) were built for every evaluation: 2 for the observer's rule
    (its accuracy on x, its optimized accuracy), 3 a group (own bit 0 and 1, optimized); and each is dropped before
    the next is built (two bands at once made the observer 13.4 GB at 10^5 parties)."""
    from mpdp.analysis.theory import accuracy

    f, mechs = parse_function("majority"), ROUNDS[1]  # 3 groups
    x = np.array([1, 0, 0, 1, 1, 0, 1])
    built: list[int | None] = []
    alive: list[weakref.ref[DecisionProblem]] = []

    class Tracked(DecisionProblem):  # a subclass without slots: weak references tell whether one is still held
        pass

    def counted(*args: object) -> object:
        assert all(ref() is None for ref in alive)  # the problem of the rule before was dropped
        built.append(args[3])  # type: ignore[arg-type]  # the observer
        problem = build_problem(*args)  # type: ignore[arg-type]
        tracked = object.__new__(Tracked)
        for item in dataclasses.fields(problem):
            object.__setattr__(tracked, item.name, getattr(problem, item.name))
        alive.append(weakref.ref(tracked))
        return tracked

    monkeypatch.setattr(accuracy, "build_problem", counted)
    rules = RuleCache()
    theory = round_rule_theory(mechs, x, f, kind, rules)
    assert sorted(built, key=str) == sorted([None, 0, 1, 3], key=str)  # the observer, each group's representative
    monkeypatch.undo()
    # the values of each rule evaluated on its own (a problem built per call)
    w = zero_one_measure(f, len(mechs))
    central = decision_rule(mechs, f, kind=kind, cache=rules)
    assert isinstance(central, TableRule)
    assert theory.observer == pytest.approx(input_accuracy(central, f, w, x), abs=1e-12)
    optimized = [rule_accuracy(r, f, w) for r in [central] + [decision_rule(mechs, f, kind=kind, observer=j)
                                                               for j in (0, 1, 3)]]
    values = [a.average if kind == "average" else a.worst_case for a in optimized]
    assert theory.observer_optimized == pytest.approx(values[0], abs=1e-12)
    assert theory.party_optimized_min == pytest.approx(min(values[1:]), abs=1e-9)


def test_twenty_thousand_party_rules_take_memory_linear_in_k() -> None:
    """The per-party construction copied the others per party: ~42 bytes a pair, 17 GB at 20,000 parties."""
    k = 20_000
    mechs = (A, B) * (k // 2)
    rules = PartyRuleSet(mechs, parse_function("majority"), engine="posterior")
    for g in range(2):
        rules.group_rule(g)
    tracemalloc.start()
    views = [rules.rule(j) for j in range(k)]
    used = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert rules.rules_built == 2
    assert used < 200 * k  # a view and its list slot, not the other k - 1 parties
    assert all(v.mechanisms is rules.mechanisms for v in views[:: k // 10])


def test_a_bad_party_or_own_bit_is_named() -> None:
    rules = PartyRuleSet((A, B, A), parse_function("majority"))
    with pytest.raises(ParameterError, match="party"):
        rules.rule(3)
    with pytest.raises(ParameterError, match="own_bits"):
        rules.decisions(np.zeros((1, 3), dtype=np.uint8)).decide(0, 2)
    with pytest.raises(ParameterError, match="symmetric"):
        PartyRuleSet((A, B), parse_function("table:0,1,0,0"))


def test_party_decisions_cost_grows_with_groups_and_is_refused_by_its_time_limit() -> None:
    f = parse_function("majority")
    one = party_rules_cost((A,) * 4000, f, 1, 1)
    assert "1 group" in one.size and "exact" in one.size
    # 3,000 distinct epsilons: no exact engine holds them; 2 symbols x 2 own bits of the posterior recurrence a
    # group and round, each ~ 8e-6 k + 3e-9 k^2 / 2 s
    many = party_rules_cost([RandomizedResponse(0.1 + i * 1e-4) for i in range(3000)], f, 1, 1)
    assert "posterior" in many.size
    assert many.seconds == pytest.approx(3000 * 4 * (8e-6 * 3000 + 3e-9 * 3000**2 / 2))
    error = many.refusal(60.0)
    assert isinstance(error, CostLimitError) and "the party decisions (3,000 parties" in str(error)


def test_worst_case_party_rules_are_costed_with_the_lp_the_factory_solves() -> None:
    import scipy.optimize  # noqa: F401 -- imported: no first-import seconds in any estimate below

    f = parse_function("majority")
    mechs = (A,) * 40 + (B,) * 3
    # the LP's estimate from the sizes alone is that of the problem the factory builds for party 40 (both own bits)
    problem = build_problem(mechs, f, np.eye(2), observer=40)
    assert problem.engine == "symmetric" and len(problem.views) == 2
    assert symmetric_lp_cost(mechs, f, 40).seconds == pytest.approx(lp_cost(problem.views).seconds)
    # each group's worst-case rule: the exact engine's likelihoods (the average rule's cost) and its LP
    average, worst = party_rules_cost(mechs, f, 7, 1), party_rules_cost(mechs, f, 7, 1, "worst-case")
    assert "worst-case LP rules" in worst.size and "exact rules" in average.size
    assert worst.seconds - average.seconds == pytest.approx(
        symmetric_lp_cost(mechs, f, 0).seconds + symmetric_lp_cost(mechs, f, 40).seconds)
    assert average.memory_bytes >= TRANSCRIPT_SYMBOL_BYTES * 7 * 43  # the transcript a worker decides


def test_worst_case_party_rules_the_factory_would_refuse_are_refused_up_front() -> None:
    f = parse_function("majority")
    mechs = (A,) * 15_001
    # the central observer's LP fits the factory's 60 s; each party's two LPs (one per own bit) do not
    assert symmetric_lp_cost(mechs, f, None).refusal(memory_here=False) is None
    with pytest.raises(CostLimitError, match=r"a party's worst-case LP \(30,003 variables over 15,001 input classes, "
                                             r"2 LPs\).*: use rule='average' for the party decisions"):
        party_rules_cost(mechs, f, 1, 1, "worst-case")
    assert "exact rules" in party_rules_cost(mechs, f, 1, 1).size  # the average rules: the band
    with pytest.raises(SizeLimitError, match="with 30 distinct .* no engine holds a party's worst-case LP"):
        party_rules_cost([RandomizedResponse(0.5 + 0.01 * i) for i in range(30)], f, 1, 1, "worst-case")
    xor = parse_function("xor")  # parity views: the average rule is worst-case optimal, no LP
    assert party_rules_cost(mechs, xor, 1, 1, "worst-case").seconds == party_rules_cost(mechs, xor, 1, 1).seconds
