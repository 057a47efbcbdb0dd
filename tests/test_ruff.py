"""``ruff check`` passes with the project's configuration (pyproject.toml ``[tool.ruff]``): pyflakes' errors
(undefined and unused names), pycodestyle, import order, bugbear and pyupgrade, over every folder."""

import pathlib
import subprocess
import sys

from tests.calibration import scaled

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_ruff_check_passes() -> None:
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", "."],
                            cwd=ROOT, capture_output=True, text=True, timeout=scaled(300))
    assert result.returncode == 0, result.stdout + result.stderr
