"""``mpdp compose`` end to end through parties.cli.main."""

import pathlib

import pytest

from mpdp.parties.cli.main import main
from tests.parties.cli.invoke import ok, refused


def test_homogeneous_seed_example(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "compose", "--epsilon", "0.1", "--delta", "0.001", "-k", "30", "--delta-slack", "0.05", "--json")
    assert out["k"] == 30 and out["method"] == "exact"
    assert out["epsilon_tilde"] == pytest.approx(0.591042426052033, rel=1e-9)
    assert out["delta_total"] == pytest.approx(0.07809058110006854, rel=1e-9)
    assert out["bounds"] == pytest.approx(
        {"theorem_3_4": 1.4025690753736852, "eq_7": 1.5526939505000452, "drv10": 1.6561989084526045, "basic": 3.0}, rel=1e-9
    )
    assert out["lower"] is None and out["upper"] is None


def test_heterogeneous_exact_and_bounds(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "compose", "--epsilon", "0.1,0.1,0.1,0.1,0.1,0.5,0.5,0.5,0.5,0.5", "--delta", "0", "--delta-slack", "1e-4", "--json")
    assert out["method"] == "exact" and out["epsilon_tilde"] == pytest.approx(2.97279626828775, rel=1e-9)
    assert out["bounds"]["drv10"] is None and out["bounds"]["theorem_3_4"] == pytest.approx(3.0)
    eps = ",".join(f"{0.05 + (i + 0.5) ** 0.5 / 50:.6f}" for i in range(60))  # 60 incommensurate values
    out = ok(capsys, "compose", "--epsilon", eps, "--delta-slack", "1e-6", "--json")
    assert out["method"] == "bounds" and out["k"] == 60
    assert out["lower"] <= out["upper"] == out["epsilon_tilde"] <= out["bounds"]["theorem_3_4"]
    assert out["gap"] == pytest.approx(out["upper"] - out["lower"])


def test_edge_values(capsys: pytest.CaptureFixture[str]) -> None:
    out = ok(capsys, "compose", "--epsilon", "0.5", "-k", "10", "--delta-slack", "0", "--json")
    assert out["epsilon_tilde"] == 5.0 and out["bounds"]["theorem_3_4"] is None and out["delta_total"] == 0.0
    out = ok(capsys, "compose", "--epsilon", "0", "-k", "1000", "--delta-slack", "1e-6", "--json")
    assert out["epsilon_tilde"] == 0.0
    out = ok(capsys, "compose", "--epsilon", "50", "-k", "1", "--delta-slack", "1e-300", "--json")
    assert 49.9 < out["epsilon_tilde"] <= 50.0 and out["bounds"]["eq_7"] is None


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compose", "--epsilon", "0.1", "--delta", "0.001", "-k", "30", "--delta-slack", "0.05"]) == 0
    text = capsys.readouterr().out
    assert "0.5910424261" in text and "theorem_3_4" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["compose", "--epsilon", "-1", "-k", "3", "--delta-slack", "0.1"],
        ["compose", "--epsilon", "0.1", "-k", "0", "--delta-slack", "0.1"],
        ["compose", "--epsilon", "0.1,x", "--delta-slack", "0.1"],
        ["compose", "--epsilon", "0.1,0.2", "--delta", "0,0,0", "--delta-slack", "0.1"],
        ["compose", "--epsilon", "0.1,0.2", "-k", "5", "--delta-slack", "0.1"],
        ["compose", "-k", "3"],
        ["compose", "--epsilon", "0.1", "-k", "3", "--delta-slack", "2"],
    ],
)
def test_bad_input_one_line_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    refused(capsys, *argv)


