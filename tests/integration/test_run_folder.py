"""``mpdp simulate`` keeps nothing in memory only (issue 20): a run whose worker is SIGKILLed fails within
seconds (not at its 60 s round timeout), exits 2, and leaves its results.json saying so, with each round's
status; ``--resume`` refuses changed inputs (naming them) and continues the run to the end, keeping the
rounds decided before."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from mpdp.broker.ports import free_loopback_port
from mpdp.parties.session.run_report import write_report
from tests.mqtt_fixtures import require_mosquitto

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

ROOT = Path(__file__).resolve().parents[2]
ROUNDS = 20
TRIALS = 3


def _decided(store: Path) -> dict[int, float]:
    """Round -> when it was decided, read-only (the run writes meanwhile); {} before the table exists."""
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5) as db:
            return {int(r): float(t) for r, t in db.execute("SELECT round, decided FROM rounds")}
    except sqlite3.OperationalError:
        return {}


def _mpdp(*args: str) -> list[str]:
    return [sys.executable, "-m", "mpdp", *args]


def _kill_a_worker_mid_run(argv: list[str], out: Path, log: Path) -> tuple[int, float]:
    """Start ``argv``; once two rounds are decided SIGKILL one worker process; return the exit code and the
    seconds from the kill to the command's exit."""
    with log.open("wb") as fh:
        proc = subprocess.Popen(argv, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 120
        while len(_decided(out / "transcripts.sqlite")) < 2:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.02)
        workers = [c for c in psutil.Process(proc.pid).children() if "spawn_main" in " ".join(c.cmdline())]
        assert len(workers) == 2, [c.cmdline() for c in workers]
        os.kill(workers[-1].pid, signal.SIGKILL)
        killed = time.monotonic()
        code = proc.wait(timeout=120)
        return code, time.monotonic() - killed
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_killed_worker_fails_the_run_in_seconds_and_resume_finishes_it(tmp_path: Path) -> None:
    require_mosquitto()
    stopped = []
    for trial in range(TRIALS):
        out = tmp_path / f"run{trial}"
        argv = _mpdp("simulate", "--parties", "60", "--rounds", str(ROUNDS), "--repetitions", "3000", "--seed",
                     str(trial), "--workers", "2", "--quiet", "--broker", "mosquitto", "--round-timeout", "60",
                     "--out", str(out))
        code, seconds = _kill_a_worker_mid_run(argv, out, tmp_path / f"run{trial}.log")
        text = (tmp_path / f"run{trial}.log").read_text()
        stopped.append(seconds)
        assert code == 2 and "Traceback" not in text, text
        assert "exited with code -9 (killed by SIGKILL) without reporting a cause (during round" in text, text
        run = json.loads((out / "results.json").read_text())["run"]
        decided = _decided(out / "transcripts.sqlite")
        assert run["status"] == "failed" and "killed by SIGKILL" in run["error"], run
        assert [r["status"] for r in run["rounds"]] == ["complete"] * len(decided) + ["not run"] * (
            ROUNDS - len(decided)), run
        assert f"mpdp: the run failed: rounds 1-{len(decided)} of {ROUNDS} are in {out}/transcripts.sqlite" in text  # 1-based
        report = write_report(out, tmp_path / f"report{trial}")  # mpdp report reads the failed run too
        assert report.rows == ROUNDS and (f"The run failed: {len(decided)} of {ROUNDS} rounds decided"
                                          in report.markdown.read_text())
    assert max(stopped) < 15.0, stopped  # the round timeout is 60 s
    print(f"SIGKILL of a worker to the command's exit: {', '.join(f'{s:.2f}' for s in stopped)} s")

    # --resume with another epsilon is refused, naming it, and starts nothing
    changed = subprocess.run([*argv, "--epsilon", "2", "--resume"], cwd=ROOT, capture_output=True, text=True,
                             timeout=60)
    assert changed.returncode == 2 and changed.stderr.count("\n") == 1, changed.stderr
    assert "epsilon: 1.0 -> 2;" in changed.stderr and "only round_timeout may change" in changed.stderr
    # the same inputs (a new round timeout) finish the run; the rounds decided before are kept as they were
    before = _decided(out / "transcripts.sqlite")
    timeout_at = argv.index("--round-timeout")  # a new round timeout in place of the first run's (given once)
    resumed = subprocess.run([*argv[:timeout_at], "--round-timeout", "90", *argv[timeout_at + 2:], "--resume",
                              "--json", "-"],
                             cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert resumed.returncode == 0, resumed.stderr
    document = json.loads(resumed.stdout)
    after = _decided(out / "transcripts.sqlite")
    assert len(after) == ROUNDS and {r: after[r] for r in before} == before
    assert document["run"]["status"] == "complete" and document["run"]["resume"] is None
    assert [r["status"] for r in document["rounds"]] == ["complete"] * ROUNDS
    assert json.loads((out / "results.json").read_text()) == document


def test_resume_says_where_it_resumes_and_a_complete_run_needs_nothing(tmp_path: Path) -> None:
    """``--resume`` names the round it resumes at (1-based, as the progress counts) of how many; resuming a
    complete run says so and exits 0 (it was silent)."""
    out = tmp_path / "out"
    argv = _mpdp("simulate", "--parties", "5", "--rounds", "3", "--repetitions", "20", "--seed", "4",
                 "--broker", "embedded", "--out", str(out))
    first = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert first.returncode == 0 and "resum" not in first.stderr, first.stderr
    with sqlite3.connect(out / "transcripts.sqlite") as db:  # forget the last round, as a run stopped after two
        for table in ("rounds", "messages", "decisions"):
            db.execute(f"DELETE FROM {table} WHERE round >= 2")  # noqa: S608 - fixed table names
    db.close()
    resumed = subprocess.run([*argv, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert resumed.returncode == 0, resumed.stderr
    assert f"mpdp: resuming the run in {out} at round 3 of 3\n" in resumed.stderr, resumed.stderr
    files = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()}
    # complete: nothing runs, nothing is written; not even a broker (nobody listens at this one)
    nowhere = list(argv)
    nowhere[nowhere.index("--broker") + 1] = f"mqtt://127.0.0.1:{free_loopback_port()}"
    again = subprocess.run([*nowhere, "--resume", "--json", "-"], cwd=ROOT, capture_output=True, text=True,
                           timeout=200)
    assert again.returncode == 0, again.stderr
    assert again.stderr.startswith(f"mpdp: the run in {out} is complete (3 of 3 rounds): nothing to run\n"), again.stderr
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in out.iterdir()} == files
    assert json.loads(again.stdout) == json.loads((out / "results.json").read_text())
    # every round recorded, but stopped before its final results.json: they are written, nothing is run again
    decided = _decided(out / "transcripts.sqlite")  # read-only: after the comparison of the files (it leaves a -shm)
    document = json.loads((out / "results.json").read_text())
    (out / "results.json").write_text(json.dumps(document | {"run": document["run"] | {"status": "interrupted"}}))
    finished = subprocess.run([*argv, "--resume"], cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert finished.returncode == 0, finished.stderr
    assert f"mpdp: the run in {out} has its 3 rounds recorded: writing its results\n" in finished.stderr
    assert json.loads((out / "results.json").read_text())["run"]["status"] == "complete"
    assert _decided(out / "transcripts.sqlite") == decided and len(decided) == 3
    # the resumed run answered round 3 under fresh keys: the store keeps each run's, so mpdp verify proves all 3
    verified = subprocess.run(_mpdp("verify", str(out)), cwd=ROOT, capture_output=True, text=True, timeout=200)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.splitlines()[0].endswith(": 15 answers of 5 parties over 3 rounds proven with the keys "
                                                    "kept in the store (2 runs)"), verified.stdout
