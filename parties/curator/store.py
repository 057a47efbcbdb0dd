"""The transcript store of the curator protocol: :class:`mpdp.parties.rounds.store.TranscriptStore` plus two tables.

Reused tables: ``sessions``, ``rounds`` (participants = parties whose sealed ballot was accepted),
``decisions`` (the released outputs, one row per repetition) and ``rejects``. Added::

    curator_sessions (session PK; epsilon, delta)          the central mechanism's privacy level
    ballots  (session, round, party PK; kind sealed|abstain|absent, reason,
              payload = the signed SealedBallot JSON as received (ciphertext only), received)
    releases (session, round PK; voters, payload = the signed CuratorRelease JSON as published)

No plaintext bit and no count is ever written: a ballot is stored as the ciphertext that came over
the wire (an auditor re-verifies its Ed25519 signature; only the curator's round key opens it, and
that key is discarded with the round). One transaction per round, idempotent like the base store.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np

from mpdp.parties.curator.outcome import ReleaseOutcome
from mpdp.parties.rounds.store import TranscriptStore, _id_array, _ids
from mpdp.protocols.errors import ParameterError

__all__ = ["CuratorRecord", "CuratorStore", "RecordedBallot"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS curator_sessions (
    session TEXT PRIMARY KEY, epsilon REAL NOT NULL, delta REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ballots (
    session TEXT NOT NULL, round INTEGER NOT NULL, party INTEGER NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('sealed', 'abstain', 'absent')), reason TEXT, payload TEXT,
    received REAL NOT NULL, PRIMARY KEY (session, round, party)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS releases (
    session TEXT NOT NULL, round INTEGER NOT NULL, voters INTEGER NOT NULL, payload TEXT NOT NULL,
    PRIMARY KEY (session, round)) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True)
class RecordedBallot:
    """One party's entry in a round: its sealed ballot or abstention as received, or ``absent``."""

    party: int
    kind: Literal["sealed", "abstain", "absent"]
    reason: str | None
    payload: str | None


@dataclass(frozen=True, slots=True, eq=False)
class CuratorRecord:
    """Everything one round adds, in one transaction: the outcome, one ballot entry per party, the
    signed release as published, and reject counts (round -> reason -> (count, last detail))."""

    session: str
    outcome: ReleaseOutcome
    ballots: tuple[RecordedBallot, ...]
    release_payload: str
    rejects: Mapping[int, Mapping[str, tuple[int, str]]]


class CuratorStore(TranscriptStore):
    """A transcript store that also holds sealed ballots and releases (same file, same rules).

    Raises:
        ParameterError: the path cannot be opened as a SQLite database.
    """

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self._db.executescript(_SCHEMA)

    def open_curator_session(self, session: str, parties: int, repetitions: int,
                             round_names: Sequence[str], epsilon: float, delta: float) -> frozenset[int]:
        """:meth:`TranscriptStore.open_session` and the mechanism's (epsilon, delta); return the
        indices of rounds already recorded.

        Raises:
            ParameterError: the session exists with other parameters.
        """
        recorded = self.open_session(session, parties, repetitions, round_names)
        row = self._db.execute("SELECT epsilon, delta FROM curator_sessions WHERE session = ?",
                               (session,)).fetchone()
        if row is None:
            if recorded:
                raise ParameterError("session", session, "a new session id (it holds a randomized-response run)")
            self._db.execute("INSERT INTO curator_sessions VALUES (?, ?, ?)", (session, epsilon, delta))
        elif tuple(row) != (epsilon, delta):
            raise ParameterError("session", session,
                                 f"a new session id, or the stored epsilon {row[0]} and delta {row[1]}")
        return recorded

    def record_release(self, record: CuratorRecord) -> bool:
        """Write one round (ballots, release, outputs, round row, rejects) in one transaction.

        Returns:
            True if written, False if the round was already recorded (nothing changes then).
        """
        out, session, now = record.outcome, record.session, time.time()
        with self._transaction():
            if self._db.execute("SELECT 1 FROM rounds WHERE session = ? AND round = ?",
                                (session, out.index)).fetchone():
                return False
            self._db.executemany(
                "INSERT INTO ballots VALUES (?, ?, ?, ?, ?, ?, ?)",
                [(session, out.index, b.party, b.kind, b.reason, b.payload, now) for b in record.ballots])
            self._db.execute("INSERT INTO releases VALUES (?, ?, ?, ?)",
                             (session, out.index, int(out.participants.size), record.release_payload))
            self._db.executemany("INSERT INTO decisions VALUES (?, ?, ?, ?)",
                                 [(session, out.index, r, int(d)) for r, d in enumerate(out.outputs)])
            self._db.execute(
                "INSERT INTO rounds VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session, out.index, out.name, out.status, _ids(out.participants), _ids(out.abstained),
                 _ids(out.absent), out.messages_received, out.messages_rejected, now))
            self._add_rejects(session, record.rejects)
        return True

    def load_release(self, session: str, round: int) -> ReleaseOutcome:
        """The recorded round as a :class:`ReleaseOutcome`.

        Raises:
            ParameterError: the round is not recorded.
        """
        row = self._db.execute(
            "SELECT name, status, participants, abstained, absent, messages_received, messages_rejected "
            "FROM rounds WHERE session = ? AND round = ?", (session, round)).fetchone()
        if row is None:
            raise ParameterError("round", round, f"a recorded round of session {session!r}")
        name, status, participants, abstained, absent, received, rejected = row
        outputs = np.array([d for (d,) in self._db.execute(
            "SELECT decision FROM decisions WHERE session = ? AND round = ? ORDER BY repetition",
            (session, round))], dtype=np.int64)
        return ReleaseOutcome(name=name, index=int(round), participants=_id_array(participants),
                              outputs=outputs, messages_received=int(received),
                              messages_rejected=int(rejected), abstained=_id_array(abstained),
                              absent=_id_array(absent), status=status)

    def ballots(self, session: str) -> Iterator[dict[str, object]]:
        """Every recorded ballot entry of ``session`` (payload = the sealed JSON) in round, party order."""
        rows = self._db.execute("SELECT round, party, kind, reason, payload FROM ballots WHERE session = ? "
                                "ORDER BY round, party", (session,))
        for rnd, party, kind, reason, payload in rows:
            yield {"round": rnd, "party": party, "kind": kind, "reason": reason, "payload": payload}

    def release_payloads(self, session: str) -> list[str]:
        """The signed releases as published, in round order."""
        rows = self._db.execute("SELECT payload FROM releases WHERE session = ? ORDER BY round", (session,))
        return [str(p) for (p,) in rows]
