"""protocols.rules.optimal: the worst-case LP is sized by its estimated cost (protocols.decision.worst_case.lp_cost), not by a
class count; truth tables symmetric within groups of equal parameters reach the symmetric engine."""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
import scipy.optimize  # noqa: F401  the estimates add its first import (~0.17 s) only where it is not loaded yet

from mpdp.protocols import RandomizedResponse
from mpdp.protocols.decision.engines import build_problem
from mpdp.protocols.decision.worst_case import LP_SECONDS, SINGLE_PARTY_LP_SCALE, lp_cost, lp_size
from mpdp.protocols.errors import CostLimitError, ParameterError
from mpdp.protocols.functions import TruthTable, accuracy_measure, group_values, parse_function
from mpdp.protocols.numerics.cost import CostEstimate, PowerLaw, format_seconds
from mpdp.protocols.rules.optimal import optimal_rules, worst_case_refusal
from tests.calibration import scaled

W = accuracy_measure("zero-one", 2)


def _four_output(k: int) -> list[RandomizedResponse]:
    return [RandomizedResponse(0.5 + 0.2 * i, 0.05 + 0.01 * i, four_output=True) for i in range(k)]


def test_the_lp_size_is_counted_independently() -> None:
    """V = sum over the chain's stages of the product of the factors' current sizes, + t: for k distinct
    four-output parties the chain runs 4^k, 2*4^(k-1), ..., 2^k, i.e. sum_g 2^g 4^(k-g) = 2 * 4^k - 2^k."""
    for k in (3, 5, 6):
        problem = build_problem(_four_output(k), parse_function("majority"), W, engine="general")
        assert lp_size(problem.views[0]) == (2 * 4**k - 2**k + 1, 2**k)


def test_six_distinct_four_output_parties_are_solved_not_refused() -> None:
    """Issue 12, item 6: 4,096 transcripts were refused by a 2,048-class cap; the LP is small. The
    optimum is checked against the LP's own dual bound and the average rule."""
    mechs = _four_output(6)
    assert worst_case_refusal(mechs, parse_function("majority"), W) is None
    result = optimal_rules(mechs, parse_function("majority"), W)
    assert result.worst_case is not None and result.average is not None and result.worst_case.upper_bound
    assert result.worst_case.worst_case_accuracy >= result.average.worst_case_accuracy - 1e-12
    assert result.worst_case.upper_bound - result.worst_case.worst_case_accuracy < 1e-7


def test_an_lp_over_the_time_limit_is_refused_with_its_estimate() -> None:
    mechs = [RandomizedResponse(0.1 * i) for i in range(1, 16)]  # 2^15 inputs: the model says ~8 min
    view = build_problem(mechs, parse_function("majority"), W).views[0]
    estimate = lp_cost([view])
    variables, inputs = lp_size(view)
    assert estimate.seconds == pytest.approx(SINGLE_PARTY_LP_SCALE * 2.75e-6 * variables**1.04 * inputs**0.60)
    refusal = worst_case_refusal(mechs, parse_function("majority"), W)
    assert isinstance(refusal, CostLimitError) and refusal.estimate == estimate
    assert "average rule" in str(refusal) and "time_limit=SECONDS" in str(refusal) and f"{variables:,}" in str(refusal)
    with pytest.raises(CostLimitError, match="60 s time limit"):
        optimal_rules(mechs, parse_function("majority"), W, rule="worst-case")
    assert worst_case_refusal(mechs, parse_function("majority"), W, time_limit=estimate.seconds * 2) is None


@pytest.mark.parametrize("observer", [None, 4])
def test_xor_needs_no_lp_its_average_rule_is_an_equalizer(observer: int | None) -> None:
    """The same 15 parties with XOR: the LP the model puts at ~20 min is not needed. The parity rule is
    right with probability (1 + prod_i tanh(eps_i / 2)) / 2 on every input (002 §3; over the parties the
    observer does not know), so its worst case is its average, and no rule's worst case exceeds the
    optimal average (the certificate). At k = 1,001 equal parties HiGHS did not solve this LP in 60 s."""
    mechs = [RandomizedResponse(0.1 * i) for i in range(1, 16)]
    assert worst_case_refusal(mechs, parse_function("xor"), W, observer) is None
    result = optimal_rules(mechs, parse_function("xor"), W, observer, rule="worst-case", time_limit=1.0)
    unknown = [0.1 * i for i in range(1, 16) if i - 1 != observer]
    closed = 0.5 * (1 + math.prod(math.tanh(e / 2) for e in unknown))
    assert result.average is None and result.worst_case is not None
    assert result.worst_case.worst_case_accuracy == pytest.approx(closed, abs=1e-12)
    assert result.worst_case.average_accuracy == pytest.approx(closed, abs=1e-12)
    assert result.worst_case.upper_bound == pytest.approx(closed, abs=1e-12)
    big = optimal_rules([RandomizedResponse(1.0)] * 1001, parse_function("xor"), W, time_limit=1.0)
    assert big.worst_case is not None and big.worst_case.worst_case_accuracy == pytest.approx(
        0.5 * (1 + math.tanh(0.5) ** 1001), abs=1e-12)


