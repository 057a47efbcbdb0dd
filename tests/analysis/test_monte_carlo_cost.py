"""The up-front estimate of a Monte Carlo accuracy estimate follows the path and the decision that run."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import binom, multinomial

from mpdp.analysis.statistics.monte_carlo import count_table, table_plan
from mpdp.analysis.theory.monte_carlo_cost import (
    MEMORY_BYTES,
    SETUP_SECONDS,
    expected_distinct_counts,
    monte_carlo_cost,
)
from mpdp.protocols import RandomizedResponse, parse_function
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure
from mpdp.protocols.rules.symmetric import observer_average_rule


def _rule(mechanisms: list[RandomizedResponse], name: str, party: int | None = None):
    f = parse_function(name)
    return observer_average_rule(mechanisms, f, accuracy_measure("zero-one", f.output_size(len(mechanisms))), party)


def _distinct(probabilities: np.ndarray, n: int) -> float:
    """E[distinct values among n iid draws] = sum_v 1 - (1 - P(v))^n."""
    return float(np.sum(1.0 - (1.0 - probabilities) ** n))


@pytest.mark.parametrize("n", [20, 200])
def test_distinct_count_vectors_of_a_pure_group_match_the_binomial_expectation(n: int) -> None:
    # under the uniform input each report is 1 with probability 1/2: c1 ~ Bin(101, 1/2)
    rule = _rule([RandomizedResponse(1.0)] * 101, "majority")
    exact = _distinct(binom.pmf(np.arange(102), 101, 0.5), n)
    # one seeded draw; the count of distinct values has sd < sqrt(exact) / 2 here: 4 sd
    assert abs(expected_distinct_counts(rule, n) - exact) < 2 * math.sqrt(exact)


def test_distinct_count_vectors_of_a_four_output_group_match_the_multinomial_expectation() -> None:
    k, delta, n = 6, 0.3, 40
    rule = _rule([RandomizedResponse(1.0, delta, True)] * k, "majority")
    symbols = [delta / 2, (1 - delta) / 2, (1 - delta) / 2, delta / 2]  # the channel's rows averaged over x
    vectors = [c for c in itertools.product(range(k + 1), repeat=4) if sum(c) == k]
    exact = _distinct(multinomial.pmf(vectors, k, symbols), n)
    assert abs(expected_distinct_counts(rule, n) - exact) < 2 * math.sqrt(exact)
    assert expected_distinct_counts(rule, 0) == 0.0


@pytest.mark.parametrize(("mechanisms", "party"), [
    ([RandomizedResponse(1.0)] * 50, None),
    ([RandomizedResponse(1.0)] * 50, 3),
    ([RandomizedResponse(0.5 + i / 100) for i in range(30)], None),
    ([RandomizedResponse(1.0, 0.01, True)] * 70, None),  # above FOUR_OUTPUT_GROUP_MAX: party by party
])
def test_the_plan_is_the_table_the_estimate_builds(mechanisms: list[RandomizedResponse], party: int | None) -> None:
    rule = _rule(mechanisms, "majority", party)
    plan = table_plan(rule)
    table = count_table(rule)
    assert (plan is None) == (table is None)
    if table is not None and plan is not None:
        assert plan[1] == table.num_classes
        assert f"(a table of {table.num_classes:,} count classes)" in monte_carlo_cost(rule, 10, "").size


def test_xor_is_linear_in_k_and_the_posterior_quadratic() -> None:
    """Per-party path (distinct epsilons): XOR decides by parity, O(k) a transcript, so doubling k doubles
    the work; majority's posterior is O(k^2), so it grows by more than 3.5 (the old model: 2^1.3 for both)."""
    def work(name: str, k: int) -> float:
        rule = _rule([RandomizedResponse(0.5 + i / (2 * k)) for i in range(k)], name)
        assert table_plan(rule) is None
        return monte_carlo_cost(rule, 10_000, "").seconds - SETUP_SECONDS

    assert work("xor", 400) / work("xor", 200) == pytest.approx(2.0)
    assert work("majority", 400) / work("majority", 200) > 3.5
    assert work("majority", 400) > 9 * work("xor", 400)  # 80,200 posterior steps against 400 parities


def test_the_memory_counts_the_gain_table_of_sum() -> None:
    # sum of k parties: |Y| = k + 1, G is (k + 1)^2 float64 (3.2 GB at k = 20,001), built twice
    cost = monte_carlo_cost(_rule([RandomizedResponse(1.0)] * 2000, "sum"), 10, "")
    assert cost.memory_bytes == MEMORY_BYTES + 2 * 2001 * 2001 * 8


def test_samples_below_one_are_refused() -> None:
    with pytest.raises(ParameterError, match="samples=0"):
        monte_carlo_cost(_rule([RandomizedResponse(1.0)] * 3, "xor"), 0, "")


@pytest.mark.parametrize(("mechanisms", "party"), [
    ([RandomizedResponse(1.0)] * 300, None),  # one group, central: the count table
    ([RandomizedResponse(1.0)] * 300, 4),  # a party: two own bits
    ([RandomizedResponse(0.5 + 0.01 * i) for i in range(40)], None),  # distinct: per-party draws
    ([RandomizedResponse(1.0, 0.05, four_output=True)] * 30, None),
])
def test_the_estimate_of_a_wide_function_needs_no_gain_table(mechanisms, party) -> None:
    """sum's estimate before its rule is built is the estimate of the built rule (its gain read only
    through its size); a binary f has none (its parity form needs the gain)."""
    from mpdp.analysis.theory.monte_carlo_cost import wide_monte_carlo_cost

    built = monte_carlo_cost(_rule(mechanisms, "sum", party), 5000, "fewer")
    assert wide_monte_carlo_cost(mechanisms, parse_function("sum"), party, 5000, "fewer") == built
    assert wide_monte_carlo_cost(mechanisms, parse_function("xor"), party, 5000, "fewer") is None


def test_counts_decisions_cost_one_recurrence_per_batch() -> None:
    """One pure mechanism, majority, per-party path: the rule decides from reported-one counts (one
    recurrence per batch), so the estimate is the symbols' cost plus COUNT_SECONDS(k) per batch, not an
    O(k^2) posterior per distinct count (at k = 10^5: ~881 s for 200 repetitions measured before)."""
    from mpdp.analysis.theory.accuracy import per_party_batch
    from mpdp.analysis.theory.monte_carlo_cost import SYMBOL_SECONDS
    from mpdp.protocols.rules.count_threshold import COUNT_SECONDS

    k, samples = 100_000, 200
    rule = _rule([RandomizedResponse(1.0)] * k, "majority")
    assert rule.by_reported_ones and table_plan(rule) is None
    batches = -(-samples // per_party_batch(samples, k))
    expected = SETUP_SECONDS + samples * k * SYMBOL_SECONDS + batches * COUNT_SECONDS(k)
    assert monte_carlo_cost(rule, samples, "").seconds == pytest.approx(expected)
    assert monte_carlo_cost(rule, samples, "").seconds < 60.0
