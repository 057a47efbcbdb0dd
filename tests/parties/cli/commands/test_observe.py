"""``mpdp observe``: what it checks before touching the network."""

import json
import sqlite3
import time
from pathlib import Path

import pytest

from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.observe import HOSTS_MODE
from tests.parties.cli.invoke import refused

BROKER = "mqtt://127.0.0.1:1"


def test_observe_checks_its_arguments(keys_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = str(keys_folder / "roster.json")
    observe = ["observe", "--roster", roster, "--keys", str(keys_folder / "coordinator"), "--broker", BROKER]
    assert "exactly one of" in refused(capsys, *observe, "--reconnect-window", "0", "--rounds", "2",
                                       "--dataset-rounds", "house-votes-84")
    assert "symmetric" in refused(capsys, *observe, "--reconnect-window", "0", "--rounds", "2", "--function", "table:0,1")
    assert "--reconnect-window=700000.0 is not allowed" in refused(
        capsys, *observe, "--rounds", "2", "--reconnect-window", "700000")
    assert "readable key file of the coordinator" in refused(
        capsys, "observe", "--roster", roster, "--keys", str(keys_folder / "parties"), "--rounds", "1",
        "--broker", BROKER, "--reconnect-window", "0")


def test_observe_refuses_another_sessions_out_unless_forced(keys_folder: Path, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    with TranscriptStore(out / "transcripts.sqlite") as store:  # an earlier session's transcript
        store.open_session("earlier", 3, 1, ["a"], mode=HOSTS_MODE)
    observe = ["observe", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys_folder / "coordinator"),
               "--rounds", "1", "--broker", BROKER, "--reconnect-window", "0", "--out", str(out), "--wait-parties", "1"]
    assert "it holds transcripts.sqlite" in refused(capsys, *observe)
    assert (out / "transcripts.sqlite").exists()
    # --force replaces it: the run then gets as far as the (absent) broker
    assert "127.0.0.1:1" in refused(capsys, *observe, "--force")
    assert not (out / "transcripts.sqlite").exists()


def test_observe_over_its_session_in_progress_without_resume_says_so_before_touching_the_broker(
        keys_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 20: restarted without --resume it waited --wait-parties (300 s) for ready reports; now one line
    names the recorded rounds and --resume, before the (here absent) broker is tried."""
    session = json.loads((keys_folder / "roster.json").read_text())["session"]
    out = tmp_path / "out"
    with TranscriptStore(out / "transcripts.sqlite") as store:  # rounds 0-1 of 4 recorded by the stopped observer
        store.open_session(session, 3, 1, [f"round-{j + 1}" for j in range(4)], mode=HOSTS_MODE)
    with sqlite3.connect(out / "transcripts.sqlite") as db:
        db.executemany("INSERT INTO rounds VALUES (?, ?, ?, 'complete', '[0,1,2]', '[]', '[]', 3, 0, 0.0)",
                       [(session, j, f"round-{j + 1}") for j in (0, 1)])
    observe = ["observe", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys_folder / "coordinator"),
               "--rounds", "4", "--broker", BROKER, "--reconnect-window", "0", "--out", str(out), "--wait-parties", "300"]
    started = time.monotonic()
    assert refused(capsys, *observe) == (f"mpdp: error: store {out / 'transcripts.sqlite'} holds rounds 0-1 of "
                                         f"session {session} in progress; --resume continues it")
    assert time.monotonic() - started < 60  # not --wait-parties, not the broker's reconnect window
    assert "127.0.0.1:1" in refused(capsys, *observe, "--resume")  # --resume gets as far as the broker
