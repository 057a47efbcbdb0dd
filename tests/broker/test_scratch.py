"""The child broker's temporary folder (mpdp.broker.scratch): a run killed with SIGKILL leaves its folder,
the next child broker removes it, and never a folder whose owner is alive."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mpdp.broker.connectivity import check_connectivity
from mpdp.broker.mosquitto import SCRATCH_PREFIX, run_mosquitto
from mpdp.broker.scratch import OWNER_FILE, remove_stale
from tests.mqtt_fixtures import require_mosquitto

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "mpdp-test-scratch-"


def _gone_pid() -> int:
    """The id of a process that has exited (and was reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _folder(root: Path, name: str, owner: str | None) -> Path:
    folder = root / f"{PREFIX}{name}"
    folder.mkdir()
    (folder / "mosquitto.log").write_text("a log\n")
    if owner is not None:
        (folder / OWNER_FILE).write_text(owner)
    return folder


def test_only_folders_of_a_gone_owner_on_this_host_are_removed(tmp_path: Path) -> None:
    host = socket.gethostname()
    gone = _folder(tmp_path, "gone", f"{_gone_pid()} {host}\n")
    mine = _folder(tmp_path, "mine", f"{os.getpid()} {host}\n")
    parent = _folder(tmp_path, "parent", f"{os.getppid()} {host}\n")
    elsewhere = _folder(tmp_path, "elsewhere", f"{_gone_pid()} another-{host}\n")
    unknown = _folder(tmp_path, "no-owner-file", None)
    garbled = _folder(tmp_path, "garbled", "not a pid\n")
    other_prefix = tmp_path / "unrelated"
    other_prefix.mkdir()
    (other_prefix / OWNER_FILE).write_text(f"{_gone_pid()} {host}\n")
    assert remove_stale(PREFIX, tmp_path) == [gone]
    assert not gone.exists()
    assert all(f.exists() for f in (mine, parent, elsewhere, unknown, garbled, other_prefix))
    assert remove_stale(PREFIX, tmp_path) == []


async def test_a_sigkilled_runs_folder_is_removed_by_the_next_broker_never_a_running_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require_mosquitto()
    script = ("import asyncio\nfrom mpdp.broker.mosquitto import run_mosquitto\n"
              "async def main():\n    async with run_mosquitto() as endpoint:\n"
              "        print(endpoint.port, flush=True)\n        await asyncio.sleep(60)\n"
              "asyncio.run(main())\n")
    killed = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=ROOT,
                              env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        assert killed.stdout is not None and int(killed.stdout.readline()) > 0
    finally:
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        if killed.stdout is not None:
            killed.stdout.close()
    [left] = tmp_path.glob(f"{SCRATCH_PREFIX}*")  # SIGKILL skipped its cleanup
    assert (left / OWNER_FILE).read_text().split() == [str(killed.pid), socket.gethostname()]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    async with run_mosquitto(timeout=3.0) as first:
        assert not left.exists()
        [running] = tmp_path.glob(f"{SCRATCH_PREFIX}*")
        assert (running / OWNER_FILE).read_text().split()[0] == str(os.getpid())
        async with run_mosquitto(timeout=3.0) as second:  # this start finds the first one's folder in use
            assert running.exists() and len(list(tmp_path.glob(f"{SCRATCH_PREFIX}*"))) == 2
            await check_connectivity(first)
            await check_connectivity(second)
    assert list(tmp_path.glob(f"{SCRATCH_PREFIX}*")) == []
