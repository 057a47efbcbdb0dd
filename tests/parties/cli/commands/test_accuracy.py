"""``mpdp accuracy`` end to end through parties.cli.main."""

from __future__ import annotations

import json
import math
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mpdp
from mpdp.analysis.theory.accuracy import PROGRESS_STEPS
from mpdp.parties.api.accuracies import compact_values
from mpdp.parties.api.params import function_of, randomized_responses
from mpdp.parties.api.value_lists import parse_list
from mpdp.parties.cli.main import main
from mpdp.protocols.decision.engine_cost import symmetric_rule_cost
from mpdp.protocols.decision.factors import FOUR_OUTPUT_GROUP_MAX
from mpdp.protocols.decision.worst_case import TIME_LIMIT_STATUS
from mpdp.protocols.errors import SizeLimitError, SolverError
from tests.calibration import scaled
from tests.parties.cli.invoke import ok, refused

VECTORS = Path(__file__).parents[3] / "vectors" / "decision_rules.json"


def _json(capsys, *argv):
    return ok(capsys, "accuracy", *argv, "--json")


def test_json_fields_and_vector_values(capsys):
    # vector mpc-001: k=2, eps (0.5, 1.5), AND, zero-one, central
    out = _json(capsys, "--epsilon", "0.5,1.5", "--function", "and")
    assert out["k"] == 2 and out["function"] == "and" and out["measure"] == "zero-one"
    assert out["observer"] == "central" and out["engine"] in ("general", "symmetric")
    assert out["rules"]["average"]["average_accuracy"] == pytest.approx(0.75445343083, abs=1e-9)
    assert out["rules"]["average"]["worst_case_accuracy"] == pytest.approx(0.508906861659, abs=1e-9)
    assert out["rules"]["worst_case"]["worst_case_accuracy"] == pytest.approx(0.60212777411, abs=1e-9)


def test_party_and_delta_and_measure(capsys):
    # vector mpc-030: four-output, sum with negative absolute error, party 0
    out = _json(capsys, "--epsilon", "0.3,0.9,1.5", "--delta", "0,0.1,0.3", "--function", "sum",
                "--measure", "absolute-error", "--party", "0")
    assert out["observer"] == 0
    assert out["rules"]["average"]["average_accuracy"] == pytest.approx(-0.354623295616, abs=1e-9)
    assert out["rules"]["worst_case"]["worst_case_accuracy"] == pytest.approx(-0.368638788454, abs=1e-9)


def test_table_from_file_and_rule_choice(capsys, tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("0 1\n1 1\n0 0\n1 0\n")
    out = _json(capsys, "--epsilon", "1*3", "--function", f"table:@{path}", "--rule", "average")
    assert out["engine"] == "general" and set(out["rules"]) == {"average"}
    inline = _json(capsys, "--epsilon", "1,1,1", "--function", "table:0,1,1,1,0,0,1,0", "--rule", "average")
    assert inline["rules"] == out["rules"]


def test_text_output_names_engine(capsys):
    assert main(["accuracy", "--epsilon", "1*50", "--function", "majority"]) == 0
    text = capsys.readouterr().out
    assert "engine=symmetric" in text and "worst-case rule" in text


@pytest.mark.parametrize("argv,needle", [
    (["--epsilon", "1,-1", "--function", "xor"], "epsilon"),
    (["--epsilon", "1,1", "--function", "nope"], "function"),
    (["--epsilon", "1,1", "--delta", "0.1,0.1,0.1", "--function", "xor"], "--delta"),
    (["--epsilon", "1,1", "--function", "xor", "--party", "5"], "party"),
    (["--epsilon", "1,1", "--function", "table:@/nonexistent/file"], "readable"),
    (["--epsilon", "1*25", "--function", "table:@/dev/null", "--rule", "average"], "table"),
])
def test_errors_exit_2_with_one_line(capsys, argv, needle):
    assert needle in refused(capsys, "accuracy", *argv)


def test_by_default_a_worst_case_lp_that_does_not_fit_is_skipped(capsys) -> None:
    # 15 distinct epsilons: an LP over 2^15 input classes, estimated at ~20 min (protocols.decision.worst_case.lp_cost)
    eps = ",".join(str(0.1 * i) for i in range(1, 16))
    report = _json(capsys, "--epsilon", eps, "--function", "majority")
    assert set(report["rules"]) == {"average"} and "60 s time limit" in report["worst_case_skipped"]
    line = refused(capsys, "accuracy", "--epsilon", eps, "--function", "majority", "--rule", "worst-case")
    assert f"{2**15:,} input classes" in line and "min" in line and "--time-limit" in line


def test_a_binary_table_file_is_a_one_line_error(capsys, tmp_path) -> None:
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 4)
    assert "UTF-8" in refused(capsys, "accuracy", "--epsilon", "1,1", "--function", f"table:@{binary}")