def test_a_party_observer_adds_its_two_lps() -> None:
    mechs = _four_output(4)
    central = lp_cost(build_problem(mechs, parse_function("xor"), W).views)
    party = lp_cost(build_problem(mechs, parse_function("xor"), W, observer=0).views)
    one = SINGLE_PARTY_LP_SCALE * LP_SECONDS(*lp_size(build_problem(mechs, parse_function("xor"), W, observer=0).views[0]))
    assert party.seconds == pytest.approx(2 * one) and party.seconds < central.seconds


def test_memory_beyond_the_machine_is_refused_without_a_time_limit() -> None:
    huge = CostEstimate("a task", "its size", 1.0, 1e30, "do less")
    with pytest.raises(CostLimitError, match="of memory this machine can give now: do less"):
        huge.check(time_limit=None)
    CostEstimate("a task", "its size", 1e9, 1.0, "do less").check(time_limit=None)


@pytest.mark.parametrize("bad", [0.0, -1.0, math.inf, math.nan])
def test_a_bad_time_limit_is_named(bad: float) -> None:
    with pytest.raises(ParameterError, match="time_limit"):
        optimal_rules([RandomizedResponse(1.0)] * 2, parse_function("xor"), W, time_limit=bad)


def test_power_law() -> None:
    assert PowerLaw(2.0, (1.0, 0.5))(10, 4) == pytest.approx(40.0)
    with pytest.raises(ParameterError):
        PowerLaw(2.0, (1.0,))(1, 2)


def _grouped_xor_table(a: int, b: int) -> TruthTable:
    """majority of the first a bits XOR (any one of the next b bits), by enumeration."""
    return TruthTable(tuple(int(sum(x[:a]) * 2 > a) ^ int(sum(x[a:]) > 0)
                            for x in itertools.product([0, 1], repeat=a + b)))


def test_group_values_by_enumeration() -> None:
    table = np.array(_grouped_xor_table(3, 2).values)
    values = group_values(table, [[0, 1, 2], [3, 4]])
    assert values is not None
    expected = [int(s * 2 > 3) ^ int(t > 0) for s in range(4) for t in range(3)]
    assert values.tolist() == expected
    assert group_values(table, [[0, 1, 2, 3, 4]]) is None  # not a function of the total count
    assert group_values(table, [[0, 1, 3], [2, 4]]) is None  # groups that cut across


def test_a_symmetric_truth_table_is_detected() -> None:
    k = 12
    table = TruthTable(tuple(parse_function("majority").truth_table(k).tolist()))
    counts = table.count_values(k)
    assert counts is not None and counts.tolist() == [int(2 * s > k) for s in range(k + 1)]
    assert table.count_values(k + 1) is None
    assert _grouped_xor_table(3, 2).count_values(5) is None
    mechs = [RandomizedResponse(1.0)] * k
    as_table = optimal_rules(mechs, table, W)
    named = optimal_rules(mechs, parse_function("majority"), W)
    assert as_table.engine == "symmetric"
    assert as_table.average is not None and named.average is not None
    assert as_table.average.average_accuracy == pytest.approx(named.average.average_accuracy, abs=1e-13)
    assert as_table.worst_case is not None and named.worst_case is not None
    assert as_table.worst_case.worst_case_accuracy == pytest.approx(named.worst_case.worst_case_accuracy, abs=1e-9)


@pytest.mark.parametrize("observer", [None, 0, 4])
def test_a_table_symmetric_within_groups_uses_the_symmetric_engine(observer: int | None) -> None:
    """f = majority(group A) XOR or(group B), A and B with their own epsilon: the symmetric engine over
    per-group counts agrees with the general engine over all transcripts."""
    mechs = [RandomizedResponse(1.0)] * 3 + [RandomizedResponse(2.0)] * 2
    f = _grouped_xor_table(3, 2)
    grouped = optimal_rules(mechs, f, W, observer=observer)
    general = optimal_rules(mechs, f, W, observer=observer, engine="general")
    assert grouped.engine == "symmetric" and general.engine == "general"
    assert grouped.average is not None and general.average is not None
    assert grouped.average.average_accuracy == pytest.approx(general.average.average_accuracy, abs=1e-12)
    assert grouped.average.worst_case_accuracy == pytest.approx(general.average.worst_case_accuracy, abs=1e-12)
    assert grouped.worst_case is not None and general.worst_case is not None  # optimal value (rules may differ)
    assert grouped.worst_case.worst_case_accuracy == pytest.approx(general.worst_case.worst_case_accuracy, abs=1e-9)
    mixed = mechs[:2] + mechs[3:] + mechs[3:4]  # groups {0, 1}, {2, 3, 4}: f is not symmetric in them
    assert optimal_rules(mixed, f, W, observer=observer, rule="average").engine == "general"


