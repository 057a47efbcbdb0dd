"""A script piped to ``python -`` (its ``__main__.__file__`` is ``"<stdin>"``) runs a live session and a sweep's
process pool: their children no longer try to run a file ``<stdin>`` (every worker failed with
``FileNotFoundError`` and the run with "exited with code 1 without reporting a cause")."""

from __future__ import annotations

import subprocess
import sys
import types
from pathlib import Path

import pytest

from mpdp.parties.session.main_module import main_file_hidden
from tests.calibration import scaled


def _piped(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-"], input=text, capture_output=True, text=True, timeout=scaled(100),
                          cwd=tmp_path)


def test_a_simulation_piped_to_python_runs(tmp_path: Path) -> None:
    done = _piped(tmp_path, """\
import sys, mpdp
assert sys.modules["__main__"].__file__ == "<stdin>"
r = mpdp.simulate(parties=3, repetitions=5, seed=1, broker="embedded", workers=2, progress=False)
print("done", len(r.rounds), sys.modules["__main__"].__file__)
""")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["done", "1", "<stdin>"]  # and __file__ given back


def test_a_sweep_pool_piped_to_python_runs(tmp_path: Path) -> None:
    done = _piped(tmp_path, """\
import mpdp
from mpdp.parties.api import sweep_pool
sweep_pool.POOL_START_SECONDS = 0.0  # points this small would run here
s = mpdp.sweep("0.5:1:2", parties=7, rule="average", observer="central", samples=200, jobs=2)
print("points", len(s.rows()))
""")
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["points", "2"]


def test_only_a_main_file_that_does_not_exist_is_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    piped = types.ModuleType("__main__")
    piped.__file__ = "<stdin>"
    monkeypatch.setitem(sys.modules, "__main__", piped)
    with main_file_hidden():
        assert not hasattr(piped, "__file__")
        with main_file_hidden():  # nested (a worker started while a pool runs): hidden until the outer ends
            pass
        assert not hasattr(piped, "__file__")
    assert piped.__file__ == "<stdin>"
    script = types.ModuleType("__main__")
    script.__file__ = __file__  # a script that exists: its children re-import it, as multiprocessing does
    monkeypatch.setitem(sys.modules, "__main__", script)
    with main_file_hidden():
        assert script.__file__ == __file__
