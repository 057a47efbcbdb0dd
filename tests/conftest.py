"""Shared fixtures: the reference vectors copied from ../shared/vectors (tests stay self-contained).

Hypothesis: under CI (``CI`` set) the ``ci`` profile derandomizes the property tests, so a submission
is judged on the same examples every run (and a new counterexample shows up locally, where the
example database keeps it, rather than as a flaky CI failure). No profile has a per-example deadline:
the laws are about values, and a shared 2-core machine can make one example slow without anything being wrong.
The fuzz tests take their example count from the ``fuzz`` profile (``MPDP_FUZZ=1``: 10^4 inputs per target).

Timeouts: every pytest-timeout timeout (``--timeout`` and the ``timeout`` markers) is stretched by the
machine's measured slowdown (tests/calibration.py), which the session header prints.
"""

import json
import os
import pathlib
import tempfile
from collections.abc import Iterator

import pytest
import pytest_timeout
from hypothesis import settings

from tests.calibration import slowdown

settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, database=None, deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else "dev")
#: The ``fuzz`` profile of the bad-input fuzz tests (tests/parties/rounds/test_fuzz.py): the active profile with
#: MPDP_FUZZ_EXAMPLES examples per target (default 300), or 10^4 with MPDP_FUZZ=1 (the full run, by hand).
settings.register_profile("fuzz", settings(
    max_examples=10_000 if os.environ.get("MPDP_FUZZ") == "1" else int(os.environ.get("MPDP_FUZZ_EXAMPLES", "300"))))

VECTORS = pathlib.Path(__file__).parent / "vectors"


@pytest.fixture(autouse=True, scope="session")
def _temporary_files_under_basetemp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``tempfile`` makes its files and folders (a simulation's ``mpdp-run-XXXX`` folder, a broker's) under
    pytest's base temporary directory, which pytest prunes, not in the system's ``/tmp``; so do the
    processes the tests start (``TMPDIR``)."""
    previous, environ = tempfile.tempdir, os.environ.get("TMPDIR")
    tempfile.tempdir = os.environ["TMPDIR"] = str(tmp_path_factory.mktemp("tempfile"))
    yield
    tempfile.tempdir = previous
    if environ is None:
        del os.environ["TMPDIR"]
    else:
        os.environ["TMPDIR"] = environ


@pytest.fixture(scope="session")
def graph_vectors() -> list[dict]:
    with open(VECTORS / "graph_colorings.json") as fh:
        return json.load(fh)["cases"]


def pytest_report_header(config: pytest.Config) -> str:
    return f"slowdown: {slowdown():.2f} (timeouts and waits stretched by it: tests/calibration.py)"


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_timeout_set_timer(item: pytest.Item, settings: pytest_timeout.Settings) -> bool:
    """pytest-timeout's own timer, for the test's timeout stretched by the measured slowdown."""
    return bool(pytest_timeout.pytest_timeout_set_timer(item, settings._replace(timeout=settings.timeout * slowdown())))
