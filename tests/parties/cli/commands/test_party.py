"""``mpdp party``: what it checks before touching the network."""

import json
from pathlib import Path

import pytest

from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.session.host_records import NOTE_NAME
from tests.parties.cli.invoke import refused

BROKER = "mqtt://127.0.0.1:1"


def test_party_checks_its_arguments(keys_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    roster = str(keys_folder / "roster.json")
    party = ["party", "--roster", roster, "--keys", str(keys_folder / "parties"), "--dataset", "house-votes-84"]
    assert "running broker" in refused(capsys, *party, "--parties", "0-2")
    assert "ids in 0..2" in refused(capsys, *party, "--parties", "0-3", "--broker", BROKER, "--reconnect-window", "0")
    assert "3 rows" in refused(capsys, *party, "--parties", "0-2", "--broker", BROKER, "--reconnect-window", "0")
    wrong_keys = ["party", "--roster", roster, "--keys", str(keys_folder / "coordinator"), "--dataset", "x.csv"]
    assert "readable key file of party 0" in refused(capsys, *wrong_keys, "--parties", "0", "--broker", BROKER, "--reconnect-window", "0")
    assert "--reconnect-window=-5.0 is not allowed: seconds from 0 (no retry) to 604800" in refused(
        capsys, *party, "--parties", "0-2", "--broker", BROKER, "--reconnect-window", "-5")


def test_party_checks_its_privacy_policy(keys_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text("party,a\np0,1\np1,0\np2,1\n")
    party = ["party", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys_folder / "parties"),
             "--dataset", str(votes), "--parties", "0-2", "--broker", BROKER, "--reconnect-window", "0"]
    assert "--max-repetitions=0 is not allowed" in refused(capsys, *party, "--max-repetitions", "0")
    assert "EPS,DELTA" in refused(capsys, *party, "--budget", "2")
    assert "delta_slack" in refused(capsys, *party, "--budget", "2,1e-9")  # below delta_tilde 1e-6


def test_a_host_without_the_record_its_parties_answered_with_is_refused(
        keys_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text("party,a\np0,1\np1,0\np2,1\n")
    keys = keys_folder / "parties"
    party = ["party", "--roster", str(keys_folder / "roster.json"), "--keys", str(keys), "--dataset", str(votes),
             "--broker", BROKER, "--reconnect-window", "0"]
    # the first start notes its record (then stops at the absent broker)
    assert "127.0.0.1:1" in refused(capsys, *party, "--parties", "0-1")
    record = keys / "answers-0.sqlite"
    assert record.exists()
    note = json.loads((keys / NOTE_NAME).read_text())
    (entry,) = note[next(iter(note))]
    assert (entry["record"], entry["parties"]) == (str(record.resolve()), [0, 1])
    assert entry["identity"] == AnswerRecord(record).identity
    # the same record again: accepted (gets as far as the broker)
    assert "127.0.0.1:1" in refused(capsys, *party, "--parties", "0-1")
    # another --record for party 1: refused, naming the party, the noted record and the way out
    other = tmp_path / "other.sqlite"
    line = refused(capsys, *party, "--parties", "1-2", "--record", str(other))
    assert "answer record of parties 1 in session" in line and f"answered with the record {record.resolve()}" in line
    assert "--new-record" in line and not other.exists()
    # a party not noted yet (2) is free; the record deleted, or deleted and created again: refused
    assert "127.0.0.1:1" in refused(capsys, *party, "--parties", "2", "--record", str(other))
    record.unlink()
    assert "that record file is missing" in refused(capsys, *party, "--parties", "0-1")
    AnswerRecord(record).close()
    assert "created again" in refused(capsys, *party, "--parties", "0")
    # told explicitly: the note now names the new record, the other parties keep theirs
    assert "127.0.0.1:1" in refused(capsys, *party, "--parties", "0", "--new-record")
    entries = json.loads((keys / NOTE_NAME).read_text())[next(iter(note))]
    assert sorted((e["parties"], e["record"]) for e in entries) == [
        ([0], str(record.resolve())), ([1], str(record.resolve())), ([2], str(other.resolve()))]
    # party 1's note holds the first file's identity; and a host of party 1 alone defaults to answers-1.sqlite
    assert "created again" in refused(capsys, *party, "--parties", "1", "--record", str(record))
    assert "answered with the record" in refused(capsys, *party, "--parties", "1")
    # a damaged note is one line naming it
    (keys / NOTE_NAME).write_bytes(b"\xff{")
    assert NOTE_NAME in refused(capsys, *party, "--parties", "0")
