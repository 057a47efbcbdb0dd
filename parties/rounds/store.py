"""The transcript store: SQLite (WAL), keyed by (session, round, party).

Tables::

    sessions  (session PK, parties, repetitions, round_names JSON, created, mode, mpdp_version)
    messages  (session, round, party PK; kind symbols|abstain|absent, reason, repetitions,
               symbols BLOB uint8, payload BLOB = the signed wire message exactly as received: the binary
               party answer of :mod:`mpdp.broker.wire`, or JSON (version 1; NULL when absent), received)
    rounds    (session, round PK; name, status complete|timeout|failed|no-answers, participants/abstained/absent JSON,
               messages_received, messages_rejected)
    decisions (session, round, repetition PK; decision)
    party_decisions (session, round, party PK; decisions BLOB int64 little-endian, payload, received)
    rejects   (session, round, reason PK; count, last_detail)   round -1: before any round opened
    bundles   (session, digest UNIQUE; worker, payload BLOB, received): a simulation worker's signed answer bundle
               (:mod:`mpdp.broker.bundle`) that brought an answer the store keeps (``digest``: its SHA-256)
    worker_reports (session, digest UNIQUE; worker, payload TEXT, received): a verified part of a bundling worker's
               signed "ready" (:class:`mpdp.broker.messages.WorkerStatus` JSON), each listed party's endorsement
               of the worker's bundle key
    roster_keys (session, first_round PK; public_keys BLOB): the roster's raw 32-byte Ed25519 public keys in
               party order, as the run that answered rounds ``first_round`` onwards had them (a resumed simulation
               makes fresh keys: one row per run), so that ``mpdp verify`` needs no roster file
    double_releases (session, round, party, payload PK; kind symbols|abstain, received): a party's second,
               different, validly signed answer to a round (its first is in ``messages``): the proof
               that the party answered twice (two hosts serve it, or a host lost its answer record);
               each ``symbols`` row is one more release of the party's randomized response

One transaction per round (:meth:`TranscriptStore.record_round`): the round row, its decisions and the
reject counts, plus the protocol's own rows (each table's rows with one ``executemany``) (:class:`RoundRows`: :class:`MessageRows` for randomized
response; a protocol with tables of its own passes them as ``schema`` and writes them the same way,
e.g. :mod:`mpdp.parties.ballots.store`). Recording is idempotent: the same
message twice is a no-op, a *different* message under a recorded key raises ``ProtocolViolation``
(``"conflict"``), and a round already recorded is left as it is — so a resumed run skips it.
The stored payloads keep their Ed25519 signatures: an auditor can re-verify the transcript
(:func:`mpdp.parties.rounds.transcript_check.verify_transcript`). An answer that came unsigned in a simulation
worker's bundle is proven by the bundle (kept in ``bundles``) and its parties' signed endorsements of the worker's
key (kept in ``worker_reports``). A store
written when ``messages.payload`` was TEXT (JSON only) is migrated on open: the JSON kept as its UTF-8
bytes (:func:`blob_payload`).
"""

from __future__ import annotations

import base64
import contextlib
import csv
import hashlib
import json
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol, Self

import numpy as np
from numpy.typing import NDArray

from mpdp import __version__ as mpdp_version
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.numerics.cost import noun

__all__ = [
    "MessageRows",
    "PartyDecisions",
    "RecordedMessage",
    "RejectCounts",
    "RoundRecord",
    "RoundRows",
    "TranscriptStore",
    "blob_payload",
    "check_store_file",
]

#: Reject counts not yet written: round index (-1 before any round opened) -> reason -> (count, last detail).
RejectCounts = Mapping[int, Mapping[str, tuple[int, str]]]
#: Parties' own decisions of one round: party id -> (int64 (repetitions,) decisions, the signed wire JSON).
PartyDecisions = Mapping[int, tuple[NDArray[np.int64], str]]

_ROUNDS_COLUMNS = """
    session TEXT NOT NULL, round INTEGER NOT NULL, name TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('complete', 'timeout', 'failed', 'no-answers')),
    participants TEXT NOT NULL, abstained TEXT NOT NULL, absent TEXT NOT NULL,
    messages_received INTEGER NOT NULL, messages_rejected INTEGER NOT NULL, decided REAL NOT NULL,
    PRIMARY KEY (session, round)"""
