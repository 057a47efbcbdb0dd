"""``mpdp simulate``'s own mosquitto SIGKILLed before round 1 (a real ``python -m mpdp`` process): the run fails
at once naming the dead broker (it is our child), not after its workers' 60 s ready timeout."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from tests.calibration import scaled
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]


def _mosquitto_child(parent: psutil.Process, seconds: float) -> psutil.Process:
    """``parent``'s mosquitto child, once it runs (polled; AssertionError after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for child in parent.children(recursive=True):
            with contextlib.suppress(psutil.Error):
                if child.name() == "mosquitto":
                    return child
        time.sleep(0.02)
    raise AssertionError(f"no mosquitto child of {parent.pid} within {seconds:.0f} s")


def test_simulate_fails_at_once_when_its_broker_dies(tmp_path: Path) -> None:
    require_mosquitto()
    env = {**os.environ, "MPDP_BROKER_URL": ""}
    proc = subprocess.Popen([sys.executable, "-m", "mpdp", "simulate", "--parties", "20", "--rounds", "200",
                             "--workers", "2", "--broker", "mosquitto", "--out", str(tmp_path / "out")],
                            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT)
    try:
        broker = _mosquitto_child(psutil.Process(proc.pid), scaled(30))
        args = broker.cmdline()
        config = Path(args[args.index("-c") + 1]).read_text()
        port = int(re.search(r"^listener (\d+) ", config, re.MULTILINE).group(1))  # type: ignore[union-attr]
        deadline = time.monotonic() + scaled(30)  # clients connected: the run is past its broker's start-up
        while sum(c.status == psutil.CONN_ESTABLISHED for c in broker.net_connections("tcp")) < 3:
            assert time.monotonic() < deadline and proc.poll() is None, "no clients on the broker"
            time.sleep(0.02)
        os.kill(broker.pid, signal.SIGKILL)
        killed = time.monotonic()
        # the workers' ready timeout is 60 s; the broker's exit is noticed by its parent at once
        output = proc.communicate(timeout=scaled(20))[0].decode()
        after = time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 2, output
    assert (f"the MQTT broker (mosquitto pid {broker.pid}, port {port}) was killed by SIGKILL while the run "
            "needed it") in output, output
    assert "did not report ready" not in output and after < scaled(20), output