def test_truth_table_outputs_are_bounded(capsys) -> None:
    line = refused(capsys, "accuracy", "--epsilon", "1,1", "--function", "table:0,1,1,99999999999999999999999")
    assert "0..4095" in line


@pytest.mark.parametrize("limit", ["-1", "0", "nan", "inf"])
def test_time_limit_is_checked(limit: str, capsys) -> None:
    assert "--time-limit" in refused(capsys, "accuracy", "--epsilon", "1,1", "--function", "xor", f"--time-limit={limit}")


@pytest.mark.parametrize("eps", ["708.6", "709", "709.7"])
def test_epsilon_near_the_float_limit(capsys, eps: str) -> None:  # OverflowError in scipy's binom.pmf before
    doc = ok(capsys, "accuracy", "--epsilon", f"{eps},{eps}", "--function", "majority", "--json")
    # two parties report their bits except with probability 2q, q = 1 / (1 + e^eps) < 1e-307: accuracy 1
    assert doc["rules"]["average"]["average_accuracy"] == 1.0 and doc["rules"]["average"]["exact"]


def test_infinite_epsilon_is_said_once(capsys) -> None:
    assert main(["accuracy", "--epsilon", "inf*3,1", "--function", "majority"]) == 0
    err = capsys.readouterr().err
    assert err == ("mpdp: warning: 3 parties with epsilon inf: randomized response then reports the true bit "
                   "(no privacy)\n")
    assert main(["accuracy", "--epsilon", "1,2", "--function", "majority"]) == 0
    assert capsys.readouterr().err == ""


def test_epsilon_1e308_leaks_no_runtime_warning(capsys) -> None:  # warnings are errors in the tests
    ok(capsys, "compose", "--epsilon", "1e308", "-k", "3")
    ok(capsys, "accuracy", "--epsilon", "1e308,1e308", "--function", "majority")


def test_a_monte_carlo_estimate_over_the_time_limit_is_refused_up_front(capsys) -> None:
    """Issue 10, item 5: parties above the exact engines switched silently to 100,000 Monte Carlo samples
    (hours). Here 1,001 distinct epsilons: 2^1001 transcript classes, and the posterior rule decides each
    sampled transcript by an O(k^2) recursion (~15 ms at k = 1,001): about 25 min, refused before any
    work (analysis.theory.monte_carlo_cost), after the reason no exact engine runs."""
    epsilon = ",".join(f"{0.5 + i / 1000:g}" for i in range(1001))
    line = refused(capsys, "accuracy", "--epsilon", epsilon, "--function", "majority")
    assert "100,000 transcripts of 1,001 parties" in line and "--samples" in line and "--time-limit" in line
    assert "min and" in line  # minutes, stated before any work
    assert line.index("no exact engine: transcript classes=") < line.index("the Monte Carlo") < line.index("--samples")


