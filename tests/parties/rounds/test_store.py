"""The SQLite transcript store: one transaction per round, idempotent, resumable, exportable."""

from __future__ import annotations

import base64
import csv
import json
import sqlite3
from pathlib import Path

import numpy as np
import pytest

import mpdp
from mpdp.broker.messages import PartyMessage, decode_answer
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.store import MessageRows, RecordedMessage, RoundRecord, TranscriptStore
from mpdp.protocols.errors import ParameterError, ProtocolViolation

REPS = 3


def _record(index: int, symbols: dict[int, list[int]], abstain: tuple[int, ...] = (), k: int = 4,
            rejects: dict[int, dict[str, tuple[int, str]]] | None = None) -> RoundRecord:
    messages = []
    for party in range(k):
        if party in symbols:
            messages.append(RecordedMessage(party, "symbols", None, np.array(symbols[party], np.uint8),
                                            b"\x02p%dr%d" % (party, index)))
        elif party in abstain:
            messages.append(RecordedMessage(party, "abstain", "did-not-vote", np.zeros(0, np.uint8),
                                            b'{"a":%d}' % party))
        else:
            messages.append(RecordedMessage(party, "absent", None, np.zeros(0, np.uint8), None))
    participants = np.array(sorted(symbols), dtype=np.int64)
    matrix = np.array([symbols[p] for p in sorted(symbols)], dtype=np.uint8).T.reshape(REPS, len(symbols))
    absent = [p for p in range(k) if p not in symbols and p not in abstain]
    outcome = RoundOutcome(
        name=f"bill {index}", participants=participants, symbols=matrix,
        decisions=np.arange(REPS, dtype=np.int64) % 2, messages_received=len(symbols) + len(abstain),
        messages_rejected=2, index=index, abstained=np.array(abstain, np.int64),
        absent=np.array(absent, np.int64), status="timeout" if absent else "complete",
    )
    return RoundRecord("s1", outcome, MessageRows(REPS, tuple(messages)), rejects or {index: {"signature": (2, "x")}})


def _messages(record: RoundRecord) -> tuple[RecordedMessage, ...]:
    assert isinstance(record.rows, MessageRows)
    return record.rows.messages


def _same(a: RoundOutcome, b: RoundOutcome) -> None:
    assert (a.name, a.index, a.status, a.messages_received, a.messages_rejected) == (
        b.name, b.index, b.status, b.messages_received, b.messages_rejected)
    for field in ("participants", "symbols", "decisions", "abstained", "absent"):
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and np.array_equal(x, y), field


def test_a_round_is_stored_and_loaded_back(tmp_path: Path) -> None:
    record = _record(0, {0: [1, 0, 1], 2: [0, 0, 1], 3: [1, 1, 1]}, abstain=(1,))
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        assert store.open_session("s1", 4, REPS, ["bill 0", "bill 1"], mode="simulation (seeded generators)") == frozenset()
        assert store.record_round(record)
        loaded = store.load_round("s1", 0)
    _same(loaded, record.outcome)
    assert loaded.symbols[:, 1].tolist() == [0, 0, 1]  # party 2's column
    db = sqlite3.connect(tmp_path / "t.sqlite")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_recording_is_idempotent_and_a_conflict_is_refused(tmp_path: Path) -> None:
    record = _record(0, {0: [1, 0, 1], 1: [0, 0, 0]})
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s1", 4, REPS, ["a"], mode="simulation (seeded generators)")
        assert store.record_round(record) is True
        assert store.record_round(record) is False  # the round is there: nothing changes
        assert store.rejects("s1") == {(0, "signature"): 2}  # not counted twice
        same = _messages(record)[0]
        assert store.record_message("s1", 0, REPS, same) is False
        other = RecordedMessage(0, "symbols", None, np.array([0, 0, 0], np.uint8), b"\x02forged")
        with pytest.raises(ProtocolViolation, match="conflict"):
            store.record_message("s1", 0, REPS, other)
        assert store.load_round("s1", 0).symbols[:, 0].tolist() == [1, 0, 1]
        # a new message under a new key goes in
        assert store.record_message("s1", 1, REPS, same) is True