@pytest.mark.parametrize("k", [30, 40])
def test_the_worst_case_optimum_is_never_below_a_feasible_rule(k: int) -> None:
    """XOR of k parties at epsilon 1 (issue 10, item 6): the LP's rule came out at 0.499999999187, below
    the fair coin's 1/2 and the average rule's worst case. The exact XOR worst case of the average rule
    is 1/2 + tanh(1/2)^k / 2 (002 Corollary 3.1); the coin has 1/2; the optimum is at least both."""
    mechs = [RandomizedResponse(1.0)] * k
    result = optimal_rules(mechs, parse_function("xor"), accuracy_measure("zero-one", 2))
    assert result.average is not None and result.worst_case is not None
    closed = 0.5 + 0.5 * math.tanh(0.5) ** k
    assert result.average.worst_case_accuracy == pytest.approx(closed, rel=1e-12)
    assert result.worst_case.worst_case_accuracy >= max(0.5, result.average.worst_case_accuracy)
    assert result.worst_case.upper_bound is not None
    assert result.worst_case.upper_bound >= result.worst_case.worst_case_accuracy


def test_highs_stops_at_the_time_limit_for_both_methods() -> None:
    """The time limit bounds the LP as a whole, whatever phase HiGHS is in: the dual-simplex fallback gets
    only what the interior point left (before, an LP stopped at 60 s ran another 60 s), and HiGHS 1.12
    (scipy 1.17) building IPX's starting basis, which never looks at its clock, is stopped all the same
    (it ran 74-126 s past a 0.5 s limit on this LP)."""
    from mpdp.protocols.decision.worst_case import solve_worst_case
    from mpdp.protocols.errors import SolverError

    small = build_problem([RandomizedResponse(1.0)] * 3, parse_function("xor"), W).views[0]
    solve_worst_case(small, 60.0)  # starts a solver worker process: not part of what is timed
    mechs = [RandomizedResponse(e) for e in np.linspace(0.5, 1.5, 11)]  # 15-130 s without a limit
    view = build_problem(mechs, parse_function("xor"), W).views[0]
    limit = 0.5
    start = time.monotonic()
    with pytest.raises(SolverError, match="Time limit") as caught:
        solve_worst_case(view, limit)
    assert caught.value.status == 1  # HiGHS's kTimeLimit
    assert time.monotonic() - start < scaled(20 * limit)  # a kill on a loaded machine, not the LP


def test_a_time_limit_leaves_the_solution_unchanged() -> None:
    """Solved in a worker process (under a limit) or here (none): the same HiGHS on the same LP."""
    from mpdp.protocols.decision.worst_case import solve_worst_case

    for mechs in ([RandomizedResponse(e) for e in (0.3, 0.9, 1.4, 2.0)], _four_output(3)):
        for name in ("xor", "majority"):
            view = build_problem(mechs, parse_function(name), W).views[0]
            here, there = solve_worst_case(view, None), solve_worst_case(view, 60.0)
            assert np.array_equal(here.table, there.table)
            assert (here.value, here.upper_bound, here.message) == (there.value, there.upper_bound, there.message)


@pytest.mark.parametrize(("seconds", "text"), [(0.42, "0.42 s"), (12.4, "12 s"), (246, "4.1 min"), (54000, "15 h"),
                                               (3.2 * 86400, "3.2 days"), (170.4 * 86400, "170 days"),
                                               (12345.6 * 86400, "12,346 days")])
def test_durations_read_as_people_write_them(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text  # not "1.7e+02 days" (the Monte Carlo refusal at 100,000 parties)


@pytest.mark.parametrize(("function", "mechs", "observer"), [
    ("sum", [RandomizedResponse(1.0)] * 40, None),
    ("sum", [RandomizedResponse(1.0)] * 40, 3),
    ("sum", [RandomizedResponse(0.5)] * 6 + [RandomizedResponse(2.0)] * 9, None),
    ("majority", [RandomizedResponse(1.0)] * 25, 0),
    ("threshold:3", _four_output(1) * 8, None),
])
def test_the_symmetric_lp_estimate_from_sizes_alone_is_the_built_problems(function, mechs, observer) -> None:
    from mpdp.protocols.decision.worst_case import symmetric_lp_cost

    f = parse_function(function)
    problem = build_problem(mechs, f, accuracy_measure("zero-one", f.output_size(len(mechs))), observer,
                            engine="symmetric")
    assert symmetric_lp_cost(mechs, f, observer) == lp_cost(problem.views)


def test_the_lp_of_sum_at_20000_parties_is_refused_from_its_size_without_building_it() -> None:
    """A zero-one measure (None) is built only once the sizes fit: sum's (k + 1)^2 = 3.2 GB float64."""
    import tracemalloc

    tracemalloc.start()
    try:
        refusal = worst_case_refusal([RandomizedResponse(1.0)] * 20_000, parse_function("sum"), None)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # V = (|Y| - 1) (|Z_0| + |Z_1|) + 1 = 20,000 x (20,001 + 20,001) + 1 over 20,001 input classes
    assert isinstance(refusal, CostLimitError) and "800,040,001 variables over 20,001" in str(refusal)
    assert peak < 50e6
    assert worst_case_refusal([RandomizedResponse(1.0)] * 12, parse_function("sum"), None) is None