def test_a_four_output_group_over_its_limit_is_named_before_the_samples(capsys) -> None:
    """--delta 0.01 with 1,000 parties: no exact engine holds a four-output group above
    FOUR_OUTPUT_GROUP_MAX; the refusal says so first, then why the Monte Carlo fallback does not fit."""
    line = refused(capsys, "accuracy", "--epsilon", "1*1000", "--delta", "0.01", "--function", "majority")
    limit = f"four-output group size=1000 is not allowed: at most {FOUR_OUTPUT_GROUP_MAX}"
    assert line.startswith(f"mpdp: error: no exact engine: {limit}")
    assert line.index(limit) < line.index("the Monte Carlo accuracy estimate") < line.index("--samples")
    assert "100,000 transcripts of 1,000 parties" in line and "over the 60 s time limit" in line


def test_the_monte_carlo_fallback_of_a_large_four_output_group_runs(capsys) -> None:
    """The same group with few samples is estimated (it drew party by party: its count table needs a
    likelihood factor, which stops at FOUR_OUTPUT_GROUP_MAX; before, that raised the size limit from
    inside the fallback). At epsilon 30 a party's report differs from its bit with probability ~1e-13,
    so every one of the 300 sampled majorities is decided right."""
    doc = _json(capsys, "--epsilon", "30*101", "--delta", "0.01", "--function", "majority", "--samples", "300",
                "--seed", "4")
    rule = doc["rules"]["average"]
    assert doc["engine"] == "posterior-monte-carlo" and not rule["exact"] and rule["samples"] == 300
    assert rule["average_accuracy"] == 1.0  # P(any error) per sample < 101 * 2 e^-30 (0 errors expected)


def test_xor_of_20001_parties_is_exact_in_product_form_and_matches_corollary_3_1(capsys) -> None:
    """XOR of 20,001 equal parties: once above the 20,000-party cap of a likelihood factor (issue 23), so a
    Monte Carlo estimate; now the symmetric engine's cost model sees parity views (product form, O(k), no
    likelihood built: mpdp.protocols.decision.parity), estimates them at a fraction of a second and runs them.
    The exact accuracy is 002 Corollary 3.1, (1 + tanh(eps/2)^k) / 2 (checked against the vectors' closed
    form below), to 1e-12."""
    vectors = json.loads(VECTORS.read_text())["cases"]
    homogeneous_xor = [c for c in vectors if c["inputs"]["function_name"] == "xor" and c["inputs"]["delta"][0] == 0
                       and len(set(c["inputs"]["eps"])) == 1 and c["inputs"]["observer"] == "central"]
    assert homogeneous_xor
    for case in homogeneous_xor:  # the product form is Corollary 3.1's value
        k, eps = case["inputs"]["k"], case["inputs"]["eps"][0]
        assert 0.5 * (1 + math.tanh(eps / 2) ** k) == pytest.approx(case["expected"]["closed_form_corollary_3_1"],
                                                                   abs=1e-9)
    doc = _json(capsys, "--epsilon", "12*20001", "--function", "xor")
    expected = 0.5 * (1 + math.tanh(6.0) ** 20001)  # 0.891
    assert doc["engine"] == "symmetric" and doc["rules"]["average"]["exact"]
    for rule in ("average", "worst_case"):  # the average rule is the worst-case one (an equalizer, no LP)
        assert doc["rules"][rule]["average_accuracy"] == pytest.approx(expected, abs=1e-12)
        assert doc["rules"][rule]["worst_case_accuracy"] == pytest.approx(expected, abs=1e-12)
    estimate = symmetric_rule_cost(randomized_responses("12*20001"), function_of("xor"))
    assert estimate is not None and estimate.seconds < 1 and doc["estimates"]["average"] == estimate.summary()
    assert "parity product form" in doc["estimates"]["average"]


