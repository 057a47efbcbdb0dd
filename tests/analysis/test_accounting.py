"""The per-party privacy ledger."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger, Spent
from mpdp.analysis.privacy.composition import optimal_epsilon
from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous
from mpdp.protocols.errors import ParameterError


def test_house_member_sixteen_bills() -> None:
    """A member of the House answers 16 bills with (0.5, 0)-randomized response."""
    ledger = PrivacyLedger(delta_slack=1e-5)
    for bill in range(16):
        ledger = ledger.record(bill, 0.5, 0.0)
    spent = ledger.spent()
    assert spent.rounds == 16 and spent.mechanisms == 16 and spent.method == "exact"
    assert spent.epsilon == pytest.approx(optimal_epsilon(0.5, 16, 1e-5), rel=1e-12)
    assert spent.epsilon < spent.epsilon_basic == pytest.approx(8.0)
    assert spent.delta == pytest.approx(1e-5) and spent.delta_basic == 0.0


def test_budget_refusal_and_repetitions() -> None:
    budget = Budget.parse("1.0,1e-4")
    ledger = PrivacyLedger(1e-6)
    answered = 0
    for r in range(30):
        if ledger.would_exceed(budget, 0.1, 0.0):
            break
        ledger = ledger.record(r, 0.1, 0.0)
        answered += 1
    assert optimal_epsilon(0.1, answered, 1e-6) <= 1.0 < optimal_epsilon(0.1, answered + 1, 1e-6)
    assert not ledger.spent().exceeds(budget)
    # repetitions are separate releases; mixed rounds use the heterogeneous engine
    mixed = PrivacyLedger(1e-6).record(0, 0.1, 1e-7, repetitions=5).record(1, 0.3, 0.0, repetitions=2)
    spent = mixed.spent()
    assert spent.mechanisms == 7
    assert spent.epsilon == pytest.approx(compose_heterogeneous([0.1] * 5 + [0.3] * 2, [1e-7] * 5 + [0.0] * 2, 1e-6).epsilon_tilde)
    assert spent.delta_basic == pytest.approx(5e-7)
    # budget delta below the slack: any answer exceeds
    assert PrivacyLedger(1e-6).would_exceed(Budget(10.0, 1e-7), 0.1, 0.0)
    # sixteen answers of 0.1 exactly meet a budget of 1.6 at delta_slack = 0 (float noise tolerated)
    ledger = PrivacyLedger(0.0)
    for r in range(15):
        ledger = ledger.record(r, 0.1, 0.0)
    assert not ledger.would_exceed(Budget(1.6, 0.0), 0.1, 0.0)


def test_parties_with_the_same_answers_share_one_composition() -> None:
    """Two parties that answered the same rounds alike (other round ids) get the composition computed
    once; a third that answered differently gets its own, with the values of the composition itself."""
    first = PrivacyLedger(1e-6).record(0, 0.5, 0.0, 3).record(1, 0.5, 0.0, 2)
    second = PrivacyLedger(1e-6).record(7, 0.5, 0.0, 3).record(9, 0.5, 0.0, 2)
    spent = first.spent()
    assert second.spent() is spent and spent.rounds == 2 and spent.mechanisms == 5
    assert spent.epsilon == pytest.approx(optimal_epsilon(0.5, 5, 1e-6), rel=1e-12)
    other = PrivacyLedger(1e-6).record(0, 0.5, 0.0, 3).record(1, 0.7, 0.0, 2).spent()
    assert other.epsilon == pytest.approx(compose_heterogeneous([0.5] * 3 + [0.7] * 2, [0.0] * 5, 1e-6).epsilon_tilde)
    assert PrivacyLedger(1e-5).record(0, 0.5, 0.0, 5).spent().epsilon == pytest.approx(optimal_epsilon(0.5, 5, 1e-5))


def test_empty_ledger_and_errors() -> None:
    assert PrivacyLedger(1e-6).spent() == Spent(0, 0, 0.0, 0.0, 0.0, 0.0, "none")
    ledger = PrivacyLedger(1e-6).record(3, 0.2, 0.0)
    with pytest.raises(ParameterError):
        ledger.record(3, 0.2, 0.0)
    with pytest.raises(ParameterError):
        ledger.record(4, -0.2, 0.0)
    with pytest.raises(ParameterError):
        ledger.record(4, 0.2, 0.0, repetitions=0)
    with pytest.raises(ParameterError):
        PrivacyLedger(1.0)
    for text in ("1.0", "a,b", "1,2,3", "-1,0.1", "1,2"):
        with pytest.raises(ParameterError):
            Budget.parse(text)
    assert ledger.spent().as_dict()["method"] == "exact"
    assert PrivacyLedger(1e-6).record(0, math.inf, 0.0).spent().as_dict()["epsilon"] == "inf"


@settings(max_examples=40, deadline=None)
@given(
    rounds=st.lists(
        st.tuples(st.sampled_from([0.0, 1e-6, 0.05, 0.3, 1.0, 50.0]), st.sampled_from([0.0, 1e-9, 1e-3]), st.integers(1, 4)),
        min_size=1, max_size=12,
    ),
    slack=st.sampled_from([0.0, 1e-300, 1e-9, 1e-3, 0.5]),
)
def test_never_negative_or_nan_and_monotone(rounds: list, slack: float) -> None:
    ledger = PrivacyLedger(slack)
    previous = 0.0
    for i, (eps, delta, reps) in enumerate(rounds):
        ledger = ledger.record(i, eps, delta, reps)
        spent = ledger.spent()
        assert spent.epsilon >= 0.0 and not math.isnan(spent.epsilon)
        assert spent.epsilon <= spent.epsilon_basic * (1 + 1e-12)
        assert spent.epsilon >= previous * (1 - 1e-9)  # answering more never lowers the spent epsilon
        previous = spent.epsilon


def test_spending_beyond_the_float_range_is_inf_without_a_warning() -> None:  # warnings are errors here
    ledger = PrivacyLedger(delta_slack=1e-6)
    for r in range(3):
        ledger = ledger.record(r, 1e308, 0.0)
    spent = ledger.spent()
    assert spent.epsilon_basic == math.inf and spent.epsilon == math.inf
