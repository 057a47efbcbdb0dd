"""The count engine (issue 12 item 8) against the exact engines, a dense brute force and direct sums."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import SymmetricFunction, accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.count_threshold import (
    count_threshold_applies,
    count_threshold_rule,
    threshold_tail,
    threshold_tails,
)
from mpdp.protocols.rules.optimal import optimal_rules
from tests.parties.cli.invoke import ok

W = accuracy_measure("zero-one", 2)
CASES = [[0.1] * 7, [1.0] * 8, [0.5] * 5 + [1.5] * 3, [0.2] * 4 + [2.0] * 6, [0.0] * 3 + [1.0] * 4,
         [3.0] * 9, [0.7] + [0.3] * 6, [40.0] * 3 + [0.4] * 4, [math.inf] * 2 + [0.8] * 5]


def _direct_tail(n: int, eps: float, m: int, j: int) -> float:
    rr = RandomizedResponse(eps)
    p, q = rr.channel[1, 1], rr.channel[1, 0]
    a = np.arange(j + 1)
    return float(binom.pmf(a, j, p) @ binom.sf(m - 1 - a, n - j, q))


@pytest.mark.parametrize("n,eps", [(1, 0.5), (9, 0.1), (30, 1.0), (200, 0.05), (301, 3.0), (50, 0.0)])
def test_threshold_tails_equal_direct_sums(n, eps):
    for m in sorted({0, 1, n // 3, n // 2 + 1, n - 1, n, n + 1}):
        tails = threshold_tails(n, eps, m)
        direct = [_direct_tail(n, eps, m, j) for j in range(n + 1)]
        assert tails == pytest.approx(direct, abs=1e-13)
        assert threshold_tail(n, eps, m, n // 2) == pytest.approx(direct[n // 2], abs=1e-14)


def test_threshold_tails_far_tails_by_tilting():
    # epsilon 0.1, n = 3000: the one-convolution recurrence needs P(Bin + Bin = j) near 1e-800 (tilted)
    n, m = 3000, 1501
    tails = threshold_tails(n, 0.1, m)
    for j in (0, 700, 1500, 2400, 3000):
        assert tails[j] == pytest.approx(_direct_tail(n, 0.1, m, j), abs=1e-13)


@pytest.mark.parametrize("eps", [5.0, 37.0, 40.0])
def test_threshold_tails_at_100000_parties_and_large_epsilon(eps):
    """At epsilon >= 37, p = 1 / (1 + e^-eps) rounds to 1.0 (``log1p(-p)``: math domain error); at n = 10^5
    over the whole window the recurrence drifted 1.2e-11 - 1.9e-11 (epsilon 5, 30, 37), past its old
    certificate. Every 5,000th j against :func:`threshold_tail` (a windowed sum), five against scipy's binomials."""
    n, m = 100_000, 50_001
    tails = threshold_tails(n, eps, m)
    for j in range(0, n + 1, 5_000):
        assert tails[j] == pytest.approx(threshold_tail(n, eps, m, j), abs=1e-10)
    for j in (0, 49_999, 50_000, 50_001, 100_000):  # scipy's binomials, summed directly
        assert tails[j] == pytest.approx(_direct_tail(n, eps, m, j), abs=1e-10)


def test_the_count_engine_serves_large_epsilon(capsys):
    """``mpdp accuracy --epsilon 37*100000 --function majority`` crashed (math domain error); with
    q = e^-37 / (1 + e^-37) ~ 8.5e-17 per party, the majority of 10^5 is wrong with probability below
    C(10^5, 50,001) q^50,001 / 2: the accuracy is 1 (to the float sums' rounding)."""
    document = ok(capsys, "accuracy", "--epsilon", "37*100000", "--function", "majority", "--rule", "average",
                  "--json", "-")
    rules = document["rules"]["average"]
    assert document["engine"] == "counts" and rules["exact"] is True
    # within the recurrence's rounding, 1e-12 + 8e-16 n (4.3e-12 seen for the worst case)
    assert rules["average_accuracy"] == pytest.approx(1.0, abs=1e-12 + 8e-16 * 100_000)
    assert rules["worst_case_accuracy"] == pytest.approx(1.0, abs=1e-12 + 8e-16 * 100_000)


@pytest.mark.parametrize("eps", CASES, ids=lambda e: f"{len(e)}parties")
@pytest.mark.parametrize("name", ["majority", "and", "or", "threshold:3"])
@pytest.mark.parametrize("measure", ["zero-one", "absolute-error"])
def test_count_engine_equals_exact_engines(eps, name, measure):
    f = parse_function(name)
    w = accuracy_measure(measure, 2)
    mechs = [RandomizedResponse(e) for e in eps]
    ours = count_threshold_rule(mechs, f, w)
    exact = optimal_rules(mechs, f, w, rule="average").average
    assert ours.average_accuracy == pytest.approx(exact.average_accuracy, abs=1e-12)
    assert ours.worst_case_accuracy == pytest.approx(exact.worst_case_accuracy, abs=1e-12)


