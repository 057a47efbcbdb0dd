"""The sweep on a dataset's real inputs: theory against simulate's per-round evaluation, a brute force over
every transcript, Monte Carlo verdicts, errors."""

from __future__ import annotations

import itertools
import math
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from mpdp.analysis.reports.evaluation import evaluate_round
from mpdp.analysis.statistics.monte_carlo import count_table
from mpdp.analysis.sweeps.dataset_sweep import bill_theory, dataset_sweep, plan_dataset_sweep
from mpdp.analysis.sweeps.sweep import SweepTask
from mpdp.parties.session.datasets import load_dataset
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import decision_rule

MAJORITY = parse_function("majority")
#: 5 members, 3 rounds; member 4 takes no part in round 2 (4 participants: the count 2 ties).
TOY = np.array([[1, 0, 1], [1, 1, 0], [0, 1, 1], [1, 0, 0], [0, -1, 1]], dtype=np.int8)


@pytest.fixture(scope="module")
def house():
    return load_dataset("house-votes-84")


def _simulate_theory(data, epsilon: float, delta: float = 0.0) -> tuple[list[float], list[float]]:
    """Per bill, the exact theories ``mpdp simulate --dataset --protocol curator`` reports
    (analysis.reports.evaluation): the randomized-response observer's average rule (``rr_theoretical_accuracy``, the
    theory of a ``--protocol rr`` round) and the curator's."""
    level = RandomizedResponse(epsilon, delta)
    rr, curator = [], []
    for b, name in enumerate(data.round_names):
        ids = np.flatnonzero(data.bits[:, b] != -1)
        x = data.bits[ids, b].astype(np.int64)
        evaluation = evaluate_round(name, [level] * ids.size, x, np.zeros(1, dtype=np.int64), MAJORITY,
                                    rule="curator", rounds=1, alpha=0.05, rng=np.random.default_rng(0),
                                    level=level)
        assert evaluation.result.theory_exact and evaluation.rr_theoretical_accuracy is not None
        rr.append(evaluation.rr_theoretical_accuracy)
        curator.append(evaluation.result.theoretical_accuracy)
    return rr, curator


def test_house_theory_is_the_mean_of_simulates_per_bill_theory(house) -> None:
    """epsilon = 1: the sweep's theory (input_accuracy of the rule's table; the curator's truthful table)
    against simulate's (observer_accuracy_on_input; curator_accuracy_on_input), an independent path."""
    task = SweepTask(1.0, 0.0, house.num_parties, "majority", "average", "central", 1)
    theory = bill_theory(task, house.bits)
    rr, curator = _simulate_theory(house, 1.0)
    assert theory.accuracy == pytest.approx(rr, abs=1e-12)
    assert theory.curator is not None and theory.curator == pytest.approx(curator, abs=1e-12)
    assert float(theory.accuracy.mean()) == pytest.approx(float(np.mean(rr)), abs=1e-12)
    curator_task = SweepTask(1.0, 0.0, house.num_parties, "majority", "curator", "central", 1)
    assert bill_theory(curator_task, house.bits).accuracy == pytest.approx(curator, abs=1e-12)


def test_four_output_theory_and_measurement_on_a_small_dataset() -> None:
    """delta = 0.1 (four-output count classes): the theory against simulate's per-round evaluation, and the
    Monte Carlo of the count classes consistent with it (seeded; alpha = 0.01 over 3 rounds)."""
    toy = SimpleNamespace(bits=TOY, round_names=("a", "b", "c"))
    task = SweepTask(1.0, 0.1, 5, "majority", "average", "central", 1)
    assert bill_theory(task, TOY).accuracy == pytest.approx(_simulate_theory(toy, 1.0, 0.1)[0], abs=1e-12)
    r = dataset_sweep([1.0], TOY, toy.round_names, dataset="toy", delta=0.1, rule="average", samples=5000,
                      seed=5, alpha=0.01)
    assert r.consistent and r.points[0].delta == 0.1


