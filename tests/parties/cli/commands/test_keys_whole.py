"""``mpdp keys`` writes its folder whole or not at all: a real ``mpdp keys`` process stopped by SIGTERM (or killed
by SIGKILL) half-way through its key files leaves nothing, ``--force`` leaves no key of the earlier session, an
existing folder is refused in one line, and a long run prints its estimate and progress lines."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mpdp.parties.cli.commands import keys
from mpdp.parties.cli.main import main
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster
from tests.parties.cli.invoke import refused

#: Parties of the interrupted runs: minutes of files at the load the newcomer saw, about 10 s here.
MANY = 50_000


def _listing(folder: Path) -> dict[str, list[str]]:
    """Every directory under ``folder`` (relative, "." for itself) -> its entries, sorted."""
    return {os.path.relpath(root, folder): sorted(dirs + files) for root, dirs, files in os.walk(folder)}


def _stopped_mid_write(out: Path, sig: signal.Signals, *options: str) -> subprocess.CompletedProcess[str]:
    """Run ``mpdp keys --parties MANY --out out [options]`` and send it ``sig`` once its first party key file is
    written (in its temporary folder beside ``out``); returns the finished process."""
    proc = subprocess.Popen([sys.executable, "-m", "mpdp", "keys", "--parties", str(MANY), "--out", str(out),
                             *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120  # the key pairs come first: seconds, more under load
    while not any(out.parent.glob(f".{out.name}.partial-*/new/parties/party-*.key")):
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "no key file written within 120 s"
        time.sleep(0.02)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def test_sigterm_half_way_leaves_nothing_and_a_rerun_works(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kmid"
    done = _stopped_mid_write(out, signal.SIGTERM)
    assert done.returncode == 128 + signal.SIGTERM
    lines = done.stderr.splitlines()  # a progress line between them when the key pairs took 10 s (load)
    assert lines[0] == f"mpdp: writing {MANY:,} party key files: about {MANY / keys.KEY_FILES_PER_SECOND:.0f} s"
    assert lines[-1] == "mpdp: interrupted"
    assert all(" party key files written after " in line for line in lines[1:-1]), lines
    assert os.listdir(tmp_path) == []  # no key, no roster, no temporary folder, not even kmid/
    assert main(["keys", "--parties", "5", "--epsilon", "1", "--out", str(out)]) == 0
    assert "5 parties" in capsys.readouterr().out
    assert _listing(out) == {".": ["coordinator", "parties", "roster.json"], "coordinator": ["coordinator.key"],
                             "parties": [f"party-{i}.key" for i in range(5)]}
    assert os.listdir(tmp_path) == ["kmid"]


def test_sigterm_during_force_leaves_the_earlier_keys_as_they_were(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "keys"
    assert main(["keys", "--parties", "3", "--out", str(out)]) == 0
    capsys.readouterr()
    before = {path: path.read_bytes() for path in out.rglob("*") if path.is_file()}
    assert _stopped_mid_write(out, signal.SIGTERM, "--force").returncode == 128 + signal.SIGTERM
    assert {path: path.read_bytes() for path in out.rglob("*") if path.is_file()} == before
    assert os.listdir(tmp_path) == ["keys"]


def test_a_sigkilled_runs_folder_is_removed_by_the_next_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "kmid"
    assert _stopped_mid_write(out, signal.SIGKILL).returncode == -signal.SIGKILL
    left = [p.name for p in tmp_path.iterdir()]  # SIGKILL runs no cleanup: its temporary folder stays
    assert len(left) == 2 and "kmid" in left and any(name.startswith(".kmid.partial-") for name in left)
    assert main(["keys", "--parties", "2", "--out", str(out)]) == 0
    assert os.listdir(tmp_path) == ["kmid"]  # its owner is gone: removed


def test_force_replaces_every_earlier_file_and_keeps_the_users(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "keys"
    assert main(["keys", "--parties", "8", "--split", "0-3", "--split", "4-7", "--protocol", "mpc", "--out",
                 str(out)]) == 0
    (out / "notes.txt").write_text("mine\n")
    capsys.readouterr()
    line = refused(capsys, "keys", "--parties", "3", "--out", str(out))
    assert "it holds coordinator, notes.txt, parties-0-3 and 5 more" in line and "--force" in line
    assert main(["keys", "--parties", "3", "--force", "--out", str(out)]) == 0
    assert _listing(out) == {".": ["coordinator", "notes.txt", "parties", "roster.json"],
                             "coordinator": ["coordinator.key"], "parties": [f"party-{i}.key" for i in range(3)]}
    assert (out / "notes.txt").read_text() == "mine\n"
    facts = read_roster(out / "roster.json")
    assert facts.roster.k == 3 and facts.servers is None
    assert [len(read_private_key(party_key_path(out / "parties", i), facts, i)) for i in range(3)] == [32] * 3


def test_a_folder_left_by_an_earlier_mpdp_is_refused_in_one_line(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """The newcomer's folder: an earlier mpdp's coordinator key and party keys, no roster (a FileExistsError
    traceback before); an empty folder is taken, and a file is no folder."""
    out = tmp_path / "kmid"
    (out / "coordinator").mkdir(parents=True)
    (out / "coordinator" / "coordinator.key").write_text("{}\n")
    (out / "parties").mkdir()
    line = refused(capsys, "keys", "--parties", "5", "--epsilon", "1", "--out", str(out))
    assert line == (f"mpdp: error: --out='{out}' is not allowed: a new or empty directory (it holds coordinator, "
                    "parties) (give a new directory, or --force to replace its earlier files)")
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["keys", "--parties", "1", "--out", str(empty)]) == 0
    capsys.readouterr()
    assert "not a file" in refused(capsys, "keys", "--parties", "1", "--out", str(out / "coordinator" /
                                                                                   "coordinator.key"))


def test_a_long_run_prints_its_estimate_and_progress_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """At 2 files per second 3 parties are 1.5 s of estimated work; lines every 0 s: one per file."""
    monkeypatch.setattr(keys, "KEY_FILES_PER_SECOND", 2)
    monkeypatch.setattr(keys, "PROGRESS_EVERY", 0.0)
    assert main(["keys", "--parties", "3", "--out", str(tmp_path / "a")]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "mpdp: writing 3 party key files: about 1.5 s"
    assert [line.split(" party key files written")[0] for line in lines[1:]] == [
        "mpdp: 1 of 3", "mpdp: 2 of 3", "mpdp: 3 of 3"]
    assert lines[-1].endswith("(about 0 s left)")
    assert main(["keys", "--parties", "3", "--quiet", "--out", str(tmp_path / "b")]) == 0
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(keys, "PROGRESS_EVERY", 2.0)  # estimated shorter than a progress line: nothing printed
    assert main(["keys", "--parties", "3", "--out", str(tmp_path / "c")]) == 0
    assert capsys.readouterr().err == ""
