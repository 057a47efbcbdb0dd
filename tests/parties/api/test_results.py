"""The Python API's broker-free results: the same documents as the CLI's --json, frozen, plotted with the
right data, shown in a notebook, tabulated with pandas (or a clear error naming the extra)."""

from __future__ import annotations

import base64
import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize  # noqa: F401  the estimates add its first import (~0.17 s) only where it is not loaded yet
from matplotlib.figure import Figure

import mpdp
from mpdp.analysis.figures.composition_plot import ALPHA_GRID, figure_3_regions
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.calibration import scaled
from tests.parties.cli.invoke import ok
from tests.parties.cli.test_main import HEAVY


def test_compose_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    r = mpdp.compose(epsilon=0.1, delta=0.0, k=30, delta_slack=1e-5)
    assert r.to_dict() == ok(capsys, "compose", "--epsilon", "0.1", "--delta", "0", "-k", "30", "--delta-slack",
                             "1e-5", "--json")
    hetero = mpdp.compose(epsilon=[0.1, 0.5, 0.5], delta=[0.0, 0.001, 0.0], delta_slack=1e-6)
    assert hetero.to_dict() == ok(capsys, "compose", "--epsilon", "0.1,0.5,0.5", "--delta", "0,0.001,0",
                                  "--delta-slack", "1e-6", "--json")
    # basic composition is k * epsilon (000 Theorem 3.1), computed independently
    assert r.to_dict()["bounds"]["basic"] == pytest.approx(3.0, rel=1e-12)


def test_accuracy_is_the_cli_document_and_the_exact_engine(capsys: pytest.CaptureFixture[str]) -> None:
    r = mpdp.accuracy(epsilon=[0.5, 1.0, 1.5], function="majority")
    cli = ok(capsys, "accuracy", "--epsilon", "0.5,1,1.5", "--function", "majority", "--json")
    mine = r.to_dict()
    assert mine.pop("seconds") >= 0 and cli.pop("seconds") >= 0
    assert mine == cli
    mechs = [RandomizedResponse(e) for e in (0.5, 1.0, 1.5)]
    exact = optimal_rules(mechs, parse_function("majority"), accuracy_measure("zero-one", 2), None, "both")
    assert r.average_accuracy("average") == exact.average.average_accuracy
    assert r.worst_case_accuracy("worst-case") == exact.worst_case.worst_case_accuracy


def test_xor_of_two_parties_matches_the_closed_form() -> None:
    # 002 Corollary 3.1: P(XOR correct) = (1 + prod tanh(eps_i / 2)) / 2 for the optimal rule
    r = mpdp.accuracy(epsilon=[1.0, 2.0], function="xor")
    assert r.average_accuracy() == pytest.approx((1 + np.tanh(0.5) * np.tanh(1.0)) / 2, abs=1e-12)


def test_mechanism_is_the_cli_document(capsys: pytest.CaptureFixture[str]) -> None:
    for spec, extra in (("majority:3", ["--balanced"]), ("line:4,3", ["--boundary", "0.8"])):
        r = mpdp.mechanism(spec, epsilon=0.6931, delta=0.1, boundary=0.8 if extra[0] == "--boundary" else None,
                           balanced=extra == ["--balanced"])
        assert r.to_dict() == ok(capsys, "mechanism", "--graph", spec, "--epsilon", "0.6931", "--delta", "0.1",
                                 *extra, "--json")
    # 001 Fig. 1: the balanced mechanism of 3 voters at (log 2, 0.1): R = 0.9, 0.7, 0.3, 0.1 by YES count
    values = list(mpdp.mechanism("majority:3", epsilon=np.log(2), delta=0.1, balanced=True).probabilities.values())
    assert values == pytest.approx([0.9, 0.7, 0.3, 0.1], abs=1e-12)


def test_estimate_covers_the_exact_accuracy() -> None:
    # seeded; the 99% Hoeffding interval of 100,000 samples covers the exact value (fails with prob. <= 1%)
    r = mpdp.estimate(epsilon=1.0, parties=5, function="majority", samples=100_000, seed=11, confidence=0.99)
    exact = mpdp.accuracy(epsilon=1.0, parties=5, function="majority", rule="average").average_accuracy()
    assert r.ci_low <= exact <= r.ci_high and r.ci_high - r.ci_low < 0.02
    again = mpdp.estimate(epsilon=1.0, parties=5, function="majority", samples=100_000,
                          seed=np.random.default_rng(11), confidence=0.99)
    assert again.to_dict()["inputs"]["seed"] == "generator"
    assert {**again.to_dict(), "inputs": None} == {**r.to_dict(), "inputs": None}


def test_an_estimate_over_its_time_limit_is_refused_before_any_draw() -> None:
    """sum at k = 3,000: 10,000 transcripts cost at least 10,000 x 3,000 symbols x 180 ns = 5.4 s by the
    model of analysis.theory.monte_carlo_cost (it used to run, however long): refused under 2 s, naming it."""
    from mpdp.analysis.theory.monte_carlo_cost import monte_carlo_cost
    from mpdp.protocols.errors import CostLimitError
    from mpdp.protocols.rules.symmetric import observer_average_rule

    with pytest.raises(CostLimitError, match=r"10,000 transcripts of 3,000 parties.*over the 2 s time limit.*"
                                             r"fewer samples"):
        mpdp.estimate(epsilon=1.0, parties=3000, function="sum", samples=10_000, progress=pytest.fail,
                      time_limit=2.0)
    rule = observer_average_rule([RandomizedResponse(1.0)] * 3000, parse_function("sum"),
                                 accuracy_measure("zero-one", 3001))
    assert monte_carlo_cost(rule, 10_000, "").seconds > 10_000 * 3000 * 1.8e-7
    with pytest.raises(ParameterError, match="time_limit"):
        mpdp.estimate(epsilon=1.0, parties=3, samples=10, time_limit=0.0)


