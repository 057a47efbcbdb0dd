"""SIGTERM and SIGHUP stop a real run as cleanly as Ctrl-C (SIGINT): the process exits with 128 + the
signal's number, and nothing it started is left — no mosquitto child, no worker, no temporary folder,
no SQLite ``-wal``/``-shm`` file. Each run is a real ``python -m mpdp`` process; its children are
found by PID while it runs and checked by PID after it exits."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import psutil
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _ready_seen
from tests.mqtt_fixtures import require_mosquitto
from tests.signal_dispositions import foreground_child

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

ROOT = Path(__file__).resolve().parents[2]
SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGHUP]


def _background_child() -> None:
    """``preexec_fn``: a shell's ``cmd &`` job, which ignores SIGINT (and not SIGHUP, unlike ``nohup``)."""
    foreground_child()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _start(args: list[str], tmp_path: Path,
           background: bool = False) -> tuple[subprocess.Popen[bytes], Path, Path]:
    """Start ``python -m mpdp ARGS`` with its own empty temporary directory, as a terminal starts it in the
    foreground (``background``: ignoring SIGINT, as a shell's ``cmd &`` starts it), whatever this test run
    inherited; return it, that directory and its log."""
    # A short folder (under the session's temporary directory, tests/conftest.py), not tmp_path/scratch: a
    # process pool's forkserver puts its socket in TMPDIR, and a socket path is at most 107 bytes (pytest-xdist's
    # popen-gwN/ level and a long test name pass that).
    scratch, log = Path(tempfile.mkdtemp(prefix="sig-")), tmp_path / "run.log"
    env = {**os.environ, "TMPDIR": str(scratch), "MPDP_BROKER_URL": ""}
    with log.open("wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "mpdp", *args], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT,
                                preexec_fn=_background_child if background else foreground_child)
    return proc, scratch, log


def _wait_for(proc: subprocess.Popen[bytes], condition: Callable[[], bool], seconds: float, what: str,
              log: Path) -> None:
    """Wait until ``condition()``; kill ``proc`` and fail if it ends first or after ``seconds`` (an idle
    machine's bound, scaled)."""
    seconds = scaled(seconds)
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            proc.wait()
            raise AssertionError(f"{what} not seen in {seconds:.1f} s: {log.read_text()}")
        time.sleep(0.1)


@pytest.fixture(scope="module")
def _sig_keys(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mpdp keys`` for three parties of session ``sig``, made once for the module's tests (each takes a copy:
    a party host writes its answer record beside its keys)."""
    keys = tmp_path_factory.mktemp("sig") / "keys"
    subprocess.run([sys.executable, "-m", "mpdp", "keys", "--parties", "3", "--session", "sig", "--out", str(keys)],
                   cwd=ROOT, capture_output=True, timeout=scaled(30), check=True)
    return keys


def _alive(pid: int) -> bool:
    """A process that still runs (a zombie holds nothing: the container's init reaps it late)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _stop_and_check(proc: subprocess.Popen[bytes], sig: signal.Signals, children: list[int],
                    log: Path, leftovers: list[Path]) -> None:
    proc.send_signal(sig)
    _check_stopped(proc, sig, children, log, leftovers)


