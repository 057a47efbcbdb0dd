"""The transcript store of the central protocols (curator, mpc): :class:`mpdp.parties.rounds.store.TranscriptStore`
plus three tables.

Reused tables: ``sessions``, ``rounds`` (participants = parties whose sealed ballot was accepted),
``decisions`` (the released outputs, one row per repetition) and ``rejects``. Added::

    curator_sessions (session PK; epsilon, delta, function) the central mechanism's privacy level and the
                                                           function it releases (a store written before
                                                           functions were recorded: majority)
    ballots  (session, round, party PK; kind sealed|abstain|absent, reason,
              payload = the signed SealedBallot JSON as received (ciphertext only), received)
    releases (session, round PK; voters, payload = the signed CuratorRelease JSON as published)

No plaintext bit and no count is ever written: a ballot is stored as the ciphertext that came over
the wire (an auditor re-verifies its Ed25519 signature; only the curator's round key opens it, and
that key is discarded with the round; the mpc servers' keys each open one share). Written by the round engine
in the round's one transaction (:class:`BallotRows`), idempotent like the base store; a round reads back with
``load_round(..., symbols=False)``. The mpc protocol's store adds its servers' costs
(:mod:`mpdp.parties.mpc.store`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.errors import ParameterError

if TYPE_CHECKING:
    from mpdp.parties.rounds.engine import ClosedRound

__all__ = ["BallotRows", "BallotStore", "RecordedBallot", "recorded_ballots"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS curator_sessions (
    session TEXT PRIMARY KEY, epsilon REAL NOT NULL, delta REAL NOT NULL,
    function TEXT NOT NULL DEFAULT 'majority');
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


def recorded_ballots(closed: ClosedRound[Any, Any]) -> tuple[RecordedBallot, ...]:
    """One entry per roster party of a closed round: its sealed ballot or abstention as received (the
    message's ``kind``, ``reason`` and JSON), or ``absent`` (curator and mpc protocols)."""
    return tuple(
        RecordedBallot(party, "absent", None, None) if got is None
        else RecordedBallot(party, got.message.kind, got.message.reason, got.wire.decode("utf-8"))
        for party, got in ((p, closed.received.get(p)) for p in range(closed.k)))


@dataclass(frozen=True, slots=True, eq=False)
class BallotRows:
    """A central protocol's rows of one round (a :class:`mpdp.parties.rounds.store.RoundRows`): one ballot
    entry per roster party and the signed release(s) as published, for ``voters`` sealed ballots."""

    ballots: tuple[RecordedBallot, ...]
    voters: int
    release_payload: str

    def write(self, db: sqlite3.Connection, session: str, round: int, now: float) -> None:
        """Insert the ballots and the release (inside the round's transaction)."""
        db.executemany("INSERT INTO ballots VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(session, round, b.party, b.kind, b.reason, b.payload, now) for b in self.ballots])
        db.execute("INSERT INTO releases VALUES (?, ?, ?, ?)", (session, round, self.voters, self.release_payload))


class BallotStore(TranscriptStore):
    """A transcript store that also holds sealed ballots and releases (same file, same rules); ``schema``: a
    protocol's further tables.

    Raises:
        ParameterError: the path cannot be opened as a SQLite database.
    """

    def __init__(self, path: Path | str | None, *, schema: str = "") -> None:
        super().__init__(path, schema=_SCHEMA + schema)
        columns = [row[1] for row in self.query("PRAGMA table_info(curator_sessions)")]
        if "function" not in columns:  # a store from before the curator released other functions
            try:
                with self.transaction() as db:
                    db.execute("ALTER TABLE curator_sessions ADD COLUMN function TEXT NOT NULL DEFAULT 'majority'")
            except sqlite3.Error as exc:
                raise ParameterError("store_path", str(path), "a writable SQLite file", hint=str(exc)) from exc

    def open_central_session(self, session: str, parties: int, repetitions: int,
                             round_names: Sequence[str], epsilon: float, delta: float, *,
                             mode: str, function: str = "majority") -> frozenset[int]:
        """:meth:`TranscriptStore.open_session` and the mechanism's (epsilon, delta) and released
        ``function`` (its name, e.g. ``threshold:2``); return the indices of rounds already recorded.

        Raises:
            ParameterError: the session exists with other parameters (a recorded release of one
                function is never read back as another's).
        """
        recorded = self.open_session(session, parties, repetitions, round_names, mode=mode)
        rows = self.query("SELECT epsilon, delta, function FROM curator_sessions WHERE session = ?", (session,))
        if not rows:
            if recorded:
                raise ParameterError("session", session, "a new session id (it holds a randomized-response run)")
            with self.transaction() as db:
                db.execute("INSERT INTO curator_sessions VALUES (?, ?, ?, ?)", (session, epsilon, delta, function))
        elif rows[0] != (epsilon, delta, function):
            raise ParameterError("session", session, f"a new session id, or the stored epsilon {rows[0][0]}, "
                                 f"delta {rows[0][1]} and function {rows[0][2]}")
        return recorded

    def ballots(self, session: str) -> Iterator[dict[str, object]]:
        """Every recorded ballot entry of ``session`` (payload = the sealed JSON) in round, party order."""
        rows = self.query("SELECT round, party, kind, reason, payload FROM ballots WHERE session = ? "
                          "ORDER BY round, party", (session,))
        for rnd, party, kind, reason, payload in rows:
            yield {"round": rnd, "party": party, "kind": kind, "reason": reason, "payload": payload}

    def release_payloads(self, session: str) -> list[str]:
        """The signed releases as published, in round order."""
        rows = self.query("SELECT payload FROM releases WHERE session = ? ORDER BY round", (session,))
        return [str(p) for (p,) in rows]
