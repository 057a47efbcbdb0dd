"""A clean per-party MQTT run ends quietly (issue 20): every party's connection closes without a traceback on
standard error (a 1,000-party run was reported to end with hundreds of "Bad file descriptor" tracebacks
from a worker registering a writer on a closed socket)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint

pytestmark = [pytest.mark.integration, pytest.mark.timeout(400)]

ROOT = Path(__file__).resolve().parents[2]


def test_a_per_party_mqtt_run_ends_without_a_traceback(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "mpdp", "simulate", "--parties", "200", "--rounds", "3", "--repetitions", "1",
            "--seed", "3", "--connections", "per-party", "--broker", mosquitto.url, "--out", str(out), "--json"]
    run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=380)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in run.stderr and "Bad file descriptor" not in run.stderr, run.stderr[-3000:]
    document = json.loads(run.stdout)
    assert [r["status"] for r in document["rounds"]] == ["complete"] * 3
