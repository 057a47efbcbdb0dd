"""A process started while its broker is down waits for it within its reconnect window, says so in one line,
and runs once the broker is there (issue 20: ``mpdp simulate --broker mqtt://...`` with nothing listening
failed at once). A real ``python -m mpdp simulate`` process and a real mosquitto started seconds later."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpdp.broker.ports import free_loopback_port
from mpdp.broker.settings import find_mosquitto
from tests.calibration import scaled
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]


def test_a_simulation_started_before_its_broker_waits_for_it_and_runs(tmp_path: Path) -> None:
    require_mosquitto()
    port, out, log = free_loopback_port(), tmp_path / "out", tmp_path / "run.log"
    url = f"mqtt://127.0.0.1:{port}"
    with log.open("wb") as fh:
        run = subprocess.Popen([sys.executable, "-m", "mpdp", "simulate", "--parties", "5", "--rounds", "2",
                                "--broker", url, "--seed", "20", "--out", str(out)], cwd=ROOT, stdin=subprocess.DEVNULL,
                               stdout=fh, stderr=subprocess.STDOUT, env={**os.environ, "MPDP_BROKER_URL": ""})
    broker: subprocess.Popen[bytes] | None = None
    try:
        deadline = time.monotonic() + scaled(60)
        while "waiting for it" not in log.read_text():
            assert run.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.2)
        time.sleep(2.0)  # it keeps waiting (the broker is still down)
        assert run.poll() is None, log.read_text()
        broker = subprocess.Popen([str(find_mosquitto()), "-p", str(port)], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        code = run.wait(timeout=scaled(120))
    finally:
        for proc in (run, broker):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
    text = log.read_text()
    assert code == 0, text
    waiting = [line for line in text.splitlines() if "waiting for it" in line]
    assert len(waiting) == 1 and url in waiting[0] and "Connection refused" in waiting[0], text
    assert "waiting for it for up to 60 s (--reconnect-window)" in waiting[0], text  # simulate's window: max(60 s, round timeout)
    assert sum(f"the MQTT broker at {url} answered after" in line for line in text.splitlines()) == 1, text
    doc = json.loads((out / "results.json").read_text())
    assert doc["run"]["status"] == "complete" and doc["run"]["rounds_decided"] == 2, doc["run"]
