"""The transcript store: SQLite (WAL), keyed by (session, round, party).

Tables::

    sessions  (session PK, parties, repetitions, round_names JSON)
    messages  (session, round, party PK; kind symbols|abstain|absent, reason, repetitions,
               symbols BLOB uint8, payload = the signed wire JSON (NULL when absent), received)
    rounds    (session, round PK; name, status complete|timeout, participants/abstained/absent JSON,
               messages_received, messages_rejected)
    decisions (session, round, repetition PK; decision)
    party_decisions (session, round, party PK; decisions BLOB int64 little-endian, payload, received)
    rejects   (session, round, reason PK; count, last_detail)   round -1: before any round opened

One transaction per round (:meth:`TranscriptStore.record_round`). Recording is idempotent: the same
message twice is a no-op, a *different* message under a recorded key raises ``ProtocolViolation``
(``"conflict"``), and a round already recorded is left as it is — so a resumed run skips it.
The stored payloads keep their Ed25519 signatures: an auditor can re-verify the transcript.
"""

from __future__ import annotations

import contextlib
import csv
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

import numpy as np
from numpy.typing import NDArray

from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome
from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = ["RecordedMessage", "RoundRecord", "TranscriptStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    session TEXT PRIMARY KEY, parties INTEGER NOT NULL, repetitions INTEGER NOT NULL,
    round_names TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS messages (
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('symbols', 'abstain', 'absent')), reason TEXT,
    repetitions INTEGER NOT NULL, symbols BLOB NOT NULL, payload TEXT, received REAL NOT NULL,
    PRIMARY KEY (session, round, party)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds (
    session TEXT NOT NULL, round INTEGER NOT NULL, name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'timeout')),
    participants TEXT NOT NULL, abstained TEXT NOT NULL, absent TEXT NOT NULL,
    messages_received INTEGER NOT NULL, messages_rejected INTEGER NOT NULL, decided REAL NOT NULL,
    PRIMARY KEY (session, round)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS decisions (
    session TEXT NOT NULL, round INTEGER NOT NULL, repetition INTEGER NOT NULL,
    decision INTEGER NOT NULL, PRIMARY KEY (session, round, repetition)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS party_decisions (
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL, decisions BLOB NOT NULL,
    payload TEXT NOT NULL, received REAL NOT NULL, PRIMARY KEY (session, round, party)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
    session TEXT NOT NULL, round INTEGER NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
    last_detail TEXT NOT NULL, PRIMARY KEY (session, round, reason)) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True, eq=False)
class RecordedMessage:
    """One party's entry in a round: what it sent (or that nothing came).

    Attributes:
        party: the party id.
        kind: ``symbols``, ``abstain`` or ``absent`` (no message before the round timeout).
        reason: the abstention reason (None otherwise).
        symbols: uint8 (repetitions,) for ``symbols``; empty otherwise.
        payload: the signed wire JSON as received; None for ``absent``.
    """

    party: int
    kind: Literal["symbols", "abstain", "absent"]
    reason: str | None
    symbols: NDArray[np.uint8]
    payload: str | None


@dataclass(frozen=True, slots=True, eq=False)
class RoundRecord:
    """Everything one round adds to the store, written in one transaction.

    Attributes:
        outcome: the round as the observer decided it.
        messages: one entry per roster party.
        rejects: reason -> (count, last detail) for rejections not yet written, keyed by round
            index (-1 before any round opened).
    """

    session: str
    repetitions: int
    outcome: RoundOutcome
    messages: tuple[RecordedMessage, ...]
    rejects: Mapping[int, Mapping[str, tuple[int, str]]]


def _ids(values: NDArray[np.int64]) -> str:
    return json.dumps([int(v) for v in values])


def _id_array(text: str) -> NDArray[np.int64]:
    return np.array(json.loads(text), dtype=np.int64)


