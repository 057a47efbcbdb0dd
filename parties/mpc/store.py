"""The transcript store of the mpc protocol: the ballot store of the central protocols (sealed ballots, signed
releases; :mod:`mpdp.parties.ballots.store`) plus what each round cost each compute server::

    server_costs (session, round, server PK; received = bytes of its job, sent = bytes it sent to the other
                  servers over MPyC's links, cpu = its CPU seconds)

Written with the round in one transaction (:class:`MpcRows`); read with :meth:`MpcStore.server_costs`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mpdp.parties.ballots.store import BallotRows, BallotStore
from mpdp.parties.mpc.cluster import ServerCost

__all__ = ["MpcRows", "MpcStore"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS server_costs (
    session TEXT NOT NULL, round INTEGER NOT NULL, server INTEGER NOT NULL, received INTEGER NOT NULL,
    sent INTEGER NOT NULL, cpu REAL NOT NULL, PRIMARY KEY (session, round, server)) WITHOUT ROWID;
"""


@dataclass(frozen=True, slots=True, eq=False)
class MpcRows:
    """The mpc protocol's rows of one round (a :class:`mpdp.parties.rounds.store.RoundRows`): its ballots and
    releases, and each server's cost (in server order; empty when the servers did not run, n = 0)."""

    ballots: BallotRows
    costs: tuple[ServerCost, ...] = ()

    def write(self, db: sqlite3.Connection, session: str, round: int, now: float) -> None:
        """Insert ballots, the releases and the servers' costs (inside the round's transaction)."""
        self.ballots.write(db, session, round, now)
        db.executemany("INSERT INTO server_costs VALUES (?, ?, ?, ?, ?, ?)",
                       [(session, round, i, c.received, c.sent, c.cpu) for i, c in enumerate(self.costs)])


class MpcStore(BallotStore):
    """A ballot store that also holds the compute servers' costs per round.

    Raises:
        ParameterError: the path cannot be opened as a SQLite database.
    """

    def __init__(self, path: Path | str | None) -> None:
        super().__init__(path, schema=_SCHEMA)

    def server_costs(self, session: str) -> dict[int, list[ServerCost]]:
        """Per recorded round of ``session`` (with servers run), each server's cost in server order."""
        rows = self.query("SELECT round, received, sent, cpu FROM server_costs WHERE session = ? "
                          "ORDER BY round, server", (session,))
        costs: dict[int, list[ServerCost]] = {}
        for rnd, received, sent, cpu in rows:
            costs.setdefault(int(rnd), []).append(ServerCost(int(received), int(sent), float(cpu)))
        return costs
