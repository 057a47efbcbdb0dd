"""``mpdp audit``: the JSON document is the API's, a violation exits 1, the plot is written, bad values named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mpdp
from mpdp.parties.cli.main import main
from tests.parties.cli.invoke import ok, refused, strict_json

KEYS = {"epsilon_configured", "epsilon_lower_bound", "violation", "samples", "alpha"}


def test_json_is_the_api_document_up_to_the_timing(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["audit", "--epsilon", "1", "--samples", "20000", "--party-path", "simulation", "--seed", "4", "--json"]
    document = ok(capsys, *argv)
    api = mpdp.audit(epsilon=1.0, samples=20_000, party_path="simulation", seed=4).to_dict()
    assert KEYS <= set(document) and document["violation"] is False and document["samples"] == 20_000
    assert {k: v for k, v in document.items() if k != "seconds"} == {k: v for k, v in api.items() if k != "seconds"}
    assert 0.8 < document["epsilon_lower_bound"] <= document["epsilon_configured"] == 1.0


def test_a_planted_fault_exits_1_and_the_plot_is_written(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plot = tmp_path / "audit.png"
    argv = ["audit", "--epsilon", "0.5", "--releases", "3", "--samples", "100000", "--party-path", "simulation",
            "--fault", "double-epsilon", "--seed", "1", "--json", "--plot", str(plot)]
    assert main(argv) == 1
    document = strict_json(capsys.readouterr().out)
    assert document["violation"] is True and document["epsilon_lower_bound"] > 1.5 == document["epsilon_composed"]
    assert document["fault"] == "double-epsilon" and plot.stat().st_size > 0


def test_text_output_says_the_verdict(capsys: pytest.CaptureFixture[str]) -> None:
    text = ok(capsys, "audit", "--epsilon", "1", "--samples", "5000", "--party-path", "simulation")
    assert "certified epsilon >=" in text and "within the configured guarantee" in text


@pytest.mark.parametrize("argv, named", [
    (["--epsilon", "1", "--fault", "leak:7"], "--fault"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--epsilon", "1", "--alpha", "2"], "--alpha"),
    (["--epsilon", "1", "--delta", "1"], "--delta"),
    (["--epsilon", "1", "--plot", "/no/such/dir/a.png"], "--plot"),
])
def test_bad_values_are_named(capsys: pytest.CaptureFixture[str], argv: list[str], named: str) -> None:
    line = refused(capsys, "audit", "--samples", "10", "--party-path", "simulation", "--quiet", *argv)
    assert named in line
    json.dumps(line)


def test_the_plot_shows_the_measured_tests_over_the_three_regions() -> None:
    result = mpdp.audit(epsilon=0.5, delta=0.001, samples=20_000, releases=4, party_path="simulation", seed=8)
    figure = result.plot()
    lines = {line.get_gid(): line for line in figure.axes[0].get_lines()}
    assert {"Theorem 3.1 (basic):lower", "Theorem 3.2 (DRV10):lower", "Theorem 3.3 (optimal):lower"} <= set(lines)
    measured = lines["measured"]
    e = result.run.estimate
    assert list(measured.get_xdata()) == list(e.false_alarm) and list(measured.get_ydata()) == list(e.missed_detection)
    assert len(result.rows()) == e.tests // 2


def test_text_output_of_an_infinite_epsilon(capsys: pytest.CaptureFixture[str]) -> None:
    """``--epsilon inf`` printed its text from the JSON document, whose infinity is the string "inf" (a crash)."""
    text = ok(capsys, "audit", "--epsilon", "inf", "--samples", "100", "--party-path", "simulation", "--seed", "1")
    assert "configured epsilon = inf per release, delta = 0" in text
    assert "within the configured guarantee" in text