class TranscriptStore:
    """A SQLite transcript store; use as a context manager (closes the connection).

    Args:
        path: the database file (created with its parent directory if missing).

    Raises:
        ParameterError: the path cannot be opened as a SQLite database.
    """

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except (sqlite3.Error, OSError) as exc:
            raise ParameterError("store_path", str(path), "a writable SQLite file", hint=str(exc)) from exc

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._db.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def open_session(self, session: str, parties: int, repetitions: int, round_names: Sequence[str]) -> frozenset[int]:
        """Register a session (or find it again); return the indices of rounds already recorded.

        Raises:
            ParameterError: the session exists with other parties, repetitions or round names (a
                resumed run must be the same run).
        """
        names = json.dumps(list(round_names))
        row = self._db.execute(
            "SELECT parties, repetitions, round_names FROM sessions WHERE session = ?", (session,)
        ).fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
                (session, parties, repetitions, names, time.time()),
            )
        elif tuple(row) != (parties, repetitions, names):
            raise ParameterError(
                "session", session,
                f"a new session id, or the stored one's {row[0]} parties, {row[1]} repetitions and "
                "round names (it is in the store already)",
            )
        return frozenset(self.recorded_rounds(session))

    def recorded_rounds(self, session: str) -> list[int]:
        """Indices of the rounds recorded for ``session``, ascending."""
        rows = self._db.execute("SELECT round FROM rounds WHERE session = ? ORDER BY round", (session,))
        return [int(r) for (r,) in rows]

    def record_round(self, record: RoundRecord) -> bool:
        """Write one round (messages, decisions, round row, pending rejects) in one transaction.

        Returns:
            True if written, False if the round was already recorded (nothing changes then).

        Raises:
            ProtocolViolation: ``"conflict"``, a different message is stored under the same key.
        """
        out, session = record.outcome, record.session
        now = time.time()
        with self._transaction():
            if self._db.execute(
                "SELECT 1 FROM rounds WHERE session = ? AND round = ?", (session, out.index)
            ).fetchone():
                return False
            for message in record.messages:
                self._insert_message(session, out.index, record.repetitions, message, now)
            self._db.executemany(
                "INSERT INTO decisions VALUES (?, ?, ?, ?)",
                [(session, out.index, r, int(d)) for r, d in enumerate(out.decisions)],
            )
            self._db.execute(
                "INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session, out.index, out.name, out.status, _ids(out.participants), _ids(out.abstained),
                 _ids(out.absent), out.messages_received, out.messages_rejected, now),
            )
            self._add_rejects(session, record.rejects)
        return True

    def record_message(self, session: str, round: int, repetitions: int, message: RecordedMessage) -> bool:
        """Record one message on its own (idempotent). True if new, False if already there.

        Raises:
            ProtocolViolation: ``"conflict"``, a different message is stored under the same key.
        """
        with self._transaction():
            return self._insert_message(session, round, repetitions, message, time.time())

    def record_rejects(self, session: str, rejects: Mapping[int, Mapping[str, tuple[int, str]]]) -> None:
        """Add reject counts (round -> reason -> (count, last detail)) in one transaction."""
        with self._transaction():
            self._add_rejects(session, rejects)

    def _add_rejects(self, session: str, rejects: Mapping[int, Mapping[str, tuple[int, str]]]) -> None:
        self._db.executemany(
            "INSERT INTO rejects VALUES (?, ?, ?, ?, ?) ON CONFLICT (session, round, reason) DO UPDATE "
            "SET count = count + excluded.count, last_detail = excluded.last_detail",
            [(session, rnd, reason, count, detail)
             for rnd, reasons in rejects.items() for reason, (count, detail) in reasons.items()],
        )

    def _insert_message(
        self, session: str, round: int, repetitions: int, message: RecordedMessage, now: float
    ) -> bool:
        blob = np.ascontiguousarray(message.symbols, dtype=np.uint8).tobytes()
        row = (session, round, message.party, message.kind, message.reason, repetitions, blob,
               message.payload, now)
        cursor = self._db.execute(
            "INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", row
        )
        if cursor.rowcount == 1:
            return True
        stored = self._db.execute(
            "SELECT kind, reason, symbols, payload FROM messages WHERE session = ? AND round = ? AND party = ?",
            (session, round, message.party),
        ).fetchone()
        if tuple(stored) != (message.kind, message.reason, blob, message.payload):
            raise ProtocolViolation(
                "conflict", f"session {session!r} round {round} party {message.party} holds another message"
            )
        return False

    def record_party_decisions(self, session: str, round: int,
                               decisions: Mapping[int, tuple[NDArray[np.int64], str]]) -> int:
        """Record parties' own decisions of one round in one transaction (idempotent per party).

        Args:
            decisions: party id -> (int64 (repetitions,) decisions, the signed wire JSON).

        Returns:
            the number of rows newly written.
        """
        now = time.time()
        rows = [(session, round, int(party), np.asarray(d, dtype="<i8").tobytes(), payload, now)
                for party, (d, payload) in decisions.items()]
        with self._transaction():
            before = self._db.total_changes
            self._db.executemany("INSERT INTO party_decisions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
            return self._db.total_changes - before

    def party_decisions(self, session: str, round: int) -> dict[int, NDArray[np.int64]]:
        """The recorded decisions of each party in ``round``: party id -> int64 (repetitions,)."""
        rows = self._db.execute(
            "SELECT party, decisions FROM party_decisions WHERE session = ? AND round = ? ORDER BY party",
            (session, round))
        return {int(p): np.frombuffer(blob, dtype="<i8").astype(np.int64) for p, blob in rows}

    def rejects(self, session: str) -> dict[tuple[int, str], int]:
        """(round, reason) -> count of rejected messages."""
        rows = self._db.execute("SELECT round, reason, count FROM rejects WHERE session = ?", (session,))
        return {(int(r), str(reason)): int(n) for r, reason, n in rows}

    def load_round(self, session: str, round: int) -> RoundOutcome:
        """The recorded round as a :class:`RoundOutcome` (symbols in participant order).

        Raises:
            ParameterError: the round is not recorded.
        """
        row = self._db.execute(
            "SELECT name, status, participants, abstained, absent, messages_received, messages_rejected "
            "FROM rounds WHERE session = ? AND round = ?", (session, round),
        ).fetchone()
        if row is None:
            raise ParameterError("round", round, f"a recorded round of session {session!r}")
        name, status, participants, abstained, absent, received, rejected = row
        reps = self._db.execute("SELECT repetitions FROM sessions WHERE session = ?", (session,)).fetchone()[0]
        blobs = self._db.execute(
            "SELECT symbols FROM messages WHERE session = ? AND round = ? AND kind = 'symbols' ORDER BY party",
            (session, round),
        ).fetchall()
        symbols = np.zeros((reps, len(blobs)), dtype=np.uint8)
        for j, (blob,) in enumerate(blobs):
            symbols[:, j] = np.frombuffer(blob, dtype=np.uint8)
        decisions = np.array(
            [d for (d,) in self._db.execute(
                "SELECT decision FROM decisions WHERE session = ? AND round = ? ORDER BY repetition",
                (session, round))],
            dtype=np.int64,
        )
        exhausted = self._db.execute(
            "SELECT party FROM messages WHERE session = ? AND round = ? AND kind = 'abstain' AND reason = ? "
            "ORDER BY party", (session, round, ABSTAIN_BUDGET_EXHAUSTED),
        ).fetchall()
        return RoundOutcome(
            name=name, participants=_id_array(participants), symbols=symbols, decisions=decisions,
            messages_received=int(received), messages_rejected=int(rejected), index=int(round),
            abstained=_id_array(abstained), absent=_id_array(absent), status=status,
            exhausted=np.array([p for (p,) in exhausted], dtype=np.int64),
        )

    def messages(self, session: str) -> Iterator[dict[str, object]]:
        """Every recorded message of ``session`` as a dict (symbols as a string of digits)."""
        rows = self._db.execute(
            "SELECT m.round, r.name, m.party, m.kind, m.reason, m.symbols, m.payload FROM messages m "
            "JOIN rounds r ON r.session = m.session AND r.round = m.round "
            "WHERE m.session = ? ORDER BY m.round, m.party", (session,),
        )
        for rnd, name, party, kind, reason, blob, payload in rows:
            yield {"round": rnd, "name": name, "party": party, "kind": kind, "reason": reason,
                   "symbols": "".join(map(str, np.frombuffer(blob, dtype=np.uint8))), "payload": payload}

    def export_json(self, session: str, path: Path | str) -> Path:
        """Write the session (rounds with decisions, messages, rejects) as one JSON file; return its path."""
        rounds = []
        for index in self.recorded_rounds(session):
            out = self.load_round(session, index)
            rounds.append({
                "round": index, "name": out.name, "status": out.status,
                "participants": out.participants.tolist(), "abstained": out.abstained.tolist(),
                "absent": out.absent.tolist(), "exhausted": out.exhausted.tolist(), "messages_received": out.messages_received,
                "messages_rejected": out.messages_rejected, "decisions": out.decisions.tolist(),
            })
        document = {
            "session": session, "rounds": rounds, "messages": list(self.messages(session)),
            "rejects": [{"round": r, "reason": reason, "count": n}
                        for (r, reason), n in sorted(self.rejects(session).items())],
        }
        target = Path(path)
        target.write_text(json.dumps(document, indent=1))
        return target

    def export_csv(self, session: str, directory: Path | str) -> tuple[Path, Path, Path]:
        """Write ``messages.csv``, ``decisions.csv`` and ``rejects.csv`` into ``directory``."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        messages = folder / "messages.csv"
        with messages.open("w", newline="") as fh:
            writer = csv.DictWriter(fh, ["round", "name", "party", "kind", "reason", "symbols", "payload"])
            writer.writeheader()
            writer.writerows(self.messages(session))
        decisions = folder / "decisions.csv"
        with decisions.open("w", newline="") as fh:
            table = csv.writer(fh)
            table.writerow(["round", "name", "repetition", "decision"])
            table.writerows(self._db.execute(
                "SELECT d.round, r.name, d.repetition, d.decision FROM decisions d JOIN rounds r "
                "ON r.session = d.session AND r.round = d.round WHERE d.session = ? "
                "ORDER BY d.round, d.repetition", (session,)))
        rejects = folder / "rejects.csv"
        with rejects.open("w", newline="") as fh:
            table = csv.writer(fh)
            table.writerow(["round", "reason", "count", "last_detail"])
            table.writerows(self._db.execute(
                "SELECT round, reason, count, last_detail FROM rejects WHERE session = ? ORDER BY round, reason",
                (session,)))
        return messages, decisions, rejects
