"""A party host's durable record of its answers: SQLite (WAL, ``synchronous=FULL``), one file per host.

Tables::

    answers (session, party, round PK; payload = the exact signed wire JSON it published,
             epsilon, delta, repetitions = the round's charge to the party's privacy ledger, NULL when
             the answer released nothing, e.g. an abstention; answered = unix seconds)

:meth:`AnswerRecord.save` commits (and so fsyncs) before the party publishes; after any restart the
party re-sends the recorded message for a re-announced round instead of drawing again (a fresh draw
would spend its privacy twice), and its ledger is :meth:`AnswerRecord.ledger` of the recorded charges.
A different payload for a recorded (session, party, round) raises instead of overwriting.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from types import TracebackType
from typing import Self

from mpdp.analysis.accounting import PrivacyLedger, RoundCharge
from mpdp.protocols.errors import ParameterError, ProtocolViolation

__all__ = ["AnswerRecord"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    session TEXT NOT NULL, party INTEGER NOT NULL, round INTEGER NOT NULL, payload TEXT NOT NULL,
    epsilon REAL, delta REAL, repetitions INTEGER, answered REAL NOT NULL,
    PRIMARY KEY (session, party, round)) WITHOUT ROWID;
"""


class AnswerRecord:
    """The answers of one party host's parties, across restarts (module docstring).

    Args:
        path: the SQLite file (created with its parent directory when missing).

    Raises:
        ParameterError: the file cannot be opened as an SQLite database.

    Use as a context manager (closes the connection), or call :meth:`close`.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(_SCHEMA)
        except (OSError, sqlite3.DatabaseError) as exc:
            raise ParameterError("record", str(path), "a writable SQLite file (the party host's answer record)",
                                 hint=str(exc)) from None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection (everything saved is already committed)."""
        self._db.close()

    def answers(self, session: str, party: int) -> dict[int, str]:
        """The signed messages ``party`` published in ``session``: round -> wire JSON."""
        rows = self._db.execute("SELECT round, payload FROM answers WHERE session = ? AND party = ?",
                                (session, int(party)))
        return {int(r): str(p) for r, p in rows}

    def ledger(self, session: str, party: int, delta_slack: float) -> PrivacyLedger:
        """``party``'s privacy ledger in ``session``: the recorded charges in round order, at ``delta_slack``."""
        rows = self._db.execute(
            "SELECT round, epsilon, delta, repetitions FROM answers WHERE session = ? AND party = ? "
            "AND repetitions IS NOT NULL ORDER BY round", (session, int(party)))
        return PrivacyLedger(delta_slack, tuple(RoundCharge(int(r), e, d, int(n)) for r, e, d, n in rows))

    def save(self, session: str, party: int, round: int, payload: str, charge: RoundCharge | None) -> None:
        """Record (and commit) ``party``'s answer to ``round`` before it is published; the same answer
        again is a no-op.

        Args:
            payload: the signed wire JSON, exactly as published.
            charge: what the answer cost the party's ledger (None: it released nothing).

        Raises:
            ProtocolViolation: ``"conflict"``, a different answer is recorded for this round.
        """
        with self._db:  # one transaction: BEGIN ... COMMIT
            self._db.execute("BEGIN IMMEDIATE")
            row = self._db.execute("SELECT payload FROM answers WHERE session = ? AND party = ? AND round = ?",
                                   (session, int(party), int(round))).fetchone()
            if row is not None:
                if row[0] != payload:
                    raise ProtocolViolation("conflict", f"party {party} round {round}: a different answer "
                                            "is already recorded (the party never answers a round twice)")
                return
            self._db.execute(
                "INSERT INTO answers VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session, int(party), int(round), payload,
                 None if charge is None else charge.epsilon, None if charge is None else charge.delta,
                 None if charge is None else charge.repetitions, time.time()))
