"""``sweep``: the grid, exact theory checked against closed forms, seeded results, the document and the plot."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure
from scipy.optimize import linprog
from scipy.stats import binom

from mpdp.analysis.reports.documents import to_json_text
from mpdp.analysis.sweeps.grid import epsilon_grid, grid_of, grid_text
from mpdp.analysis.sweeps.sweep import SweepResult, sweep
from mpdp.protocols.errors import CostLimitError, ParameterError, SizeLimitError
from mpdp.protocols.functions import parse_function
from mpdp.protocols.randomization.mechanisms import truth_and_flip
from tests.protocols.hypercube_lp import hypercube_optimum


def _majority_of_reports(k: int, epsilon: float) -> float:
    """Closed form: odd k, pure RR, the optimal average rule is the majority of the reports (by symmetry
    and monotonicity of the count posterior); P(right) = sum_a Bin(k, 1/2)(a) P(report majority = f | a)."""
    p, q = truth_and_flip(epsilon)
    total = 0.0
    for a in range(k + 1):
        reported = np.convolve(binom.pmf(np.arange(a + 1), a, p), binom.pmf(np.arange(k - a + 1), k - a, q))
        ones = reported[k // 2 + 1:].sum()
        total += binom.pmf(a, k, 0.5) * (ones if a > k // 2 else 1.0 - ones)
    return float(total)


def test_epsilon_grid_log_and_linear() -> None:
    np.testing.assert_allclose(epsilon_grid(0.05, 2, 3), [0.05, np.sqrt(0.1), 2.0], rtol=1e-12)
    np.testing.assert_allclose(epsilon_grid(0, 2, 5, "linear"), [0, 0.5, 1, 1.5, 2])
    for bad in [(0, 2, 5, "log"), (2, 1, 3, "log"), (1, 2, 0, "log"), (1, float("inf"), 3, "log"),
                (1, 2, 3, "cubic"), (-1, 2, 3, "linear")]:
        with pytest.raises(ParameterError):
            epsilon_grid(*bad)


def test_points_theory_equals_closed_form_and_measurement_agrees() -> None:
    result = sweep([0.3, 1.0, 2.5], parties=21, rule="average", observer="central", samples=20_000, seed=7)
    assert isinstance(result, SweepResult) and len(result.points) == 3
    for point in result.points:
        assert point.theoretical_accuracy == pytest.approx(_majority_of_reports(21, point.epsilon), abs=1e-12)
        assert point.theoretical_worst_case <= point.theoretical_accuracy
        assert point.curator_accuracy is not None and point.curator_accuracy >= point.theoretical_accuracy
        assert point.successes == round(point.empirical_accuracy * point.samples)
        assert point.ci_low <= point.empirical_accuracy <= point.ci_high
    # the verdict is the exact binomial test at alpha / points (Bonferroni over 3 points)
    assert all(p.consistent == (p.p_value >= 0.05 / 3) for p in result.points)
    assert result.consistent


def test_same_seed_same_points_whatever_the_executor() -> None:
    kwargs = dict(parties=(9, 10), delta=(0.0, 0.05), function=("majority", "xor"), observer="party",
                  samples=3000, seed=11)
    here = sweep([0.5], **kwargs)
    with ThreadPoolExecutor(3) as pool:
        threaded = sweep([0.5], executor=pool, **kwargs)
    assert here.points == threaded.points and len(here.points) == 2 * 2 * 2 * 2
    other = sweep([0.5], **{**kwargs, "seed": 12})
    assert [p.successes for p in other.points] != [p.successes for p in here.points]


def test_document_csv_and_plot(tmp_path) -> None:
    result = sweep(epsilon_grid(0.2, 2, 4), parties=15, samples=2000, seed=3)
    doc = json.loads(to_json_text(result.to_dict()))
    assert doc["schema_version"] == 1 and doc["mpdp_version"] and doc["inputs"]["parties"] == [15]
    assert len(doc["points"]) == 16
    for key in ("epsilon", "rule", "observer", "theoretical_accuracy", "empirical_accuracy", "ci_low",
                "ci_high", "consistent"):
        assert all(key in p for p in doc["points"])
    assert {p["observer"] for p in doc["points"]} == {"central", "party 0"}
    text = result.to_csv(str(tmp_path / "s.csv"))
    assert (tmp_path / "s.csv").read_text() == text and len(text.strip().splitlines()) == 17
    backend = matplotlib.get_backend()
    fig = result.plot()
    assert isinstance(fig, Figure) and matplotlib.get_backend() == backend
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and "nats" in ax.get_xlabel()
    assert len(ax.containers) == 4  # one error-bar series per (rule, observer)
    theory = [line for line in ax.get_lines() if str(line.get_label()).startswith("theory: ")]
    assert len(theory) == 4 and len({line.get_marker() for line in theory}) == 4  # curves that coincide
    # every curve is in the legend: the dotted worst cases (their values: each point's worst case) and the
    # measured points too
    legend = {t.get_text() for t in ax.get_legend().get_texts()}
    worst = [line for line in ax.get_lines() if line.get_linestyle() == ":"]
    assert len(worst) == 4 and all(str(line.get_label()) in legend for line in worst + theory)
    by_label = {str(line.get_label()): line for line in worst}
    central_average = sorted((p for p in result.points if (p.rule, p.observer) == ("average", "central")),
                             key=lambda p: p.epsilon)
    assert list(by_label["theory, worst case: majority, $k$=15, average rule, central"].get_ydata()) == [
        p.theoretical_worst_case for p in central_average]
    assert sum(label.startswith("measured (95% CI): ") for label in legend) == 4
    fig.savefig(tmp_path / "s.png")
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    other = Figure()
    target = other.add_subplot()
    assert result.plot(ax=target) is other
    assert repr(result).startswith("SweepResult(16 points, epsilon 0.2..2") and len(repr(result)) < 120


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"rule": "best"}, "rule"),
    ({"observer": "party 3"}, "observer"),
    ({"function": "table:0,1,1,0"}, "symmetric"),
    ({"samples": 0}, "samples"),
    ({"alpha": 1.5}, "alpha"),
    ({"parties": 0}, "parties"),
    ({"seed": -1}, "seed"),
])
def test_bad_input_is_named(kwargs, match) -> None:
    with pytest.raises(ParameterError, match=match):
        sweep([1.0], **kwargs)


def test_four_output_beyond_the_exact_engine_is_refused_up_front() -> None:
    with pytest.raises(SizeLimitError, match="delta=0, pure randomized response"):
        sweep([1.0], parties=101, delta=0.01)
    with pytest.raises(ParameterError, match="epsilon"):
        sweep([1.0, float("inf")])


def test_a_worst_case_lp_over_the_time_limit_is_refused_before_any_point() -> None:
    """sum of k = 435: the LP has k outputs - 1 chains of (k + 1) classes + (k + 1) inputs, + t: 379,321
    variables, estimated over 60 s. The average points come first in the grid; none may run (the dataset
    sweep of the House spent 3 minutes on them before this refusal)."""
    done: list[int] = []
    variables = 435 * 2 * 436 + 1
    with pytest.raises(CostLimitError, match=rf"{variables:,} variables over 436 input classes.*rule='average'"):
        sweep([1.0, 2.0], parties=435, function="sum", rule=["average", "worst-case"], observer="central",
              progress=lambda i, total: done.append(i))
    assert done == []
    with pytest.raises(CostLimitError, match="over 435 input classes, 2 LPs"):  # party 0: one LP per own bit
        sweep([1.0], parties=435, function="sum", rule="worst-case", observer="party")


def _curator_by_linear_programming(k: int, epsilon: float, delta: float) -> float:
    """Brute force, independent of 001's construction: the best average accuracy of any (epsilon, delta)-DP
    release of majority that is a function of the count c (enough by symmetry: averaging a mechanism over
    permutations of the voters keeps its privacy and its average accuracy), by a linear program over
    r_c = P(release 1 | c): neighbouring inputs differ in one vote, so counts c and c + 1 are neighbours."""
    weights = binom.pmf(np.arange(k + 1), k, 0.5)
    yes = 2 * np.arange(k + 1) > k
    gain = np.where(yes, weights, -weights)  # accuracy = sum_c w_c [yes_c r_c + (1 - yes_c)(1 - r_c)]
    rows, bounds = [], []
    for c in range(k):
        for a, b in ((c, c + 1), (c + 1, c)):
            row = np.zeros(k + 1)  # P(1 | a) <= e^eps P(1 | b) + delta
            row[a], row[b] = 1.0, -np.exp(epsilon)
            rows.append(row)
            bounds.append(delta)
            row = np.zeros(k + 1)  # P(0 | a) <= e^eps P(0 | b) + delta
            row[a], row[b] = -1.0, np.exp(epsilon)
            rows.append(row)
            bounds.append(delta + np.exp(epsilon) - 1.0)
    best = linprog(-gain, A_ub=np.array(rows), b_ub=np.array(bounds), bounds=[(0.0, 1.0)] * (k + 1),
                   method="highs")
    assert best.status == 0
    return float(-best.fun + weights[~yes].sum())


@pytest.mark.parametrize(("k", "epsilon", "delta"), [(5, 0.5, 0.0), (7, 1.0, 0.05), (6, 1.5, 0.0)])
def test_the_curator_curve_is_the_best_private_release(k, epsilon, delta) -> None:
    result = sweep([epsilon], parties=k, delta=delta, rule="average", observer=("central", "party"), samples=10)
    central, party = result.points
    assert central.curator_accuracy == pytest.approx(_curator_by_linear_programming(k, epsilon, delta), abs=1e-7)
    assert party.curator_accuracy is None  # the curator's curve is the central observer's comparison
    assert central.curator_accuracy >= central.theoretical_accuracy  # the trusted curator beats randomized response
    doc = result.to_dict()
    assert doc["source"] == "monte-carlo" and doc["points"][0]["curator_accuracy"] == central.curator_accuracy


def test_the_curator_protocol_by_monte_carlo() -> None:
    """--protocol curator (no broker): the release is the decision; theory = the curator's curve."""
    result = sweep([0.4, 1.2, 3.0], parties=9, protocol="curator", samples=20_000, seed=5)
    for point in result.points:
        assert (point.rule, point.observer) == ("curator", "central")
        assert point.theoretical_accuracy == point.curator_accuracy
        assert point.theoretical_accuracy == pytest.approx(_curator_by_linear_programming(9, point.epsilon, 0.0),
                                                           abs=1e-7)
        assert point.theoretical_worst_case < point.theoretical_accuracy
    assert result.consistent and result.inputs["rule"] == ["curator"]
    assert sweep([0.4, 1.2, 3.0], parties=9, protocol="curator", samples=20_000, seed=5).points == result.points


