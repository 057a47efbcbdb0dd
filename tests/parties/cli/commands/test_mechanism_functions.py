"""``mpdp mechanism --graph and:N / or:N / xor:N / threshold:T,N`` (and majority:N): the document is
``central_mechanism``'s release, and for small N its accuracy is the optimum of the full-hypercube LP
(no symmetry assumed, independent of 001's constructions); the plot, --help, refusals."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from scipy.special import comb

import mpdp
from mpdp.parties.cli.main import main
from mpdp.protocols.colorings.majority_mechanism import central_mechanism
from mpdp.protocols.functions import parse_function
from tests.parties.cli.invoke import ok, refused
from tests.protocols.hypercube_lp import hypercube_optimum

# (--graph, the function's name, N)
GRAPHS = [("and:4", "and", 4), ("or:3", "or", 3), ("xor:5", "xor", 5), ("threshold:2,5", "threshold:2", 5),
          ("threshold:3,4", "threshold:3", 4), ("majority:4", "majority", 4)]


def _accuracies(probabilities: dict[str, float], function: str, voters: int) -> tuple[float, float]:
    """Average (uniform inputs) and worst-case accuracy from the document's P(output 0 | c) alone."""
    red = np.array(list(probabilities.values()))
    values = parse_function(function).count_values(voters)
    truthful = np.where(values == 0, red, 1.0 - red)
    weights = np.array([comb(voters, c, exact=True) for c in range(voters + 1)]) / 2.0**voters
    return float(weights @ truthful), float(truthful.min())


@pytest.mark.parametrize(("graph", "function", "voters"), GRAPHS)
@pytest.mark.parametrize(("epsilon", "delta"), [(0.7, 0.0), (1.2, 0.05)])
def test_function_graphs_are_central_mechanism_and_the_hypercube_optimum(
        capsys: pytest.CaptureFixture[str], graph: str, function: str, voters: int, epsilon: float,
        delta: float) -> None:
    truth = parse_function(function).truth_table(voters)
    for balanced, criterion in ((False, "average"), (True, "worst-case")):
        argv = ["mechanism", "--graph", graph, "--epsilon", repr(epsilon), "--delta", repr(delta), "--json"]
        doc = ok(capsys, *argv, *(["--balanced"] if balanced else []))
        expected = central_mechanism(function, voters, epsilon, delta, criterion=criterion)
        assert list(doc["probabilities"]) == [str(c) for c in range(voters + 1)]
        assert list(doc["probabilities"].values()) == pytest.approx(1.0 - expected.release_one, abs=1e-15)
        assert doc["function"] == function and doc["red"].startswith("output 0")
        assert ("transition" in doc) == (function != "xor")  # xor: every count changes color, no line
        average, worst = _accuracies(doc["probabilities"], function, voters)
        assert (doc["average_accuracy"], doc["worst_case_accuracy"]) == pytest.approx((average, worst), abs=1e-12)
        if balanced:  # the balanced mechanism: the best worst case over all 2^N inputs
            assert worst == pytest.approx(hypercube_optimum(truth, epsilon, delta, worst_case=True), abs=1e-8)
        else:  # the default: the best average over uniform inputs
            assert average == pytest.approx(hypercube_optimum(truth, epsilon, delta), abs=1e-8)
        assert mpdp.mechanism(graph, epsilon, delta, balanced=balanced).to_dict() == doc


def test_threshold_boundary_is_p_output_0_at_t(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok(capsys, "mechanism", "--graph", "threshold:2,5", "--epsilon", "1", "--boundary", "0.4", "--json")
    expected = central_mechanism("threshold:2", 5, 1.0, 0.0, red_at_boundary=0.4)
    assert doc["probabilities"]["2"] == pytest.approx(0.4, abs=1e-15)
    assert list(doc["probabilities"].values()) == pytest.approx(1.0 - expected.release_one, abs=1e-15)


def test_xor_is_the_constant_truthful_mechanism_and_plots_flat(tmp_path: Path) -> None:
    """xor: P(output = xor(c)) = (e^eps + delta)/(1 + e^eps) at every count, so P(output 0) alternates;
    the plot draws both, the truthful curve flat."""
    epsilon, delta = 1.0, 0.05
    r = mpdp.mechanism("xor:4", epsilon=epsilon, delta=delta)
    t = (math.exp(epsilon) + delta) / (1 + math.exp(epsilon))
    assert list(r.probabilities.values()) == pytest.approx([t, 1 - t, t, 1 - t, t], abs=1e-15)
    assert r.to_dict()["average_accuracy"] == pytest.approx(t, abs=1e-12)
    ax = r.plot().axes[0]
    (truthful,) = [x for x in ax.get_lines() if x.get_gid() == "truthful"]
    (line,) = [x for x in ax.get_lines() if x.get_gid() == "line"]
    assert list(truthful.get_ydata()) == pytest.approx([t] * 5, abs=1e-15)
    assert list(line.get_ydata()) == list(r.probabilities.values())
    assert list(line.get_xdata()) == list(range(5))  # along the count line: c ~ c + 1 are neighbours


def test_text_and_help(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = ok(capsys, "mechanism", "--graph", "and:3", "--epsilon", "1", "--plot", str(tmp_path / "and.png"))
    assert "P(output red = output 0 (and = 0))" in out and "tau = " in out and (tmp_path / "and.png").stat().st_size
    out = ok(capsys, "mechanism", "--graph", "xor:3", "--epsilon", "1")
    assert "tau" not in out
    with pytest.raises(SystemExit):
        main(["mechanism", "--help"])
    text = capsys.readouterr().out
    assert "threshold:T,N" in text and "mpdp mechanism --graph threshold:2,5" in text and "xor:N" in text


@pytest.mark.parametrize(("argv", "needle"), [
    (["--graph", "xor:4", "--epsilon", "1", "--boundary", "0.3"], "--boundary=0.3 is not allowed: None for xor"),
    (["--graph", "threshold:0,4", "--epsilon", "1", "--boundary", "0.3"], "no single boundary"),
    # a one-change function's boundary out of [0, 1] is a bad probability, not "no single boundary"
    (["--graph", "and:5", "--epsilon", "1", "--boundary", "1.5"], "--boundary=1.5 is not allowed: a probability"),
    (["--graph", "majority:5", "--epsilon", "1", "--boundary", "nan"], "--boundary=nan is not allowed: a probability"),
    (["--graph", "threshold:2", "--epsilon", "1"], "threshold:T,N"),
    (["--graph", "or:0", "--epsilon", "1"], "--graph='or:0'"),
    (["--graph", "and:2000000", "--epsilon", "1"], "at most 1000000"),
])
def test_bad_function_graphs_are_one_line_errors(capsys: pytest.CaptureFixture[str], argv: list[str],
                                                 needle: str) -> None:
    assert needle in refused(capsys, "mechanism", *argv)