def test_a_failed_round_transaction_leaves_nothing(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s1", 4, REPS, ["a", "b"], mode="simulation (seeded generators)")
        store.record_message("s1", 1, REPS, RecordedMessage(0, "symbols", None, np.zeros(3, np.uint8), b"\x02other"))
        with pytest.raises(ProtocolViolation):
            store.record_round(_record(1, {0: [1, 1, 1]}))
        assert store.recorded_rounds("s1") == [] and store.rejects("s1") == {}


def test_resume_reports_recorded_rounds_and_refuses_another_run(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "t.sqlite"
    with TranscriptStore(path) as store:
        store.open_session("s1", 4, REPS, ["a", "b", "c"], mode="simulation (seeded generators)")
        store.record_round(_record(0, {0: [1, 1, 1]}))
        store.record_round(_record(2, {1: [0, 1, 0]}))
    with TranscriptStore(path) as store:
        assert store.open_session("s1", 4, REPS, ["a", "b", "c"], mode="simulation (seeded generators)") == frozenset({0, 2})
        with pytest.raises(ParameterError, match=r"changed: parties: 4 -> 5\)$"):
            store.open_session("s1", 5, REPS, ["a", "b", "c"], mode="simulation (seeded generators)")
        with pytest.raises(ParameterError, match=r"changed: rounds: 3 rounds \(a \.\. c\) -> 6 rounds \(a \.\. f\)\)$"):
            store.open_session("s1", 4, REPS, list("abcdef"), mode="simulation (seeded generators)")
        with pytest.raises(ParameterError, match=r"changed: mode: simulation \(seeded generators\) -> hosts; "
                                                 r"round 2: 'b' -> 'x'\)$"):
            store.open_session("s1", 4, REPS, ["a", "x", "c"], mode="hosts")
        with pytest.raises(ParameterError, match="round"):
            store.load_round("s1", 1)
        assert store.open_session("s2", 4, REPS, ["a"], mode="simulation (seeded generators)") == frozenset()


def test_unwritable_path_is_a_parameter_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ParameterError, match="store_path"):
        TranscriptStore(tmp_path / "file" / "t.sqlite")


def test_export_csv_and_json(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s1", 4, REPS, ["bill 0", "bill 1"], mode="simulation (seeded generators)")
        store.record_round(_record(0, {0: [1, 0, 1], 3: [2, 3, 0]}, abstain=(2,)))
        store.record_round(_record(1, {1: [0, 0, 1]}))
        store.record_rejects("s1", {1: {"late": (1, "y")}})
        messages, decisions, rejects = store.export_csv("s1", tmp_path / "csv")
        document = json.loads(store.export_json("s1", tmp_path / "t.json").read_text())
    rows = list(csv.DictReader(messages.read_text().splitlines()))
    assert len(rows) == 8
    assert [(r["round"], r["party"], r["kind"], r["symbols"]) for r in rows[:4]] == [
        ("0", "0", "symbols", "101"), ("0", "1", "absent", ""), ("0", "2", "abstain", ""), ("0", "3", "symbols", "230")]
    # the payload as text: base64 of a binary answer, a JSON one as it is
    assert rows[2]["reason"] == "did-not-vote" and base64.b64decode(rows[0]["payload"]) == b"\x02p0r0"
    assert rows[2]["payload"] == '{"a":2}' and document["messages"][0]["payload"] == rows[0]["payload"]
    assert [r[-1] for r in csv.reader(decisions.read_text().splitlines())][1:] == ["0", "1", "0"] * 2
    assert list(csv.reader(rejects.read_text().splitlines()))[1:] == [["0", "signature", "2", "x"], ["1", "late", "1", "y"],
                                                      ["1", "signature", "2", "x"]]
    assert [r["participants"] for r in document["rounds"]] == [[0, 3], [1]]
    assert document["rounds"][0]["abstained"] == [2] and document["rounds"][1]["absent"] == [0, 2, 3]
    assert len(document["messages"]) == 8 and document["rejects"][1] == {"round": 1, "reason": "late", "count": 1}


def test_sessions_record_their_mode_and_the_mpdp_version(tmp_path: Path) -> None:
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s1", 4, REPS, ["a"], mode="deployment (CSPRNG)")
        store.open_session("s2", 3, REPS, ["a"], mode="simulation (seeded generators)")
        with pytest.raises(ParameterError, match="mode 'deployment"):  # a resumed run keeps its mode
            store.open_session("s1", 4, REPS, ["a"], mode="simulation (seeded generators)")
        sessions = store.sessions()
    assert list(sessions) == ["s1", "s2"]
    assert [(s["parties"], s["mode"], s["mpdp_version"]) for s in sessions.values()] == [
        (4, "deployment (CSPRNG)", mpdp.__version__), (3, "simulation (seeded generators)", mpdp.__version__)]


def test_a_store_without_a_path_is_in_memory_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with TranscriptStore(None) as store:
        assert store.open_session("s1", 4, REPS, ["a"], mode="deployment (CSPRNG)") == frozenset()
        assert store.record_round(_record(0, {0: [1, 0, 1]}))
        assert store.recorded_rounds("s1") == [0]
        assert store.where == "memory only (not kept)"
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_a_store_with_json_text_payloads_is_migrated_to_blobs(tmp_path: Path) -> None:
    """A store written when ``messages.payload`` was TEXT: on open the column is BLOB, each JSON payload its
    UTF-8 bytes (so the same answer re-sent compares equal), and the export shows the JSON as before."""
    private, public = generate_key_pair()
    text = PartyMessage.signed(private, session="s1", round=0, party=0, repetitions=REPS,
                               symbols=np.array([1, 0, 1], np.uint8)).model_dump_json()
    path = tmp_path / "old.sqlite"
    with TranscriptStore(path) as store:
        store.open_session("s1", 2, REPS, ["a"], mode="simulation (seeded generators)")
    with sqlite3.connect(path) as db:  # the messages table as the earlier schema wrote it
        db.executescript(f"""
            DROP TABLE messages;
            CREATE TABLE messages (
                session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('symbols', 'abstain', 'absent')), reason TEXT,
                repetitions INTEGER NOT NULL, symbols BLOB NOT NULL, payload TEXT, received REAL NOT NULL,
                PRIMARY KEY (session, round, party)) WITHOUT ROWID;
            INSERT INTO messages VALUES ('s1', 0, 0, 'symbols', NULL, 3, x'010001', '{text}', 1.0);
            INSERT INTO messages VALUES ('s1', 0, 1, 'absent', NULL, 3, x'', NULL, 1.0);
            INSERT INTO rounds VALUES ('s1', 0, 'a', 'timeout', '[0]', '[]', '[1]', 1, 0, 1.0);
        """)
    with TranscriptStore(path) as store:
        assert store.query("SELECT typeof(payload), payload FROM messages ORDER BY party") == [
            ("blob", text.encode()), ("null", None)]
        assert "payload BLOB" in store.query("SELECT sql FROM sqlite_master WHERE name = 'messages'")[0][0]
        same = RecordedMessage(0, "symbols", None, np.array([1, 0, 1], np.uint8), text.encode())
        assert store.record_message("s1", 0, REPS, same) is False  # the re-sent answer: identical
        assert verify_message(decode_answer(store.query("SELECT payload FROM messages WHERE party = 0")[0][0]), public)
        assert [m["payload"] for m in store.messages("s1")] == [text.encode(), None]
        exported = json.loads(store.export_json("s1", tmp_path / "t.json").read_text())
        assert [m["payload"] for m in exported["messages"]] == [text, None]  # JSON shown as it is
        assert store.load_round("s1", 0).symbols[:, 0].tolist() == [1, 0, 1]
    with TranscriptStore(path) as store:  # opening again: already migrated, nothing changes
        assert store.query("SELECT typeof(payload) FROM messages ORDER BY party") == [("blob",), ("null",)]


def test_a_round_written_in_bulk_is_idempotent_and_a_changed_message_is_a_conflict(tmp_path: Path) -> None:
    rows = MessageRows(REPS, tuple(RecordedMessage(p, "symbols", None, np.array([p % 2, 1, 0], np.uint8),
                                                   b"\x02m%d" % p) for p in range(500)))
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s1", 500, REPS, ["a"], mode="simulation (seeded generators)")
        with store.transaction() as db:
            rows.write(db, "s1", 0, 1.0)
            rows.write(db, "s1", 0, 2.0)  # identical again: a no-op (each stored key is compared)
        assert store.query("SELECT COUNT(*), SUM(party), MAX(received) FROM messages") == [(500, sum(range(500)), 1.0)]
        assert store.query("SELECT symbols, payload FROM messages WHERE party = 7") == [(b"\x01\x01\x00", b"\x02m7")]
        changed = MessageRows(REPS, (*rows.messages[:-1], RecordedMessage(499, "symbols", None,
                                                                          np.zeros(3, np.uint8), b"\x02forged")))
        with pytest.raises(ProtocolViolation, match="party 499 holds another message"), store.transaction() as db:
            changed.write(db, "s1", 0, 1.0)
        assert store.query("SELECT payload FROM messages WHERE party = 499") == [(b"\x02m499",)]
