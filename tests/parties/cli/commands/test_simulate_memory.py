"""``mpdp simulate`` / ``mpdp.simulate`` refuse, in seconds and before any process starts, a session whose
estimated memory is over what this machine can give now (``available_memory`` lowered here: no test runs a
session of millions of parties); the refusal suggests only what would change the run."""

from __future__ import annotations

import time

import pytest

import mpdp
from mpdp.protocols.errors import CostLimitError
from mpdp.protocols.numerics import cost
from tests.parties.cli.invoke import refused

GB = 10**9


@pytest.fixture
def twelve_gb_free(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cost, "available_memory", lambda: 12 * GB)


@pytest.mark.usefixtures("twelve_gb_free")
def test_two_million_parties_are_refused_for_memory_at_once() -> None:
    began = time.monotonic()
    with pytest.raises(CostLimitError) as refusal:  # time_limit=1: on a machine with the memory, refused for time
        mpdp.simulate(parties=2_000_000, rounds=1, time_limit=1)
    message = str(refusal.value)
    # 2,000,000 parties per worker (auto's choice at that size): 430 MiB + 2e6 x 8,000 B = 16.5 GB
    assert "2,000,000 parties x 1 round) would take about" in message and "and 16 GB, over the 12 GB of memory" in message
    assert "executor='dask://HOST:PORT'" in message
    assert "per-worker" not in message and "time_limit" not in message  # neither would change the run
    assert time.monotonic() - began < 60


@pytest.mark.usefixtures("twelve_gb_free")
def test_the_command_names_its_options_and_per_worker_only_when_per_party(capsys: pytest.CaptureFixture[str],
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    line = refused(capsys, "simulate", "--parties", "2000000", "--rounds", "1", "--time-limit", "1")
    assert "over the 12 GB of memory this machine can give now" in line
    assert line.endswith("or the parties' workers on more machines (--executor dask://HOST:PORT)")
    assert "--connections" not in line
    monkeypatch.setattr(cost, "available_memory", lambda: 100 * 10**6)
    line = refused(capsys, "simulate", "--parties", "2000", "--rounds", "1", "--connections", "per-party",
                   "--time-limit", "1")  # 430 MiB + 2,000 x 44,000 B = 539 MB
    assert "and 539 MB, over the 100 MB of memory" in line and ", --connections per-worker, or the parties'" in line


@pytest.mark.usefixtures("twelve_gb_free")
def test_on_a_dask_cluster_the_memory_is_the_cluster_s() -> None:
    with pytest.raises(CostLimitError, match="over the 1 s time limit"):
        mpdp.simulate(parties=2_000_000, rounds=1, time_limit=1, executor="dask://127.0.0.1:9")