def _brute_force(x: np.ndarray, epsilon: float, rule) -> tuple[float, float]:
    """(accuracy of the Bayes rule under a uniform prior computed exactly over every transcript and every
    input, accuracy of ``rule`` on x from its probabilities of every transcript)."""
    n = x.size
    p = Fraction(3, 4)  # e^eps / (1 + e^eps) at eps = ln 3, exactly
    assert math.isclose(epsilon, math.log(3))
    def likelihood(tau, bits):
        return math.prod(p if t == b else 1 - p for t, b in zip(tau, bits))
    inputs = list(itertools.product((0, 1), repeat=n))
    truth = int(2 * x.sum() > n)
    bayes = Fraction(0)
    taus = list(itertools.product((0, 1), repeat=n))
    for tau in taus:
        score = [sum(likelihood(tau, z) for z in inputs if int(2 * sum(z) > n) == y) for y in (0, 1)]
        decision = 0 if score[0] >= score[1] else 1  # a tie answers the smallest output, as the rules do
        bayes += likelihood(tau, x) * (decision == truth)
    probs = rule.probabilities(np.array(taus, dtype=np.uint8))
    given = sum(float(likelihood(tau, x)) * probs[i, truth] for i, tau in enumerate(taus))
    return float(bayes), float(given)


@pytest.mark.parametrize("kind", ["average", "worst-case"])
def test_one_bill_by_brute_force_over_every_transcript(kind) -> None:
    epsilon = math.log(3)
    task = SweepTask(epsilon, 0.0, 5, "majority", kind, "central", 1)
    theory = bill_theory(task, TOY)
    for b in range(TOY.shape[1]):
        x = TOY[TOY[:, b] != -1, b].astype(np.int64)
        rule = decision_rule([RandomizedResponse(epsilon, 0.0)] * x.size, MAJORITY, np.eye(2), kind=kind)
        bayes, given = _brute_force(x, epsilon, rule)
        assert theory.accuracy[b] == pytest.approx(given, abs=1e-12)
        if kind == "average":
            assert theory.accuracy[b] == pytest.approx(bayes, abs=1e-12)


def test_monte_carlo_points_consistent_and_reproducible() -> None:
    """Seeded; family-wise level alpha = 0.01 over 2 points x 3 rounds (each round at 0.01 / 6)."""
    options = dict(rule=["average", "worst-case"], samples=4000, seed=11, alpha=0.01)
    r = dataset_sweep([0.7], TOY, ["a", "b", "c"], dataset="toy", **options)
    assert r.consistent and len(r.points) == 2
    for p in r.points:
        assert p.samples == 3 * 4000 and p.empirical_accuracy == p.successes / p.samples
        assert p.ci_low <= p.theoretical_accuracy <= p.ci_high
        assert p.observer == "central" and p.parties == 5
    with ThreadPoolExecutor(2) as pool:
        again = dataset_sweep([0.7], TOY, ["a", "b", "c"], dataset="toy", executor=pool, **options)
    assert again.points == r.points
    doc = r.to_dict()
    assert doc["inputs"]["dataset"] == "toy" and doc["inputs"]["participants"] == [5, 4, 5]
    assert "per round of the dataset" in doc["test"]


def test_the_worst_case_column_is_the_worst_bill_and_the_curator_is_measured() -> None:
    r = dataset_sweep([1.0, 2.0], TOY, ["a", "b", "c"], dataset="toy", protocol="curator", samples=3000, seed=2)
    task = SweepTask(1.0, 0.0, 5, "majority", "curator", "central", 1)
    per_bill = bill_theory(task, TOY).accuracy
    first = r.points[0]
    assert first.theoretical_accuracy == pytest.approx(per_bill.mean(), abs=1e-15)
    assert first.theoretical_worst_case == pytest.approx(per_bill.min(), abs=1e-15)
    assert first.curator_accuracy == first.theoretical_accuracy and r.consistent


