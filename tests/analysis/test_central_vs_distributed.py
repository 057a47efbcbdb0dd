"""Central (001) vs distributed (002) majority accuracy, against brute force over inputs and transcripts."""

import itertools
import math

import numpy as np
import pytest

from mpdp.analysis.plot_style import save_figure
from mpdp.analysis.theory.central_vs_distributed import compare_majority, plot_comparison
from mpdp.protocols.colorings.majority_mechanism import central_majority_mechanism


def _brute_distributed(k: int, eps: float) -> tuple[float, float]:
    """Pure randomized response, observer decides 1 iff P(majority | transcript) > 1/2 (uniform prior)."""
    p = math.exp(eps) / (1 + math.exp(eps))
    inputs = list(itertools.product([0, 1], repeat=k))
    correct = []
    for x in inputs:
        total = 0.0
        for tau in inputs:
            like = math.prod(p if a == b else 1 - p for a, b in zip(x, tau))
            post = [math.prod(p if a == b else 1 - p for a, b in zip(y, tau)) for y in inputs]
            yes = sum(w for w, y in zip(post, inputs) if 2 * sum(y) > k)
            decide = int(yes > sum(post) - yes)
            total += like * (decide == int(2 * sum(x) > k))
        correct.append(total)
    return float(np.mean(correct)), float(min(correct))


@pytest.mark.parametrize("k, eps", [(1, 0.7), (3, 0.5), (4, 1.2), (5, 2.0)])
def test_distributed_side_by_brute_force(k, eps) -> None:
    row = compare_majority(k, eps, 0.0)
    avg, worst = _brute_distributed(k, eps)
    assert row.distributed_average == pytest.approx(avg, abs=1e-12)
    assert row.distributed_worst == pytest.approx(worst, abs=1e-12)


def test_central_beats_distributed_and_equals_it_for_one_voter() -> None:
    for k in (1, 3, 7):
        for eps in (0.3, 1.0, 3.0):
            row = compare_majority(k, eps, 0.05)
            assert row.central_average >= row.distributed_average - 1e-12
            assert row.central_worst >= row.distributed_worst - 1e-12
            if k == 1:
                assert row.central_average == pytest.approx(row.distributed_average, abs=1e-12)


def test_plot_draws_the_rows_and_keeps_the_four_worst_case_curves_apart(tmp_path) -> None:
    rows = [compare_majority(k, e, 0.0) for k in (1, 3) for e in (0.5, 1.0)]
    figure = plot_comparison(rows)
    worst = {line.get_gid(): line for line in figure.axes[1].get_lines()}
    assert sorted(worst) == ["worst:central:k=1", "worst:central:k=3", "worst:distributed:k=1",
                             "worst:distributed:k=3"]
    assert list(worst["worst:distributed:k=3"].get_ydata()) == [r.distributed_worst for r in rows if r.voters == 3]
    styles = {(line.get_color(), line.get_linestyle(), line.get_marker()) for line in worst.values()}
    assert len(styles) == 4  # k=1: central and distributed coincide, yet they are drawn differently
    for suffix in ("png", "svg", "pdf"):
        save_figure(figure, tmp_path / f"cmp.{suffix}")
    assert (tmp_path / "cmp.svg").read_text().lstrip().startswith("<?xml")
    assert (tmp_path / "cmp.pdf").read_bytes()[:4] == b"%PDF"
    assert (tmp_path / "cmp.png").read_bytes()[:4] == b"\x89PNG"


def test_accuracy_clamped_where_rounding_overshoots() -> None:
    for eps in (1000.0, math.inf):
        for criterion in ("average", "worst-case"):
            assert central_majority_mechanism(3, eps, 0.0, criterion=criterion).average_accuracy() == 1.0
        row = compare_majority(3, eps, 0.0)
        assert row.distributed_average == 1.0 and row.central_average == 1.0