def test_plot_figure_3(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "fig3.png"
    assert main(["compose", "--plot", str(target)]) == 0
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and target.stat().st_size > 10_000
    assert str(target) in capsys.readouterr().out


@pytest.mark.parametrize("epsilon, expected", [("1e200", 1e201), ("1e308", "inf")])
def test_compose_at_huge_epsilon(capsys: pytest.CaptureFixture[str], epsilon: str, expected: float | str) -> None:
    doc = ok(capsys, "compose", "--epsilon", epsilon, "-k", "10", "--delta-slack", "1e-6", "--json")
    for value in (doc["epsilon_tilde"], doc["bounds"]["theorem_3_4"], doc["bounds"]["basic"]):
        assert value == (expected if isinstance(expected, str) else pytest.approx(expected, rel=1e-12))
    doc = ok(capsys, "compose", "--epsilon", f"{epsilon},1,{epsilon}", "--delta", "0.1,0,0.2", "--json")
    assert doc["bounds"]["basic"] == ("inf" if expected == "inf" else pytest.approx(2 * float(epsilon)))


def test_compose_delta_slack_default_and_range(capsys: pytest.CaptureFixture[str]) -> None:
    doc = ok(capsys, "compose", "--epsilon", "1", "-k", "3", "--json")
    assert doc["delta_slack"] == 1e-6
    assert "[0, 1)" in refused(capsys, "compose", "--epsilon", "1", "-k", "3", "--delta-slack", "1")
    with pytest.raises(SystemExit):
        main(["compose", "--help"])
    assert "(default 1e-06)" in " ".join(capsys.readouterr().out.split())


def test_compose_blames_the_mismatching_list(capsys: pytest.CaptureFixture[str]) -> None:
    line = refused(capsys, "compose", "--epsilon", "1", "-k", "3", "--delta", "0.5,0.2")
    assert "--delta='0.5,0.2'" in line
    line = refused(capsys, "compose", "--epsilon", "1,2", "--delta", "0.5,0.2,0.1")
    assert "--delta='0.5,0.2,0.1'" in line and "2 (one per epsilon value)" in line
    assert line.count("-k") == 0


def test_compose_plot_draws_only_what_it_can(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "-k" in refused(capsys, "compose", "--epsilon", "0.1,0.2", "--plot", str(tmp_path / "y.png"))
    assert not (tmp_path / "y.png").exists()
    ok(capsys, "compose", "--epsilon", "0.2", "--delta", "0.001", "-k", "10", "--plot", str(tmp_path / "b.png"))
    assert (tmp_path / "b.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_too_large_k_suggests_nothing_a_cli_user_cannot_run(capsys) -> None:
    line = refused(capsys, "compose", "--epsilon", "1", "-k", "1000000000")
    assert "at most 50000000" in line and "Theorem 3.4" in line and "_bound" not in line


def test_heterogeneous_bounds_are_tight_by_default_and_bracket_the_exact_optimum() -> None:
    """Issue 12, item 9: the bounds method refines to a 0.5% relative width. 14 distinct epsilons: the
    exact optimum (a 2^14-point privacy loss grid) is known; with the grid limit at 1 the bounds run."""
    import numpy as np

    from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous

    eps = np.random.default_rng(3).uniform(0.05, 0.5, 14)
    exact = compose_heterogeneous(eps, 0.0, 1e-6)
    assert exact.method == "exact"
    tight = compose_heterogeneous(eps, 0.0, 1e-6, max_support=1)
    assert tight.method == "bounds" and tight.lower is not None and tight.upper is not None
    assert tight.lower <= exact.epsilon_tilde <= tight.upper
    assert (tight.upper - tight.lower) / tight.upper <= 0.005 and "relative width" in tight.detail
    coarse = compose_heterogeneous(eps, 0.0, 1e-6, max_support=1, resolution=0.05)
    assert coarse.lower is not None and coarse.upper is not None
    assert coarse.lower <= exact.epsilon_tilde <= coarse.upper and coarse.upper - coarse.lower > tight.upper - tight.lower


def test_epsilon_for_a_target_total_delta(capsys) -> None:
    """--total-delta D: the slack is 1 - (1 - D) / (1 - delta)^k, and the total delta reported is D."""
    doc = ok(capsys, "compose", "--epsilon", "0.1", "-k", "10", "--delta", "1e-6", "--total-delta", "1e-4", "--json")
    assert doc["delta_total"] == pytest.approx(1e-4, rel=1e-12)
    assert doc["delta_slack"] == pytest.approx(1 - (1 - 1e-4) / (1 - 1e-6) ** 10, rel=1e-9)
    same = ok(capsys, "compose", "--epsilon", "0.1", "-k", "10", "--delta", "1e-6", "--delta-slack",
              repr(doc["delta_slack"]), "--json")
    assert same["epsilon_tilde"] == pytest.approx(doc["epsilon_tilde"], rel=1e-12)
    assert "9.99996e-06" in refused(capsys, "compose", "--epsilon", "0.1", "-k", "10", "--delta", "1e-6",
                                    "--total-delta", "1e-6")
    assert "--rel-width" in refused(capsys, "compose", "--epsilon", "0.1,0.2", "--rel-width", "2")