def test_an_engine_that_measures_the_wrong_thing_is_flagged() -> None:
    """A check that can fail: successes drawn at theory - 0.05 on every bill are inconsistent."""
    checked = plan_dataset_sweep([1.0], TOY, ["a", "b", "c"], dataset="toy", rule="average", samples=4000)
    theory = bill_theory(checked.plan.tasks[0], TOY)
    rng = np.random.default_rng(0)
    wrong = rng.binomial(4000, theory.accuracy - 0.05).astype(np.int64)
    assert not checked.result([(theory, wrong)], "monte-carlo").consistent


@pytest.mark.parametrize(("options", "match"), [
    (dict(observer="party"), "observer='party'"),
    (dict(parties=7), "parties=7"),
    (dict(protocol="curator", observer="central"), "observer='central'"),
    (dict(delta=0.1), None),
])
def test_bad_options_name_the_value(options, match) -> None:
    bits = np.ones((61, 2), dtype=np.int8)
    error = SizeLimitError if match is None else ParameterError
    with pytest.raises(error, match=match):
        plan_dataset_sweep([1.0], bits, ["a", "b"], dataset="ones", **options)


def test_bad_bits_name_the_round() -> None:
    with pytest.raises(ParameterError, match="round='b'"):
        plan_dataset_sweep([1.0], np.array([[1, -1], [0, -1]], dtype=np.int8), ["a", "b"], dataset="x")
    with pytest.raises(ParameterError, match="bits"):
        plan_dataset_sweep([1.0], np.array([[2]], dtype=np.int8), ["a"], dataset="x")


def test_a_worst_case_lp_over_the_time_limit_is_refused_before_any_bill() -> None:
    bits = np.ones((435, 2), dtype=np.int8)
    bits[:10, 1] = -1
    with pytest.raises(SizeLimitError, match="worst-case LP .* over the 60 s time limit.*rule='average'"):
        dataset_sweep([1.0], bits, ["a", "b"], dataset="toy", function="sum", samples=10,
                      progress=lambda i, total: pytest.fail("a point ran"))


def test_a_fixed_input_count_must_fit_its_group() -> None:
    rule = decision_rule([RandomizedResponse(1.0, 0.0)] * 3, MAJORITY, np.eye(2))
    table = count_table(rule)
    assert table is not None
    with pytest.raises(ParameterError, match=r"ones=\(4,\)"):
        table.correct_on_input((4,), 1, 10, np.random.default_rng(0))
    assert table.correct_on_input((3,), 1, 0, np.random.default_rng(0)) == 0


def test_the_worst_case_lp_is_checked_at_the_rounds_participant_counts(monkeypatch) -> None:
    """The LP solved per round has the round's participants, not the dataset's k rows: 435 rows of which at
    most 6 vote fit (at 435 the LP of sum is refused), and the check runs once per distinct count."""
    import mpdp.analysis.sweeps.sweep as sweep_module

    bits = np.full((435, 3), -1, dtype=np.int8)
    bits[:5, 0], bits[:6, 1], bits[:5, 2] = 1, 0, 1
    checked = []
    refusal = sweep_module.worst_case_refusal

    def spy(mechanisms, *args):
        checked.append(len(mechanisms))
        return refusal(mechanisms, *args)

    monkeypatch.setattr(sweep_module, "worst_case_refusal", spy)
    plan = plan_dataset_sweep([0.5, 1.0], bits, ["a", "b", "c"], dataset="toy", function="sum", rule="worst-case")
    assert sorted(checked) == [5, 6]
    assert plan.plan.inputs["participants"] == [5, 6, 5]
    result = dataset_sweep([1.0], bits, ["a", "b", "c"], dataset="toy", function="sum", rule="worst-case",
                           samples=200, seed=3)
    assert result.points[0].parties == 435 and result.consistent