#: A store written before rounds could be ``failed`` or ``no-answers`` gets the wider CHECK (SQLite cannot alter one).
_MIGRATE_ROUNDS = f"""
BEGIN IMMEDIATE;
CREATE TABLE rounds_failed_status ({_ROUNDS_COLUMNS}) WITHOUT ROWID;
INSERT INTO rounds_failed_status SELECT * FROM rounds;
DROP TABLE rounds;
ALTER TABLE rounds_failed_status RENAME TO rounds;
COMMIT;
"""

_MESSAGES_COLUMNS = """
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('symbols', 'abstain', 'absent')), reason TEXT,
    repetitions INTEGER NOT NULL, symbols BLOB NOT NULL, payload BLOB, received REAL NOT NULL,
    PRIMARY KEY (session, round, party)"""

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS sessions (
    session TEXT PRIMARY KEY, parties INTEGER NOT NULL, repetitions INTEGER NOT NULL,
    round_names TEXT NOT NULL, created REAL NOT NULL, mode TEXT NOT NULL, mpdp_version TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS messages ({_MESSAGES_COLUMNS}) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rounds ({_ROUNDS_COLUMNS}) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS decisions (
    session TEXT NOT NULL, round INTEGER NOT NULL, repetition INTEGER NOT NULL,
    decision INTEGER NOT NULL, PRIMARY KEY (session, round, repetition)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS party_decisions (
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL, decisions BLOB NOT NULL,
    payload TEXT NOT NULL, received REAL NOT NULL, PRIMARY KEY (session, round, party)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS double_releases (
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL, payload BLOB NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('symbols', 'abstain')), received REAL NOT NULL,
    PRIMARY KEY (session, round, party, payload)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rejects (
    session TEXT NOT NULL, round INTEGER NOT NULL, reason TEXT NOT NULL, count INTEGER NOT NULL,
    last_detail TEXT NOT NULL, PRIMARY KEY (session, round, reason)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS bundles (
    session TEXT NOT NULL, digest BLOB NOT NULL, worker INTEGER NOT NULL, payload BLOB NOT NULL,
    received REAL NOT NULL, UNIQUE (session, digest));
CREATE TABLE IF NOT EXISTS worker_reports (
    session TEXT NOT NULL, digest BLOB NOT NULL, worker INTEGER NOT NULL, payload TEXT NOT NULL,
    received REAL NOT NULL, UNIQUE (session, digest));
CREATE TABLE IF NOT EXISTS roster_keys (
    session TEXT NOT NULL, first_round INTEGER NOT NULL, public_keys BLOB NOT NULL,
    PRIMARY KEY (session, first_round)) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True, eq=False)
class RecordedMessage:
    """One party's entry in a round: what it sent (or that nothing came).

    Attributes:
        party: the party id.
        kind: ``symbols``, ``abstain`` or ``absent`` (no message before the round timeout).
        reason: the abstention reason (None otherwise).
        symbols: uint8 (repetitions,) for ``symbols``; empty otherwise.
        payload: the signed wire message as received (binary or JSON); None for ``absent``.
    """

    party: int
    kind: Literal["symbols", "abstain", "absent"]
    reason: str | None
    symbols: NDArray[np.uint8]
    payload: bytes | None


class RoundRows(Protocol):
    """A protocol's own rows of one round, written inside the round's transaction."""

    def write(self, db: sqlite3.Connection, session: str, round: int, now: float) -> None:
        """Insert the rows with ``db`` (a transaction is open; do not commit).

        Raises:
            ProtocolViolation: ``"conflict"``, a different row is stored under the same key.
        """
        ...


@dataclass(frozen=True, slots=True, eq=False)
class MessageRows:
    """The randomized-response rows of a round: one :class:`RecordedMessage` per roster party
    (``repetitions`` each), and parties' decisions of earlier rounds that arrived since the last write
    (round -> :data:`PartyDecisions`)."""

    repetitions: int
    messages: tuple[RecordedMessage, ...]
    party_decisions: Mapping[int, PartyDecisions] = field(default_factory=dict)

    def write(self, db: sqlite3.Connection, session: str, round: int, now: float) -> None:
        """Insert the messages (one ``executemany``) and the parties' decisions (see :class:`RoundRows`)."""
        _insert_messages(db, session, round, self.repetitions, self.messages, now)
        for index, decisions in self.party_decisions.items():
            _insert_party_decisions(db, session, index, decisions, now)


@dataclass(frozen=True, slots=True, eq=False)
class RoundRecord:
    """Everything one round adds to the store, written in one transaction.

    Attributes:
        session: the session id.
        outcome: the round as the engine closed it (its ``decisions`` are written, one row per repetition).
        rows: the protocol's own rows (:class:`MessageRows` for randomized response).
        rejects: reject counts not yet written (:data:`RejectCounts`).
        bundles: (worker, signed bundle bytes) of the answer bundles that brought the round's answers
            (:mod:`mpdp.broker.bundle`): the proof of their unsigned entries.
    """

    session: str
    outcome: RoundOutcome
    rows: RoundRows
    rejects: RejectCounts
    bundles: Sequence[tuple[int, bytes]] = ()


def _as_text(payload: bytes) -> str:
    return payload.decode("utf-8") if payload[:1] == b"{" else base64.b64encode(payload).decode("ascii")


def _ids(values: NDArray[np.int64]) -> str:
    return json.dumps([int(v) for v in values])


def _id_array(text: str) -> NDArray[np.int64]:
    return np.array(json.loads(text), dtype=np.int64)


def _insert_messages(db: sqlite3.Connection, session: str, round: int, repetitions: int,
                     messages: Sequence[RecordedMessage], now: float) -> int:
    """Insert ``messages`` of one round with one ``executemany``; return how many were new. A message
    already stored identically is skipped.

    Raises:
        ProtocolViolation: ``"conflict"``, a different message is stored under one of the keys.
    """
    rows = [(session, round, m.party, m.kind, m.reason, repetitions,
             np.ascontiguousarray(m.symbols, dtype=np.uint8).tobytes(), m.payload, now) for m in messages]
    before = db.total_changes
    db.executemany("INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
    written = db.total_changes - before
    if written < len(rows):  # some keys were there already: each must hold the same message
        for row in rows:
            stored = db.execute(
                "SELECT kind, reason, symbols, payload FROM messages WHERE session = ? AND round = ? AND party = ?",
                row[:3]).fetchone()
            if tuple(stored) != (row[3], row[4], row[6], row[7]):
                raise ProtocolViolation(
                    "conflict", f"session {session!r} round {round} party {row[2]} holds another message")
    return written


def _insert_bundles(db: sqlite3.Connection, session: str, bundles: Sequence[tuple[int, bytes]], now: float) -> None:
    """Insert (worker, signed bundle bytes) pairs, each once (keyed by its SHA-256)."""
    db.executemany("INSERT INTO bundles VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                   [(session, hashlib.sha256(payload).digest(), worker, payload, now) for worker, payload in bundles])


def blob_payload(db: sqlite3.Connection, table: str, columns: str) -> None:
    """Migrate ``table`` (WITHOUT ROWID) written when its ``payload`` column was TEXT to ``columns`` (the
    same columns, ``payload BLOB``), in one transaction: each stored JSON payload becomes its UTF-8 bytes,
    so a message re-sent after the migration compares equal to the stored one. A no-op once migrated."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
    if "payload TEXT" not in sql:
        return
    names = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    select = ", ".join("CAST(payload AS BLOB)" if name == "payload" else name for name in names)
    db.executescript(f"""
BEGIN IMMEDIATE;
CREATE TABLE {table}_blob_payload ({columns}) WITHOUT ROWID;
INSERT INTO {table}_blob_payload SELECT {select} FROM {table};
DROP TABLE {table};
ALTER TABLE {table}_blob_payload RENAME TO {table};
COMMIT;
""")


def check_store_file(path: Path | str) -> None:
    """Check that ``path`` is an intact SQLite database (``PRAGMA quick_check``) before anything reads it, so
    a damaged transcript gives one line naming the file instead of a traceback or a partial result.

    Raises:
        ParameterError: the file is not a SQLite database, or damaged (names the file and the first problem).
    """
    try:
        # not read-only: the last connection's close removes the -wal and -shm files a WAL store gets
        with contextlib.closing(sqlite3.connect(Path(path))) as db:
            db.text_factory = lambda raw: raw.decode("utf-8", "replace")  # a damaged schema's names too
            problems = [str(row[0]) for row in db.execute("PRAGMA quick_check(5)")]
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # an error naming damaged bytes is not UTF-8 either
        problems = [str(exc)]
    if problems != ["ok"]:
        raise ParameterError("transcripts", str(path), "an intact SQLite transcript store",
                             hint=f"damaged: {'; '.join(problems)[:300]}; restore it from a copy")


def _insert_party_decisions(db: sqlite3.Connection, session: str, round: int, decisions: PartyDecisions,
                            now: float) -> int:
    rows = [(session, round, int(party), np.asarray(d, dtype="<i8").tobytes(), payload, now)
            for party, (d, payload) in decisions.items()]
    before = db.total_changes
    db.executemany("INSERT INTO party_decisions VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING", rows)
    return db.total_changes - before


def _rounds_text(names: list[str]) -> str:
    """``3 rounds (r0 .. r2)``: a session's round names, short, for a refusal that names what changed."""
    if not names:
        return "0 rounds"
    return f"{len(names)} {noun(len(names), 'round')} ({names[0]}" + (f" .. {names[-1]})" if len(names) > 1 else ")")


class TranscriptStore:
    """A SQLite transcript store; use as a context manager (closes the connection).

    Args:
        path: the database file (created with its parent directory if missing); None keeps the
            transcript in memory only (nothing is written, nothing is left to point at).
        schema: SQL creating a protocol's own tables (``CREATE TABLE IF NOT EXISTS ...``), if any.

    Raises:
        ParameterError: the path cannot be opened as a SQLite database.
    """

    def __init__(self, path: Path | str | None, *, schema: str = "") -> None:
        self.path = None if path is None else Path(path)
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(":memory:" if self.path is None else self.path, isolation_level=None,
                                       check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA + schema)
            rounds_sql = self._db.execute("SELECT sql FROM sqlite_master WHERE name = 'rounds'").fetchone()[0]
            if "'no-answers'" not in rounds_sql:
                self._db.executescript(_MIGRATE_ROUNDS)
            blob_payload(self._db, "messages", _MESSAGES_COLUMNS)
        except (sqlite3.Error, OSError) as exc:
            raise ParameterError("store_path", str(path), "a writable SQLite file", hint=str(exc)) from exc

    @property
    def where(self) -> str:
        """Where the transcript is, for messages: the file, or that it is in memory only."""
        return str(self.path) if self.path is not None else "memory only (not kept)"

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
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``with store.transaction() as db:`` writes with ``db`` atomically (rolled back on any error)."""
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def query(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[Any, ...]]:
        """The rows of one read-only SQL statement (for a protocol's own tables)."""
        return [tuple(row) for row in self._db.execute(sql, tuple(parameters))]

    def open_session(self, session: str, parties: int, repetitions: int, round_names: Sequence[str], *,
                     mode: str) -> frozenset[int]:
        """Register a session (or find it again); return the indices of rounds already recorded.

        The row also records ``mode`` (how the parties draw their noise: :func:`mpdp.protocols.randomization.secure.rng_mode`)
        and the version of mpdp that opened the session.

        Raises:
            ParameterError: the session exists with other parties, repetitions, round names or mode (a
                resumed run must be the same run).
        """
        names = json.dumps(list(round_names))
        row = self._db.execute(
            "SELECT parties, repetitions, round_names, mode FROM sessions WHERE session = ?", (session,)
        ).fetchone()
        if row is None:
            self._db.execute(
                "INSERT INTO sessions (session, parties, repetitions, round_names, created, mode, mpdp_version) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session, parties, repetitions, names, time.time(), mode, mpdp_version),
            )
        elif tuple(row) != (parties, repetitions, names, mode):
            stored_names, given = json.loads(row[2]), list(round_names)
            changed = [f"{what}: {old} -> {new}" for what, old, new in (
                ("parties", row[0], parties), ("repetitions", row[1], repetitions), ("mode", row[3], mode)) if old != new]
            if stored_names != given:
                changed.append(f"rounds: {_rounds_text(stored_names)} -> {_rounds_text(given)}" if len(stored_names) != len(given)
                               else next(f"round {i + 1}: {a!r} -> {b!r}" for i, (a, b) in enumerate(zip(stored_names, given, strict=True)) if a != b))
            raise ParameterError(
                "session", session,
                f"a new session id, or the stored one's {row[0]} {noun(row[0], 'party', 'parties')}, {row[1]} {noun(row[1], 'repetition')}, "
                f"round names and mode {row[3]!r} (it is in the store already; changed: {'; '.join(changed)})",
            )
        return frozenset(self.recorded_rounds(session))

    def sessions(self) -> dict[str, dict[str, object]]:
        """Every stored session: id -> its ``parties``, ``repetitions``, ``mode``, ``mpdp_version``, ``created``."""
        rows = self._db.execute(
            "SELECT session, parties, repetitions, mode, mpdp_version, created FROM sessions ORDER BY created")
        return {row[0]: dict(zip(("parties", "repetitions", "mode", "mpdp_version", "created"), row[1:], strict=True))
                for row in rows}

    def recorded_rounds(self, session: str) -> list[int]:
        """Indices of the rounds recorded for ``session``, ascending."""
        rows = self._db.execute("SELECT round FROM rounds WHERE session = ? ORDER BY round", (session,))
        return [int(r) for (r,) in rows]

    def record_round(self, record: RoundRecord) -> bool:
        """Write one round (the protocol's rows, decisions, round row, pending rejects) in one transaction.

        Returns:
            True if written, False if the round was already recorded (nothing changes then).

        Raises:
            ProtocolViolation: ``"conflict"``, a different message is stored under the same key.
        """
        out, session = record.outcome, record.session
        now = time.time()
        with self.transaction() as db:
            if db.execute(
                "SELECT 1 FROM rounds WHERE session = ? AND round = ?", (session, out.index)
            ).fetchone():
                return False
            record.rows.write(db, session, out.index, now)
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
            _insert_bundles(db, session, record.bundles, now)
        return True

    def record_bundle(self, session: str, worker: int, payload: bytes) -> None:
        """Keep a worker's signed answer bundle (:mod:`mpdp.broker.bundle`) in its own transaction (idempotent):
        the proof of an entry kept outside a round's record (a double release)."""
        with self.transaction() as db:
            _insert_bundles(db, session, ((worker, payload),), time.time())

    def record_worker_report(self, session: str, worker: int, payload: str) -> None:
        """Keep a verified part of a bundling worker's signed "ready" (its JSON as received; idempotent): its
        parties' endorsement of the worker's bundle key."""
        with self.transaction() as db:
            db.execute("INSERT INTO worker_reports VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (session, hashlib.sha256(payload.encode("utf-8")).digest(), worker, payload, time.time()))

    def record_roster(self, session: str, public_keys: Sequence[bytes]) -> None:
        """Keep the roster's public keys (raw 32 bytes each, party order) of the run that answers ``session``'s
        rounds from its first round not recorded onwards (a run again from the same round replaces them; nothing
        when every round is recorded: no party answers). The session is opened (:meth:`open_session`)."""
        recorded = set(self.recorded_rounds(session))
        first = next(i for i in range(len(recorded) + 1) if i not in recorded)
        (names,), = self.query("SELECT round_names FROM sessions WHERE session = ?", (session,))
        if first >= len(json.loads(names)):
            return
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO roster_keys VALUES (?, ?, ?)", (session, first, b"".join(public_keys)))

    def roster_keys(self, session: str) -> list[tuple[int, tuple[bytes, ...]]]:
        """(first round, the public keys in party order) of each run of ``session`` that recorded its roster
        (:meth:`record_roster`), by first round; empty for a store written before mpdp kept them."""
        rows = self._db.execute("SELECT first_round, public_keys FROM roster_keys WHERE session = ? "
                                "ORDER BY first_round", (session,))
        return [(int(first), tuple(bytes(keys[i:i + 32]) for i in range(0, len(keys), 32))) for first, keys in rows]

    def record_message(self, session: str, round: int, repetitions: int, message: RecordedMessage) -> bool:
        """Record one message on its own (idempotent). True if new, False if already there.

        Raises:
            ProtocolViolation: ``"conflict"``, a different message is stored under the same key.
        """
        with self.transaction() as db:
            return _insert_messages(db, session, round, repetitions, (message,), time.time()) == 1

    def record_double_release(self, session: str, round: int, party: int, payload: bytes, *, released: bool) -> bool:
        """Keep a party's second, different, validly signed answer to ``round`` (``released``: it carried
        symbols, one more release) in its own transaction. True if new, False if that message is kept already."""
        with self.transaction() as db:
            before = db.total_changes
            db.execute("INSERT INTO double_releases VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                       (session, round, party, payload, "symbols" if released else "abstain", time.time()))
            return db.total_changes > before

    def double_releases(self, session: str, round: int) -> NDArray[np.int64]:
        """int64: the parties with a kept second answer carrying symbols in ``round``, one entry per such
        answer (a party that released three times appears twice), ascending."""
        rows = self._db.execute("SELECT party FROM double_releases WHERE session = ? AND round = ? AND kind = "
                                "'symbols' ORDER BY party", (session, round))
        return np.array([p for (p,) in rows], dtype=np.int64)

    def double_releases_by_round(self, session: str) -> dict[int, list[int]]:
        """Round -> :meth:`double_releases` of that round, for every round of ``session`` that has one."""
        found: dict[int, list[int]] = {}
        for round_, party in self._db.execute("SELECT round, party FROM double_releases WHERE session = ? AND "
                                              "kind = 'symbols' ORDER BY round, party", (session,)):
            found.setdefault(int(round_), []).append(int(party))
        return found

    def recorded_payload(self, session: str, round: int, party: int) -> bytes | None:
        """The answer recorded for ``party`` in a recorded ``round``, as received (None: none recorded, or absent)."""
        row = self._db.execute("SELECT payload FROM messages WHERE session = ? AND round = ? AND party = ?",
                               (session, round, party)).fetchone()
        return None if row is None or row[0] is None else bytes(row[0])

    def record_rejects(self, session: str, rejects: RejectCounts) -> None:
        """Add reject counts (:data:`RejectCounts`) in one transaction."""
        with self.transaction():
            self._add_rejects(session, rejects)

    def _add_rejects(self, session: str, rejects: RejectCounts) -> None:
        self._db.executemany(
            "INSERT INTO rejects VALUES (?, ?, ?, ?, ?) ON CONFLICT (session, round, reason) DO UPDATE "
            "SET count = count + excluded.count, last_detail = excluded.last_detail",
            [(session, rnd, reason, count, detail)
             for rnd, reasons in rejects.items() for reason, (count, detail) in reasons.items()],
        )

    def record_party_decisions(self, session: str, round: int, decisions: PartyDecisions) -> int:
        """Record parties' own decisions of one round (:data:`PartyDecisions`) in one transaction
        (idempotent per party).

        Returns:
            the number of rows newly written.
        """
        with self.transaction() as db:
            return _insert_party_decisions(db, session, round, decisions, time.time())

    def party_decisions(self, session: str, round: int) -> dict[int, NDArray[np.int64]]:
        """The recorded decisions of each party in ``round``: party id -> int64 (repetitions,)."""
        rows = self._db.execute(
            "SELECT party, decisions FROM party_decisions WHERE session = ? AND round = ? ORDER BY party",
            (session, round))
        return {int(p): np.frombuffer(blob, dtype="<i8").astype(np.int64) for p, blob in rows}

    def decided_times(self, session: str) -> dict[int, float]:
        """Round index -> when its decision was recorded (seconds since the epoch)."""
        rows = self._db.execute("SELECT round, decided FROM rounds WHERE session = ? ORDER BY round", (session,))
        return {int(r): float(t) for r, t in rows}

    def rejects(self, session: str) -> dict[tuple[int, str], int]:
        """(round, reason) -> count of rejected messages."""
        rows = self._db.execute("SELECT round, reason, count FROM rejects WHERE session = ?", (session,))
        return {(int(r), str(reason)): int(n) for r, reason, n in rows}

    def load_round(self, session: str, round: int, *, symbols: bool = True) -> RoundOutcome:
        """The recorded round as a :class:`RoundOutcome` (symbols in participant order; None when
        ``symbols`` is False: a protocol that sends none in the clear).

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
        decisions = np.array(
            [d for (d,) in self._db.execute(
                "SELECT decision FROM decisions WHERE session = ? AND round = ? ORDER BY repetition",
                (session, round))],
            dtype=np.int64,
        )
        reasons: dict[str, list[int]] = {}
        for party, reason in self._db.execute(
                "SELECT party, reason FROM messages WHERE session = ? AND round = ? AND kind = 'abstain' "
                "ORDER BY party", (session, round)):
            reasons.setdefault(str(reason), []).append(int(party))
        return RoundOutcome(
            name=name, participants=_id_array(participants),
            symbols=self._symbols(session, round) if symbols else None, decisions=decisions,
            messages_received=int(received), messages_rejected=int(rejected), index=int(round),
            abstained=_id_array(abstained), absent=_id_array(absent), status=status,
            exhausted=np.array(reasons.get(ABSTAIN_BUDGET_EXHAUSTED, []), dtype=np.int64), reasons=reasons,
            double_released=self.double_releases(session, round),
        )

    def _symbols(self, session: str, round: int) -> NDArray[np.uint8]:
        reps = self._db.execute("SELECT repetitions FROM sessions WHERE session = ?", (session,)).fetchone()[0]
        blobs = self._db.execute(
            "SELECT symbols FROM messages WHERE session = ? AND round = ? AND kind = 'symbols' ORDER BY party",
            (session, round),
        ).fetchall()
        symbols = np.zeros((reps, len(blobs)), dtype=np.uint8)
        for j, (blob,) in enumerate(blobs):
            symbols[:, j] = np.frombuffer(blob, dtype=np.uint8)
        return symbols

    def messages(self, session: str) -> Iterator[dict[str, object]]:
        """Every recorded message of ``session`` as a dict (symbols as a string of digits; ``payload`` the
        bytes as received, None when absent: signed, or the unsigned entry of a bundle, proven by the store's
        ``bundles`` and ``worker_reports``)."""
        rows = self._db.execute(
            "SELECT m.round, r.name, m.party, m.kind, m.reason, m.symbols, m.payload FROM messages m "
            "JOIN rounds r ON r.session = m.session AND r.round = m.round "
            "WHERE m.session = ? ORDER BY m.round, m.party", (session,),
        )
        for rnd, name, party, kind, reason, blob, payload in rows:
            yield {"round": rnd, "name": name, "party": party, "kind": kind, "reason": reason,
                   "symbols": "".join(map(str, np.frombuffer(blob, dtype=np.uint8))), "payload": payload}

    def _exported_messages(self, session: str) -> Iterator[dict[str, object]]:
        """:meth:`messages` with ``payload`` as text: the JSON as received, or base64 of the binary party
        answer (the two never look alike: JSON starts with ``{``)."""
        for message in self.messages(session):
            payload = message["payload"]
            yield message | {"payload": _as_text(payload) if isinstance(payload, bytes) else None}

    def symbol_columns(self, session: str) -> dict[str, NDArray[np.int64] | NDArray[np.uint8]]:
        """The transcript of ``session`` in long form: one row per (round, party, repetition) of every
        ``symbols`` message (abstentions and absences send none), ordered by round, party, repetition.

        Returns:
            columns ``round``, ``party``, ``repetition`` (int64, round = the 0-based round index) and ``symbol``
            (uint8: 0/1, or 0-3 for four-output randomized response), all of one length.

        Raises:
            ParameterError: ``session`` is not in the store (names the stored ones).
        """
        if session not in self.sessions():
            raise ParameterError("session", session, "a session of this store: " + ", ".join(self.sessions()))
        rows = self._db.execute("SELECT round, party, symbols FROM messages WHERE session = ? AND kind = 'symbols' "
                                "ORDER BY round, party", (session,)).fetchall()
        symbols = [np.frombuffer(blob, dtype=np.uint8) for _, _, blob in rows]
        counts = np.array([len(x) for x in symbols], dtype=np.int64)
        return {
            "round": np.repeat(np.array([r for r, _, _ in rows], dtype=np.int64), counts),
            "party": np.repeat(np.array([p for _, p, _ in rows], dtype=np.int64), counts),
            "repetition": np.concatenate([np.arange(n, dtype=np.int64) for n in counts]) if rows
            else np.zeros(0, dtype=np.int64),
            "symbol": np.concatenate(symbols) if rows else np.zeros(0, dtype=np.uint8),
        }

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
                "double_released": out.double_released.tolist(), "reasons": out.reasons,
            })
        document = {
            "session": session, "rounds": rounds, "messages": list(self._exported_messages(session)),
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
            writer.writerows(self._exported_messages(session))
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