@pytest.mark.parametrize("function", ["and", "or", "threshold:3", "xor"])
def test_the_curator_curve_of_every_binary_function_is_the_hypercube_optimum(function) -> None:
    """curator_accuracy (central observer) = the best average accuracy of any (epsilon, delta)-DP release of f
    over the full hypercube {0,1}^5 (a brute-force LP with no symmetry assumed); the party has none."""
    truth = parse_function(function).truth_table(5)
    result = sweep([0.3, 1.0, 2.5], parties=5, delta=(0.0, 0.05), function=function, rule="average",
                   observer=("central", "party"), samples=10)
    for point in result.points:
        if point.observer == "party 0":
            assert point.curator_accuracy is None
            continue
        assert point.curator_accuracy == pytest.approx(hypercube_optimum(truth, point.epsilon, point.delta), abs=1e-8)


def test_the_curator_of_any_binary_function_by_monte_carlo() -> None:
    """--protocol curator for and / or / threshold:3 / xor: theory = the hypercube optimum, worst case = its
    balanced bound, Monte Carlo consistent; no curator for sum."""
    result = sweep([0.4, 1.5], parties=5, function=("and", "or", "threshold:3", "xor"), protocol="curator",
                   samples=20_000, seed=9)
    for point in result.points:
        truth = parse_function(point.function).truth_table(5)
        assert point.theoretical_accuracy == point.curator_accuracy == pytest.approx(
            hypercube_optimum(truth, point.epsilon, 0.0), abs=1e-8)
        assert point.theoretical_worst_case <= point.theoretical_accuracy + 1e-12  # xor: equal
    assert result.consistent and len(result.points) == 8
    xor = [p for p in result.points if p.function == "xor"]
    assert [p.theoretical_accuracy for p in xor] == pytest.approx([1 / (1 + np.exp(-e)) for e in (0.4, 1.5)],
                                                                  abs=1e-12)  # e^eps / (1 + e^eps)
    assert sweep([1.0], parties=5, function="sum", rule="average", observer="central",
                 samples=10).points[0].curator_accuracy is None
    with pytest.raises(ParameterError, match="binary"):
        sweep([1.0], parties=5, function="sum", protocol="curator")


