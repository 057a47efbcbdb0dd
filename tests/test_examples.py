"""The notebooks of ``examples/`` (jupytext percent-format ``.py``) run as scripts, in their quick mode
(``MPDP_EXAMPLES_QUICK=1``: small grids, a 12-member live run), with matplotlib's Agg backend set by the
environment only: each finishes, writes its figures and its report page, and prints the values it derives."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from scipy.optimize import brentq

from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _run(name: str, out: Path) -> str:
    env = os.environ | {"MPLBACKEND": "Agg", "MPDP_EXAMPLES_QUICK": "1", "MPDP_EXAMPLES_OUT": str(out)}
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, env=env,
                          cwd=out, timeout=scaled(150), check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _figures(out: Path, *names: str) -> None:
    for name in names:
        assert (out / name).read_bytes().startswith(PNG_MAGIC), name


def test_the_teachers_notebook(tmp_path: Path) -> None:
    text = _run("teacher.py", tmp_path)
    assert "log(p / (1 - p)) = 1.000000000000" in text  # randomized response at epsilon 1 is exactly 1-DP
    assert "keep the bit with probability p = 0.7311" in text  # e / (1 + e)
    assert "3 rounds, 3 consistent with theory" in text  # seed 3: reproducible
    _figures(tmp_path, "teacher-rules.png", "teacher-house-theory.png", "teacher-run/report-accuracy.png")
    assert (tmp_path / "teacher-run" / "report.html").stat().st_size > 0


def test_the_researchers_notebook(tmp_path: Path) -> None:
    text = _run("researcher.py", tmp_path)
    assert "every point consistent with theory: True" in text
    assert "(20 points)" in text  # 5 epsilons x 2 rules x 2 observers, one row each on the report page
    assert f"optimal (exact): epsilon {_thirty_fold_epsilon():.4f}" in text and "basic: epsilon 3.0000" in text
    _figures(tmp_path, "researcher-sweep.png", "researcher-composition.png", "researcher-central-vs-distributed.png",
             "researcher-sweep/report-sweep.png")


def _thirty_fold_epsilon() -> float:
    """epsilon_tilde of 30-fold 0.1-randomized response at delta 1e-5, from the hockey-stick divergence of the
    30-fold output distributions directly (binomial in the number of flipped answers), solved by bisection:
    2.1102 (the vectors' seed_k30_e0.1_d1e-3_dt1e-05 has the same epsilon_tilde, as 000 Theorem 3.3 says)."""
    k, p = 30, math.exp(0.1) / (1 + math.exp(0.1))

    def delta(t: float) -> float:
        return sum(math.comb(k, j) * max(0.0, p ** (k - j) * (1 - p) ** j - math.exp(t) * p ** j * (1 - p) ** (k - j))
                   for j in range(k + 1))

    return float(brentq(lambda t: delta(t) - 1e-5, 0.0, 3.0, xtol=1e-12))