@pytest.mark.parametrize("eps", [[0.4] * 3 + [1.2] * 3, [0.9] * 6, [0.0] * 2 + [2.0] * 4])
def test_count_rule_decides_as_the_exact_rule_on_every_transcript(eps):
    mechs = [RandomizedResponse(e) for e in eps]
    f = parse_function("majority")
    ours = count_threshold_rule(mechs, f, W)
    table = optimal_rules(mechs, f, W, rule="average", engine="general").average.rule
    taus = np.array(list(itertools.product((0, 1), repeat=len(eps))), dtype=np.uint8)
    assert (ours.decide(taus) == table.decide(taus)).all()


def test_decreasing_function_swaps_labels():
    mechs = [RandomizedResponse(0.6)] * 5
    f = SymmetricFunction("minority", lambda k: (np.arange(k + 1) <= k // 2).astype(np.int64), lambda k: 2)
    ours = count_threshold_rule(mechs, f, W)
    exact = optimal_rules(mechs, f, W, rule="average").average
    assert ours.flipped
    assert ours.average_accuracy == pytest.approx(exact.average_accuracy, abs=1e-12)
    assert ours.worst_case_accuracy == pytest.approx(exact.worst_case_accuracy, abs=1e-12)


def test_single_group_equals_dense_brute_force_at_1000():
    # independent: the whole joint of (true count s, reported count t) from convolutions, no monotonicity
    n, eps = 1000, 0.1
    rr = RandomizedResponse(eps)
    p, q = rr.channel[1, 1], rr.channel[1, 0]
    forward = np.array([np.convolve(binom.pmf(np.arange(s + 1), s, p), binom.pmf(np.arange(n - s + 1), n - s, q))
                        for s in range(n + 1)])  # P(t | s)
    joint = binom.pmf(np.arange(n + 1), n, 0.5)[:, None] * forward
    truth = np.arange(n + 1) > n // 2
    yes = joint[truth].sum(axis=0) > joint[~truth].sum(axis=0)
    average = float(np.where(yes, joint[truth].sum(axis=0), joint[~truth].sum(axis=0)).sum())
    per_input = np.where(truth, forward[:, yes].sum(axis=1), forward[:, ~yes].sum(axis=1))
    ours = count_threshold_rule([rr] * n, parse_function("majority"), W)
    assert ours.average_accuracy == pytest.approx(average, abs=1e-12)
    assert ours.worst_case_accuracy == pytest.approx(float(per_input.min()), abs=1e-12)
    assert ours.boundary[0] == int(np.argmax(yes))


def test_two_groups_equal_exact_engine_at_500():
    mechs = [RandomizedResponse(0.1)] * 300 + [RandomizedResponse(0.5)] * 200
    ours = count_threshold_rule(mechs, parse_function("majority"), W)
    exact = optimal_rules(mechs, parse_function("majority"), W, rule="average").average
    assert ours.average_accuracy == pytest.approx(exact.average_accuracy, abs=1e-12)
    assert ours.worst_case_accuracy == pytest.approx(exact.worst_case_accuracy, abs=1e-12)


def _answer_one_log10(rule, n1: int, e1: float, a1: int, n2: int, e2: float, a2: int) -> float:
    """log10 P(the rule answers 1 | a1 ones in the first group, a2 in the second), summed in log space from
    scipy's binomial log pmfs and log tails (no band, no cutoff): sum over t1 of P(T1 = t1 | a1) P(T2 >=
    boundary[t1] | a2), T_g = Bin(a_g, p_g) + Bin(n_g - a_g, q_g)."""
    from scipy.special import logsumexp

    p1, p2 = 1 / (1 + math.exp(-e1)), 1 / (1 + math.exp(-e2))
    t1 = np.arange(n1 + 1)
    log_t1 = logsumexp([binom.logpmf(j, a1, p1) + binom.logpmf(t1 - j, n1 - a1, 1 - p1) for j in range(a1 + 1)], axis=0)
    log_tail2 = logsumexp([binom.logpmf(j, a2, p2) + binom.logsf(rule.boundary - j - 1, n2 - a2, 1 - p2)
                           for j in range(a2 + 1)], axis=0)
    return float(logsumexp(log_t1 + log_tail2) / math.log(10))


def test_the_two_group_worst_case_is_tiny_not_a_bug():
    """The worst case of majority over 0.5 x n and 1.5 x n (issue 23: it prints 0 at n = 500): by brute force
    over every input at n = 6, the least favourable input is all of the first group's bits and one of the
    second's 1 (module docstring), its value the engine's to 1e-12; at n = 100 the engine's 3.06e-9 is that
    input's P(answer 1) summed independently in log space (to 1e-6 relative); at n = 500 the same sum is
    10^-37.8, and the engine's 0 is within its absolute ~1e-15."""
    majority = parse_function("majority")
    n, e1, e2 = 6, 0.5, 1.5
    rule = count_threshold_rule([RandomizedResponse(e1)] * n + [RandomizedResponse(e2)] * n, majority, W)
    per_input = {}
    for a1, a2 in itertools.product(range(n + 1), repeat=2):
        yes = 10 ** _answer_one_log10(rule, n, e1, a1, n, e2, a2)
        per_input[a1, a2] = yes if a1 + a2 >= rule.sigma else 1 - yes
    assert min(per_input, key=per_input.__getitem__) == (n, 1)
    assert rule.worst_case_accuracy == pytest.approx(min(per_input.values()), abs=1e-12)
    for n, log10_worst, tolerance in ((100, -8.5139, 1e-6), (500, -37.7954, 1e-15)):
        rule = count_threshold_rule([RandomizedResponse(e1)] * n + [RandomizedResponse(e2)] * n, majority, W)
        exact = _answer_one_log10(rule, n, e1, n, n, e2, 1)
        assert exact == pytest.approx(log10_worst, abs=1e-4)
        assert rule.worst_case_accuracy == pytest.approx(10 ** exact, rel=tolerance, abs=1e-15)


def test_what_the_count_engine_refuses():
    w = W
    three = [RandomizedResponse(e) for e in (0.1, 0.2, 0.3)]
    four = [RandomizedResponse(1.0, 0.1, four_output=True)] * 3
    assert not count_threshold_applies(three, parse_function("majority"), w)
    assert not count_threshold_applies(four, parse_function("majority"), w)
    assert not count_threshold_applies([RandomizedResponse(1.0)] * 3, parse_function("xor"), w)
    assert not count_threshold_applies([RandomizedResponse(1.0)] * 3, parse_function("majority"), w, observer=0)
    assert not count_threshold_applies([RandomizedResponse(1.0)] * 3, parse_function("majority"), -w)
    with pytest.raises(ParameterError, match="count engine"):
        count_threshold_rule(three, parse_function("majority"), w)


def test_cli_serves_large_k_exactly_with_the_count_engine(capsys):
    doc = ok(capsys, "accuracy", "--epsilon", "0.2*30001", "--function", "majority", "--json")
    assert doc["engine"] == "counts" and doc["rules"]["average"]["exact"]
    assert "worst_case_skipped" in doc
    direct = count_threshold_rule([RandomizedResponse(0.2)] * 30001, parse_function("majority"), W)
    assert doc["rules"]["average"]["average_accuracy"] == direct.average_accuracy
    small = ok(capsys, "accuracy", "--epsilon", "0.5*9", "--function", "majority", "--engine", "counts",
               "--json")
    exact = optimal_rules([RandomizedResponse(0.5)] * 9, parse_function("majority"), W, rule="average").average
    assert small["rules"]["average"]["average_accuracy"] == pytest.approx(exact.average_accuracy, abs=1e-12)


def test_one_group_is_bounded_by_its_cost_estimate_not_a_cap() -> None:
    """k = 250,001 identical parties (above the former 200,000 cap): the count engine answers, and its
    average accuracy is the large-k limit 1/2 + arcsin(tanh(eps / 2)) / pi (the correlation of the true
    and the reported sums) to 1e-5; the estimate refuses only what would outlive the time limit."""
    from mpdp import accuracy
    from mpdp.protocols.errors import CostLimitError
    from mpdp.protocols.rules.count_threshold import count_threshold_cost

    k, eps = 250_001, 0.5
    got = accuracy(epsilon=eps, parties=k, function="majority", rule="average")
    assert got.engine == "counts"
    assert got.average_accuracy("average") == pytest.approx(0.5 + math.asin(math.tanh(eps / 2)) / math.pi, abs=1e-5)
    estimate = count_threshold_cost(10**6)
    assert 0.15 < estimate.seconds < 3.0 and estimate.memory_bytes < 5e8  # measured 0.46 s, 136 MB peak RSS
    with pytest.raises(CostLimitError, match=r"the count engine \(250,001 parties in one parameter group\)"):
        accuracy(epsilon=eps, parties=k, function="majority", rule="average", time_limit=0.1)