def _one_group_majority_directly(k: int, eps: float) -> tuple[float, float]:
    """The optimal average rule of majority over k equal pure parties (k odd), zero-one, central observer, by
    002 eqs. (1), (3) directly: the reported-one count t is Bin(k, 1/2) under the uniform prior, the posterior
    probability that f = 1 is U(t) = P(Bin(t, p) + Bin(k - t, q) >= sigma) (sigma = (k + 1) / 2), the rule
    answers 1 iff U(t) > 1/2 (a threshold tau, U increasing), so the average accuracy is sum_t P(t) max(U, 1 - U)
    and the worst case the smaller of P(T >= tau | sigma ones) and P(T < tau | sigma - 1 ones), T given a ones
    being Bin(a, p) + Bin(k - a, q). scipy.stats binomial pmfs and tails, the t within 8 sqrt(k) of k / 2 (the
    rest has mass < 1e-27)."""
    from scipy.stats import binom

    p = math.exp(eps) / (1 + math.exp(eps))
    sigma = (k + 1) // 2

    def at_least(m: int, ones: np.ndarray) -> np.ndarray:  # P(Bin(a, p) + Bin(k - a, 1 - p) >= m), per a
        out = []
        for a in ones:  # Bin(a, p) within 15 standard deviations of its mean (outside: mass < 1e-40)
            spread = 15 * math.sqrt(a * p * (1 - p)) + 5
            b = np.arange(max(0, int(a * p - spread)), min(a, int(a * p + spread)) + 1)
            out.append(float(binom.pmf(b, a, p) @ binom.sf(m - b - 1, k - a, 1 - p)))
        return np.array(out)

    reach = int(8 * math.sqrt(k))
    t = np.arange(k // 2 - reach, k // 2 + reach + 1)
    u = at_least(sigma, t)
    average = float(binom.pmf(t, k, 0.5) @ np.maximum(u, 1 - u))
    tau = int(t[np.argmax(u > 0.5)])
    yes_at_sigma, yes_below = at_least(tau, np.array([sigma, sigma - 1]))
    return average, min(float(yes_at_sigma), 1.0 - float(yes_below))


def test_25000_equal_parties_run_the_count_engine_because_its_estimate_is_the_smaller(capsys) -> None:
    """Majority of 25,001 equal parties, the average rule: no size cap (issue 23) leaves both exact engines
    able to answer; their estimates are compared and the cheaper runs, the count engine (~0.05 s against
    the symmetric engine's banded likelihood, seconds), printing its estimate. Its accuracies are 002 eqs.
    (1), (3) computed directly (to 1e-9)."""
    from mpdp.protocols.rules.count_threshold import count_engine_cost

    mechanisms = randomized_responses("1*25001")
    counts, exact = count_engine_cost(mechanisms), symmetric_rule_cost(mechanisms, function_of("majority"))
    assert counts is not None and exact is not None and counts.seconds < exact.seconds
    doc = _json(capsys, "--epsilon", "1*25001", "--function", "majority", "--rule", "average")
    assert doc["engine"] == "counts" and doc["estimates"]["average"] == counts.summary()
    average, worst = _one_group_majority_directly(25001, 1.0)
    assert doc["rules"]["average"]["average_accuracy"] == pytest.approx(average, abs=1e-9)
    assert doc["rules"]["average"]["worst_case_accuracy"] == pytest.approx(worst, abs=1e-9)
    assert 0.6 < average < 0.7 and 0.45 < worst < 0.55  # not a degenerate value
    # asked for, the symmetric engine runs the same rule from its banded likelihood, as its estimate said it could
    symmetric = _json(capsys, "--epsilon", "1*25001", "--function", "majority", "--rule", "average",
                      "--engine", "symmetric")
    assert symmetric["engine"] == "symmetric" and symmetric["estimates"]["average"] == exact.summary()
    assert symmetric["rules"]["average"]["average_accuracy"] == pytest.approx(average, abs=1e-9)


#: 40 distinct epsilons and xor: too many count classes for the exact engines, the Monte Carlo estimate
DISTINCT = [0.5 + i / 1000 for i in range(40)]


def test_the_monte_carlo_path_reports_its_progress_without_changing_the_estimate() -> None:
    steps: list[int] = []
    watched = mpdp.accuracy(DISTINCT, "xor", samples=3200, seed=5, progress=steps.append).to_dict()
    alone = mpdp.accuracy(DISTINCT, "xor", samples=3200, seed=5).to_dict()
    assert watched["engine"] == "posterior-monte-carlo" and watched["rules"] == alone["rules"]
    assert sum(steps) == 3200 and len(steps) >= PROGRESS_STEPS and min(steps) >= 1
    exact: list[int] = []
    assert mpdp.accuracy([1.0, 1.0, 1.0], "majority", progress=exact.append).to_dict()["rules"]["average"]["exact"]
    assert exact == []  # the exact engines draw nothing


@pytest.mark.parametrize(("quiet", "shown"), [((), True), (("--quiet",), False)])
def test_mpdp_accuracy_shows_a_progress_bar_on_a_terminal(quiet: tuple[str, ...], shown: bool) -> None:
    # rich draws on a terminal only: TTY_COMPATIBLE/TTY_INTERACTIVE make the captured stderr count as one
    epsilon = ",".join(f"{e:g}" for e in DISTINCT)
    done = subprocess.run([sys.executable, "-m", "mpdp", "accuracy", "--epsilon", epsilon, "--function", "xor",
                           "--samples", "3200", "--seed", "5", *quiet], capture_output=True, text=True, timeout=scaled(120),
                          env={**os.environ, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert done.returncode == 0, done.stderr
    assert ("Monte Carlo transcripts" in done.stderr) == shown
    assert ("3200 samples: an estimate" in done.stdout) == (not quiet)
    exact = subprocess.run([sys.executable, "-m", "mpdp", "accuracy", "--epsilon", "1,1,1", "--function", "majority"],
                           capture_output=True, text=True, timeout=scaled(120),
                           env={**os.environ, "TTY_COMPATIBLE": "1", "TTY_INTERACTIVE": "1"})
    assert exact.returncode == 0 and "Monte Carlo" not in exact.stderr


def _two_group_average_directly(n1: int, e1: float, n2: int, e2: float) -> float:
    """The optimal average accuracy of majority over two groups of pure randomized response, zero-one, by
    002 eq. (1) directly: sum over reported counts (t1, t2) of P(t1) P(t2) max(U, 1 - U), U = P(S1(t1) +
    S2(t2) >= sigma), S_g(t) = Bin(t, p_g) + Bin(n_g - t, q_g) the posterior number of ones (uniform prior:
    the counts are Bin(n_g, 1/2)). Dense pmfs from scipy.stats, one matrix product; the counts within
    6 sqrt(n) of n/2 only (the rest has mass < 1e-30)."""
    from scipy.signal import fftconvolve
    from scipy.stats import binom

    sigma = (n1 + n2) // 2 + 1

    def posterior(n: int, eps: float) -> tuple[range, list]:
        p = math.exp(eps) / (1 + math.exp(eps))
        reach = int(6 * math.sqrt(n))
        counts = range(n // 2 - reach, n // 2 + reach + 1)
        return counts, [np.clip(fftconvolve(binom.pmf(np.arange(t + 1), t, p), binom.pmf(np.arange(n - t + 1), n - t,
                                                                                           1 - p)), 0, None)
                        for t in counts]

    t1s, s1 = posterior(n1, e1)
    t2s, s2 = posterior(n2, e2)
    first = np.array(s1)  # (t1, s1 = 0..n1)
    tails = np.array([np.concatenate([np.cumsum(row[::-1])[::-1], [0.0]]) for row in s2])  # P(S2 >= c), c 0..n2+1
    need = np.clip(sigma - np.arange(n1 + 1), 0, n2 + 1)
    u = first @ tails[:, need].T  # (t1, t2)
    prior = np.outer(binom.pmf(np.array(t1s), n1, 0.5), binom.pmf(np.array(t2s), n2, 0.5))
    return float((prior * np.maximum(u, 1 - u)).sum())


def test_two_large_groups_go_to_the_count_engine_by_its_estimate_not_a_size_cap(capsys) -> None:
    """Two groups of 7,000 (above the 6,000 cap the smaller group had before, issue 23): the count engine's
    estimate fits the default time limit, so it runs, printing that estimate, and its average accuracy is
    002 eq. (1) computed directly (to 1e-9); under a time limit below its estimate it is refused, naming the
    same estimate."""
    from mpdp.parties.api.params import randomized_responses
    from mpdp.protocols.rules.count_threshold import count_engine_cost

    argv = ["--epsilon", "0.05*7000,0.1*7000", "--function", "majority", "--rule", "average"]
    doc = _json(capsys, *argv)
    estimate = count_engine_cost(randomized_responses("0.05*7000,0.1*7000"))
    assert estimate is not None and doc["engine"] == "counts"
    assert doc["estimates"]["average"] == estimate.summary()
    assert doc["rules"]["average"]["average_accuracy"] == pytest.approx(
        _two_group_average_directly(7000, 0.05, 7000, 0.1), abs=1e-9)
    line = refused(capsys, "accuracy", *argv, "--engine", "counts", "--time-limit", f"{estimate.seconds / 2:.6g}")
    assert "the count engine (14,000 parties in groups of 7,000 and 7,000) would take about" in line
    assert estimate.describe().split(" and ")[1] in line


def test_an_lp_stopped_at_the_time_limit_leaves_the_average_rule(capsys, monkeypatch) -> None:
    """--rule both: an LP whose estimate fit but which HiGHS stopped at the time limit (XOR of 1,001 parties
    did, before XOR skipped the LP) no longer fails the command after a minute: the average rule stands and
    worst_case_skipped says why. --rule worst-case still fails. (The solver stub stops every LP.)"""
    import mpdp.protocols.rules.optimal as optimal

    def stopped(view, time_limit=None):
        raise SolverError(TIME_LIMIT_STATUS, "Time limit reached")

    monkeypatch.setattr(optimal, "solve_worst_case", stopped)
    doc = _json(capsys, "--epsilon", "0.5,1,1.5", "--function", "majority")
    assert "did not finish within the time limit" in doc["worst_case_skipped"] and list(doc["rules"]) == ["average"]
    assert doc["rules"]["average"]["average_accuracy"] == pytest.approx(0.676759, abs=1e-6)  # the module's example
    assert "Time limit reached" in refused(capsys, "accuracy", "--epsilon", "0.5,1,1.5", "--function", "majority",
                                           "--rule", "worst-case")


def test_15000_distinct_parties_reach_the_monte_carlo_fallback() -> None:
    """2^15000 transcripts: the size error's message once formatted that count (4,516 digits) and Python
    refused (ValueError: more than 4,300 digits), so the fallback never ran; it is written 2^15000."""
    with pytest.raises(SizeLimitError, match=r"transcript classes='2\^15000'"):
        mpdp.accuracy([0.5 + i * 1e-5 for i in range(15000)], "xor", engine="symmetric", rule="average")
    doc = mpdp.accuracy([0.5 + i * 1e-5 for i in range(15000)], "xor", samples=20, seed=1).to_dict()
    assert doc["engine"] == "posterior-monte-carlo" and doc["rules"]["average"]["samples"] == 20
    assert "2^15000" in doc["worst_case_skipped"]


def test_xor_names_its_bound_without_an_lp(capsys) -> None:
    """XOR runs no LP: its worst-case bound is the average accuracy (Bayes), (1 + tanh(1/2)^5) / 2."""
    assert main(["accuracy", "--epsilon", "1*5", "--function", "xor"]) == 0
    out = capsys.readouterr().out
    assert f"(upper bound {0.5 * (1 + math.tanh(0.5) ** 5):.12g})" in out and "LP" not in out


def test_an_exact_rule_estimated_over_the_time_limit_goes_to_the_fallback_at_once() -> None:
    """sum's exact average rule multiplies (k + 1) x (k + 1) tables: at k = 3,000 about 3.5 s by
    mpdp.protocols.decision.engine_cost (its band's sparse products with 3,001 outputs). Under a 2 s limit it is not started (it used to run, whatever the limit): the
    Monte Carlo fallback (20 transcripts, ~1 s by its own estimate) answers, and more samples are
    refused naming both estimates."""
    doc = mpdp.accuracy(1.0, "sum", parties=3000, rule="average", time_limit=2.0, samples=20, seed=1).to_dict()
    assert doc["engine"] == "posterior-monte-carlo" and doc["rules"]["average"]["samples"] == 20
    with pytest.raises(SizeLimitError, match=r"no exact engine: the exact rule \(3,000 parties, 3,001 outputs\) "
                                             r"would take about .* over the 2 s time limit.*Monte Carlo"):
        mpdp.accuracy(1.0, "sum", parties=3000, rule="average", time_limit=2.0, samples=10_000)


def test_inputs_echo_the_compact_form(capsys):
    out = _json(capsys, "--epsilon", "1*3000", "--function", "majority", "--rule", "average")
    assert out["inputs"]["epsilon"] == "1*3000" and out["k"] == 3000
    assert out["inputs"]["delta"] == 0.0
    mixed = _json(capsys, "--epsilon", "0.5,1,1,2.5", "--delta", "0.1*4", "--function", "or", "--rule", "average")
    assert mixed["inputs"]["epsilon"] == "0.5,1*2,2.5" and mixed["inputs"]["delta"] == "0.1*4"


@given(st.lists(st.sampled_from([0.0, 0.1, 0.30000000000000004, 1.0, 7e22, 1e-300, math.inf]), min_size=1, max_size=30))
def test_the_compact_form_reads_back_as_the_same_values(values):
    text = compact_values(values)
    assert parse_list(text, "--epsilon") == values
    assert len(text) <= len(",".join(map(repr, values)))


def test_the_count_engine_of_two_groups_states_and_enforces_its_estimate(capsys) -> None:
    """The two-group count engine's estimate (count_threshold_cost(n1, n2)) is the one printed with the result
    and the one a refusal names: 1.3e-6 (n1 + n2) sqrt(max n) s, 1e8 + 200 (n1^1.5 + n2^1.5) bytes, and
    0.45 s for importing scipy.signal where it is not imported yet (both bands here are narrower than 512:
    the recursive filter)."""
    from mpdp.protocols.errors import CostLimitError
    from mpdp.protocols.numerics.cost import format_bytes, format_seconds, import_seconds

    def stated() -> tuple[float, str]:
        seconds = 1.3e-6 * 500 * math.sqrt(300) + import_seconds(["scipy.signal"])
        return seconds, (f"the count engine (500 parties in groups of 300 and 200): about {format_seconds(seconds)} "
                         f"and {format_bytes(1e8 + 200 * (300**1.5 + 200**1.5))}")

    expected = stated()[1]
    doc = mpdp.accuracy("0.5*300,1.5*200", "majority", rule="average", engine="counts").to_dict()
    assert doc["engine"] == "counts" and doc["estimates"] == {"average": expected}
    expected = stated()[1]  # scipy.signal is imported now
    assert main(["accuracy", "--epsilon", "0.5*300,1.5*200", "--function", "majority", "--engine", "counts"]) == 0
    assert f"average rule     estimated before it ran: {expected}" in capsys.readouterr().out
    seconds = stated()[0]
    with pytest.raises(CostLimitError, match=r"the count engine \(500 parties in groups of 300 and 200\) would take "
                                             rf"about {format_seconds(seconds)} .* over the .* time limit"):
        mpdp.accuracy("0.5*300,1.5*200", "majority", rule="average", engine="counts", time_limit=seconds / 2)


def test_the_worst_case_lp_estimate_is_printed_and_three_parties_stay_in_process(monkeypatch) -> None:
    """Three parties of epsilon 0.5, majority: the symmetric LP has 4 count classes chained into 4 input
    classes, (|Y| - 1) (4 + 4) + 1 = 9 variables over 4 input classes; its estimate is far inside a second,
    so HiGHS runs in this process (no deadline worker: a spy on call_before sees no call)."""
    from mpdp.protocols.decision import worst_case
    from mpdp.protocols.numerics.cost import format_bytes, format_seconds, import_seconds

    started: list[object] = []
    monkeypatch.setattr(worst_case, "call_before", lambda *args, **kwargs: started.append(args))
    lp_seconds = worst_case.LP_SECONDS(9, 4) + import_seconds(["scipy.optimize"])  # HiGHS's first import
    lp_bytes = worst_case.LP_MEMORY(9, 4)
    doc = mpdp.accuracy("0.5,0.5,0.5", "majority").to_dict()
    assert doc["estimates"]["worst_case"] == (f"the worst-case LP (9 variables over 4 input classes): about "
                                              f"{format_seconds(lp_seconds)} and {format_bytes(lp_bytes)}")
    assert doc["estimates"]["average"].startswith("the exact rule (3 parties, 2 outputs): about ")
    assert started == [] and multiprocessing.active_children() == []


@pytest.mark.parametrize(("argv", "line"), [
    (["--epsilon", "1,1,1", "--function", "table:0,1"],
     "mpdp: error: k=3 is not allowed: 1 (the truth table has 2 entries; 3 parties need 2^3 = 8)"),
    (["--epsilon", "1,1,1", "--function", "majority", "--engine", "counts", "--rule", "worst-case"],
     "mpdp: error: --engine='counts' is not allowed: auto, symmetric or general with rule worst-case (the count "
     "engine gives the average rule only)"),
])
def test_a_short_truth_table_and_counts_with_worst_case_say_what_is_needed(capsys, argv, line) -> None:
    assert refused(capsys, "accuracy", *argv) == line


def test_zero_samples_are_refused(capsys) -> None:
    with pytest.raises(SystemExit) as stopped:
        main(["accuracy", "--epsilon", "1,1,1", "--function", "majority", "--samples", "0"])
    assert stopped.value.code == 2
    assert capsys.readouterr().err.splitlines() == [
        "mpdp: error: argument --samples: '0' is not allowed: an integer >= 1"]


@pytest.mark.parametrize("argv", [
    ["--epsilon", "1,1,1", "--function", "xor", "--rule", "worst-case"],
    ["--epsilon", "1,1,1", "--function", "xor"],
    ["--epsilon", "1,1,1", "--function", "xor", "--engine", "general"],
    ["--epsilon", "1,1,1", "--function", "table:0,1,1,1,0,0,0,1"],
    ["--epsilon", "1,2,3", "--function", "majority", "--rule", "average"],
])
def test_every_rule_computed_prints_its_estimate_line(capsys, argv) -> None:
    """``--function xor --rule worst-case`` printed no estimate line (no LP: parity views, the average rule is
    worst-case optimal, 002 §3); now each rule computed has one, the general engine's naming its size."""
    out = ok(capsys, "accuracy", *argv)
    computed = [line.split()[0] for line in out.splitlines() if "average accuracy" in line]
    stated = [line.split()[0] for line in out.splitlines() if "estimated before it ran:" in line]
    assert computed and stated == computed, out
    if "xor" in argv:
        assert "worst-case optimal here" in out and "LP" not in out
    if "--engine" in argv or "table:0,1,1,1,0,0,0,1" in argv:
        assert "the general engine (2^3 transcripts, at most 2^24)" in out


def test_one_party_is_one_party(capsys) -> None:
    """"1 parties" was printed wherever a count was: the estimate line says 1 party (and 2 parties)."""
    one = ok(capsys, "accuracy", "--epsilon", "1", "--function", "xor", "--rule", "average")  # the count engine's
    exact = ok(capsys, "accuracy", "--epsilon", "1", "--function", "xor", "--engine", "symmetric")
    two = ok(capsys, "accuracy", "--epsilon", "1,1", "--function", "xor", "--rule", "average")
    assert "(1 party in one parameter group)" in one and "(1 party, 2 outputs" in exact
    assert "1 parties" not in one + exact and "(2 parties, 2 outputs" in two
