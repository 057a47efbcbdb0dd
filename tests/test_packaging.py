"""The wheel holds one import name, ``mpdp``, and works where a user's own folders named like our rooms
(analysis/, broker/, protocols/, parties/) sit in the working directory."""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.calibration import scaled

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("analysis", "broker", "protocols", "parties")

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``pip wheel --no-deps`` of a copy of the source tree (the build leaves build/ where it runs), with the
    test extra's setuptools instead of an isolated build environment (which downloads and installs one: most of
    the test's time)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    shutil.copytree(ROOT, source, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", ".pytest_cache", ".hypothesis", "tests", "benchmarks",
        ".venv", ".mypy_cache", ".ruff_cache", "site"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                    "--wheel-dir", str(work), str(source)], check=True, capture_output=True, timeout=scaled(150))
    (built,) = work.glob("mpdp-*.whl")
    return built


def test_the_wheel_holds_only_mpdp_with_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"mpdp", wheel.name.split("-py3")[0] + ".dist-info"}
    expected = {"mpdp/py.typed", "mpdp/parties/data/house-votes-84.csv", "mpdp/broker/mosquitto.conf",
                *(f"mpdp/{room}/__init__.pyi" for room in ROOMS)}  # the lazy names are read from the stubs
    assert expected <= set(names)
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in names)


def _python(code_or_module: list[str], cwd: Path, target: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(target)}
    env.pop("PYTHONSAFEPATH", None)  # keep the working directory first on sys.path, where the decoys are
    return subprocess.run([sys.executable, *code_or_module], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=scaled(120))


def test_installed_mpdp_ignores_folders_named_like_its_rooms(wheel: Path, tmp_path: Path) -> None:
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=scaled(120))
    decoys = tmp_path / "project"
    for room in ROOMS:
        (decoys / room).mkdir(parents=True)
        (decoys / room / "__init__.py").write_text(f"raise ImportError('the user\\'s own {room} package')\n")

    version = _python(["-m", "mpdp", "--version"], decoys, target)
    assert version.returncode == 0 and version.stdout == "mpdp 0.1.0\n", version.stderr
    assert _python(["-m", "mpdp", "--help"], decoys, target).stdout.startswith("usage: mpdp")
    compose = _python(["-m", "mpdp", "compose", "--epsilon", "1", "--delta", "0", "-k", "2"], decoys, target)
    assert compose.returncode == 0 and "epsilon_tilde" in compose.stdout, compose.stderr
    api = _python(["-c", "import mpdp, mpdp.protocols as p; print(mpdp.__file__); print(p.RandomizedResponse(1.0).p_truth)"],
                  decoys, target)
    assert api.returncode == 0, api.stderr
    where, p_truth = api.stdout.splitlines()
    assert Path(where).is_relative_to(target) and float(p_truth) == pytest.approx(math.exp(1) / (1 + math.exp(1)))

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    bare = _python(["-c", "import protocols"], elsewhere, target)
    assert bare.returncode == 1 and "ModuleNotFoundError: No module named 'protocols'" in bare.stderr