def test_the_curator_is_001s_mechanism_for_a_binary_function_only() -> None:
    from mpdp.analysis.sweeps.sweep import binary_curator
    from mpdp.protocols.colorings.majority_mechanism import central_mechanism

    assert binary_curator("sum", 7, 1.0, 0.0) is None
    curator = binary_curator("majority", 7, 1.0, 0.0)
    assert curator is not None
    np.testing.assert_array_equal(curator.truthful, central_mechanism("majority", 7, 1.0, 0.0).truthful)


@pytest.mark.parametrize(("typed", "scale"), [("0.05:2:20", "log"), ("0:2:9", "linear"), ("0.1:3:12", "linear"),
                                              ("1e-3:10:7", "log")])
def test_grid_text_is_the_grid_as_typed(typed: str, scale: str) -> None:
    low, high, steps = typed.split(":")
    text = grid_text(list(grid_of(typed, scale)))
    assert text == f"{float(low):g}:{float(high):g}:{steps}, {scale}"
    again, again_scale = text.split(", ")
    np.testing.assert_array_equal(grid_of(again, again_scale), grid_of(typed, scale))  # it reads back


def test_grid_text_of_other_values() -> None:
    assert grid_text([0.5]) == "0.5"
    assert grid_text([0.1, 0.2, 0.7]) == "0.1, 0.2, 0.7"  # neither evenly nor geometrically spaced
    assert grid_text([1 / 3, 2.0]) == "0.3333, 2"