def _check_stopped(proc: subprocess.Popen[bytes], sig: signal.Signals, children: list[int],
                   log: Path, leftovers: list[Path]) -> None:
    """``proc``, sent ``sig``, exits with 128 + sig, no traceback, none of ``children`` or ``leftovers`` left."""
    try:
        code = proc.wait(timeout=scaled(30))
    finally:
        if proc.poll() is None:
            proc.kill()
    text = log.read_text()
    assert code == 128 + sig, text
    assert "Traceback" not in text, text
    # the multiprocessing resource tracker ends when it reads the end of its pipe, just after us
    deadline = time.monotonic() + scaled(5)
    while any(_alive(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [(pid, psutil.Process(pid).cmdline()) for pid in children if _alive(pid)] == [], text
    assert [p for p in leftovers if p.exists()] == [], text


def _handles(pid: int, sig: signal.Signals) -> bool:
    """Process ``pid`` has a handler of its own for ``sig`` (bit ``sig - 1`` of SigCgt in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught, 16) >> (sig - 1) & 1)


#: (signal, seconds after the process installed its handlers): one seeded point in each second of the first 4 s
STARTUP_POINTS = [(signal.SIGINT if i == 1 else signal.SIGTERM, i + float(u))
                  for i, u in enumerate(np.random.default_rng(24).uniform(size=4))]


def test_a_stop_signal_anywhere_in_the_start_up_gives_its_own_code(tmp_path: Path) -> None:
    """SIGTERM or SIGINT at seeded points of ``mpdp simulate``'s start-up, from its handlers' installation on (the
    imports, scipy's among them, the parsing, the run folder, the broker, the workers' spawns; the processes start
    together, so each start-up is slow): 143 or 130, always (SIGTERM during scipy's import exited 130 in 2 of 40
    trials), one line, no child process or file left. Before its handlers are installed a process dies of the
    signal itself, with nothing made yet."""
    started = []
    for i, (sig, delay) in enumerate(STARTUP_POINTS):
        (tmp_path / f"{i}").mkdir()
        out = tmp_path / f"{i}" / "out"
        proc, scratch, log = _start(["simulate", "--parties", "4", "--rounds", "1000", "--repetitions", "5", "--workers",
                                     "1", "--quiet", "--broker", "embedded", "--seed", "1", "--out", str(out)],
                                    tmp_path / f"{i}")
        started.append((proc, sig, delay, scratch, log, out))
    installed: dict[int, float] = {}
    children: dict[int, list[int]] = {}
    deadline = time.monotonic() + scaled(60)
    while len(children) < len(started) and time.monotonic() < deadline:
        for proc, sig, delay, *_ in started:
            if proc.pid in children:
                continue
            if proc.pid not in installed and _handles(proc.pid, signal.SIGTERM):
                installed[proc.pid] = time.monotonic()
            if proc.pid in installed and time.monotonic() >= installed[proc.pid] + scaled(delay):
                children[proc.pid] = [c.pid for c in psutil.Process(proc.pid).children(recursive=True)]
                proc.send_signal(sig)
        time.sleep(0.005)
    assert len(children) == len(started), [log.read_text() for *_, log, _ in started]
    for proc, sig, _, scratch, log, out in started:
        _check_stopped(proc, sig, children[proc.pid], log, [out / "transcripts.sqlite-wal", out / "transcripts.sqlite-shm"])
        assert log.read_text().strip().splitlines()[-1] == "mpdp: interrupted"
        assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_simulate_stops_cleanly(sig: signal.Signals, tmp_path: Path) -> None:
    require_mosquitto()
    out = tmp_path / "out"
    proc, scratch, log = _start(["simulate", "--dataset", "house-votes-84", "--repetitions", "5000",
                                 "--workers", "2", "--quiet", "--broker", "mosquitto", "--out", str(out)],
                                tmp_path)
    parent = psutil.Process(proc.pid)

    def running() -> bool:  # the broker, both workers, and the first messages in the transcript
        names = [c.name() for c in parent.children()]
        return "mosquitto" in names and len(names) >= 3 and (out / "transcripts.sqlite-wal").exists()

    _wait_for(proc, running, 40, "mosquitto, two workers and the transcript", log)
    children = [c.pid for c in parent.children(recursive=True)]
    _stop_and_check(proc, sig, children, log, [out / "transcripts.sqlite-wal", out / "transcripts.sqlite-shm"])
    assert list(scratch.iterdir()) == []  # no mpdp-* or mpdp-mosquitto-* folder left
    # the run's results.json says it was interrupted, which rounds are decided, and how to continue
    run = json.loads((out / "results.json").read_text())["run"]
    decided = [r["round"] for r in run["rounds"] if r["status"] != "not run"]
    assert run["status"] == "interrupted" and decided == list(range(run["rounds_decided"])), run
    assert run["rounds_decided"] < len(run["rounds"]) == 16 and f"--out {out} --resume" in run["resume"], run
    assert sorted(p.name for p in out.iterdir()) == ["results.json", "transcripts.sqlite"]


@pytest.mark.parametrize(("sig", "broker"), [*((s, "embedded") for s in SIGNALS), (signal.SIGTERM, "auto"),
                                             (signal.SIGTERM, "background")],
                         ids=lambda v: getattr(v, "name", v))
def test_live_sweep_stops_cleanly(sig: signal.Signals, broker: str, tmp_path: Path) -> None:
    """A signal mid-session of a live sweep, on the embedded amqtt broker (in the sweep's own event loop)
    and on the default one (our mosquitto child): one line, 128 + the signal, no child or file left.
    ``background``: SIGTERM to a ``cmd &`` job, which ignores SIGINT (it printed pages of amqtt errors)."""
    if broker == "auto":
        require_mosquitto()
    background = broker == "background"
    proc, scratch, log = _start(["sweep", "--epsilon", "0.5:2:3", "--parties", "5", "--live", "--broker",
                                 "embedded" if background else broker, "--samples", "200", "--workers", "2"],
                                tmp_path, background)
    parent = psutil.Process(proc.pid)

    def mid_session() -> bool:  # both workers of a point's session (and the broker child, if ours)
        names = [c.name() for c in parent.children()]
        return len(names) >= 3 + (broker == "auto") and "sweep" in log.read_text()

    _wait_for(proc, mid_session, 60, "a live session's two workers", log)
    children = [c.pid for c in parent.children(recursive=True)]
    _stop_and_check(proc, sig, children, log, [])
    text = log.read_text()
    assert text.strip().splitlines()[-1] == "mpdp: interrupted"
    assert " ERROR " not in text and "not broadcasted" not in text, text  # amqtt's, after the one line
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_observe_stops_cleanly(sig: signal.Signals, mosquitto: BrokerEndpoint, _sig_keys: Path, tmp_path: Path) -> None:
    keys, out = tmp_path / "keys", tmp_path / "out"
    shutil.copytree(_sig_keys, keys)
    # the observer waits for party hosts that never come: it is mid-run, holding the transcript open
    proc, _, log = _start(["observe", "--roster", str(keys / "roster.json"), "--keys", str(keys / "coordinator"),
                           "--rounds", "2", "--broker", f"mqtt://127.0.0.1:{mosquitto.port}", "--out", str(out),
                           "--wait-parties", scaled_arg(60)], tmp_path)
    _wait_for(proc, lambda: (out / "transcripts.sqlite-wal").exists(), 30, "the observer's transcript", log)
    _stop_and_check(proc, sig, [], log, [out / "transcripts.sqlite-wal", out / "transcripts.sqlite-shm"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=lambda s: s.name)
def test_party_host_stops_cleanly(sig: signal.Signals, mosquitto: BrokerEndpoint, _sig_keys: Path,
                                  tmp_path: Path) -> None:
    keys, votes = tmp_path / "keys", tmp_path / "votes.csv"
    votes.write_text("party,bill a\np0,1\np1,0\np2,1\n")
    shutil.copytree(_sig_keys, keys)
    # the host waits for an observer that never comes
    proc, scratch, log = _start(["party", "--roster", str(keys / "roster.json"), "--keys", str(keys / "parties"),
                                 "--parties", "0-2", "--dataset", str(votes), "--seed", "1",
                                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"], tmp_path)
    try:
        asyncio.run(_ready_seen(mosquitto, "sig", 0, 30))
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    _stop_and_check(proc, sig, [], log, [])
    assert list(scratch.iterdir()) == []


def test_a_sweep_over_a_process_pool_stops_without_waiting_for_its_points(tmp_path: Path) -> None:
    """``--jobs 2`` on the House: the points (worst-case LPs of every bill, seconds each) run in pool
    workers. SIGTERM ends the run within a few seconds (it waited ~20 s for the points under way), one
    line, no worker or deadline process left, no traceback (the deadline worker's broken pipe printed one)."""
    proc, scratch, log = _start(["sweep", "--dataset", "house-votes-84", "--epsilon", "0.1:2:5", "--samples", "500",
                                 "--jobs", "2", "--rule", "worst-case"], tmp_path)
    parent = psutil.Process(proc.pid)

    def busy() -> bool:  # the forkserver, its two pool workers, and a deadline worker (an LP under way)
        return len(parent.children(recursive=True)) >= 4

    _wait_for(proc, busy, 60, "two pool workers in their points' LPs", log)
    children = [c.pid for c in parent.children(recursive=True)]
    started = time.monotonic()
    _stop_and_check(proc, signal.SIGTERM, children, log, [])
    assert time.monotonic() - started < scaled(5.0), log.read_text()
    assert log.read_text().strip().splitlines()[-1] == "mpdp: interrupted"