@pytest.mark.parametrize("call", [
    lambda: mpdp.estimate(epsilon=1.0, parties=20_000, function="sum", samples=100_000),
    lambda: mpdp.accuracy(epsilon=1.0, parties=20_000, function="sum"),
])
def test_sum_at_20000_parties_is_refused_before_its_tables_are_built(call) -> None:
    """The zero-one measure and the posterior rule's gain of sum at k = 20,000 are (k + 1)^2 float64, 3.2 GB
    each: the refusal (the Monte Carlo's ~47 h; for accuracy first the exact rule's ~33 min) comes from
    the sizes, before either is built."""
    import tracemalloc

    from mpdp.protocols.errors import CostLimitError

    tracemalloc.start()
    try:
        with pytest.raises(CostLimitError, match=r"100,000 transcripts of 20,000 parties.*over the 60 s time limit"):
            call()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 200e6


@pytest.mark.parametrize("make", [
    lambda: mpdp.compose(epsilon=0.5, delta=0.0, k=3),
    lambda: mpdp.accuracy(epsilon=[1.0, 1.0], function="and"),
    lambda: mpdp.estimate(epsilon=1.0, parties=3, samples=100, seed=1),
    lambda: mpdp.mechanism("line:2,2", epsilon=1.0, boundary=0.5),
    lambda: mpdp.audit(epsilon=1.0, samples=1000, party_path="simulation", seed=1),
])
def test_results_are_frozen_and_show_themselves(make) -> None:
    r = make()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.document = {}
    copy = r.to_dict()
    copy.clear()
    assert r.to_dict()  # to_dict hands out a copy
    json.dumps(r.to_dict(), allow_nan=False)
    text = repr(r)
    assert text.startswith(f"<{type(r).__name__}: ") and len(text) < 200 and "\n" not in text
    page = r._repr_html_()
    assert "<table>" in page
    image = base64.b64decode(page.split('src="data:image/png;base64,', 1)[1].split('"', 1)[0])
    assert image.startswith(b"\x89PNG\r\n\x1a\n")  # the figure, embedded: a plain kernel shows a picture
    figure = r.plot()
    assert isinstance(figure, Figure) and figure._repr_png_().startswith(b"\x89PNG\r\n\x1a\n")
    frame = r.to_frame()
    assert len(frame) == len(r.rows()) and list(frame.columns) == list(r.rows()[0])


def test_to_frame_names_the_extra_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"pip install 'mpdp\[frame\]'"):
        mpdp.compose(epsilon=0.5, k=2).to_frame()


def test_compose_plot_draws_the_three_regions_on_the_given_axes() -> None:
    figure = Figure()
    ax = figure.add_subplot()
    assert mpdp.compose(epsilon=0.1, delta=0.001, k=30).plot(ax=ax) is figure
    lines = {line.get_gid(): line for line in ax.get_lines()}
    for label, region in figure_3_regions(0.1, 0.001, 30).items():
        assert np.array_equal(lines[f"{label}:lower"].get_ydata(), region.lower_boundary(ALPHA_GRID))


def test_mechanism_plot_of_a_graph_is_no_line_in_name_order(tmp_path) -> None:
    graph = {"vertices": ["c", "a", "b", "d"], "edges": [["a", "c"], ["c", "b"], ["b", "d"]],
             "coloring": {"a": "B", "c": "B", "b": "R", "d": "R"}, "boundary": {"c": 0.5}}
    path = tmp_path / "g.json"
    path.write_text(json.dumps(graph))
    r = mpdp.mechanism(str(path), epsilon=1.0)
    assert mpdp.mechanism(path, epsilon=1.0).probabilities == r.probabilities  # a Path as well
    figure = r.plot()
    ax = figure.axes[0]
    assert not [line for line in ax.get_lines() if line.get_gid() == "line"]
    values = np.concatenate([c.get_array() for c in ax.collections if (c.get_gid() or "").startswith("vertices")])
    assert sorted(values) == pytest.approx(sorted(r.probabilities.values()))
    line = mpdp.mechanism("line:4,3", epsilon=0.2624, delta=0.1, boundary=0.8)
    (curve,) = [x for x in line.plot().axes[0].get_lines() if x.get_gid() == "line"]
    assert list(curve.get_ydata()) == list(line.probabilities.values())


def test_bad_values_are_named() -> None:
    with pytest.raises(ParameterError, match="graph=5 is not allowed"):  # was an AttributeError
        mpdp.mechanism(5, epsilon=1.0)  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="parties=3"):
        mpdp.estimate(epsilon=[1.0, 2.0], parties=3)
    with pytest.raises(ParameterError, match=r"delta=\[0.1, 0.2\]"):
        mpdp.compose(epsilon=[1.0, 2.0, 3.0], delta=[0.1, 0.2])


def test_import_mpdp_and_listing_the_api_stays_light() -> None:
    code = ("import sys, mpdp\nassert 'simulate' in dir(mpdp) and 'compose' in mpdp.__all__\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=scaled(60))
    assert result.stdout.strip().splitlines()[-1] == "[]"
