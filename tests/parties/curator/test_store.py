"""The curator store records the function a session releases: a rerun with another function is refused
(its recorded releases are never read back as another function's), and a store written before functions
were recorded reads its sessions as the majority, the only function the curator released then."""

from __future__ import annotations

import math
import sqlite3
from pathlib import Path

import pytest

from mpdp.parties.ballots.store import BallotStore
from mpdp.protocols.errors import ParameterError

MODE = "simulation (seeded generators)"


def test_a_session_keeps_its_function(tmp_path: Path) -> None:
    with BallotStore(tmp_path / "c.sqlite") as store:
        assert store.open_central_session("s", 5, 3, ["bill"], 1.0, 0.0, mode=MODE, function="threshold:2") == set()
        assert store.open_central_session("s", 5, 3, ["bill"], 1.0, 0.0, mode=MODE, function="threshold:2") == set()
        with pytest.raises(ParameterError, match="function threshold:2"):
            store.open_central_session("s", 5, 3, ["bill"], 1.0, 0.0, mode=MODE, function="xor")


def test_an_older_store_is_the_majority(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the table as it was, without the function column
        db.execute("CREATE TABLE curator_sessions (session TEXT PRIMARY KEY, epsilon REAL NOT NULL, "
                   "delta REAL NOT NULL)")
        db.execute("INSERT INTO curator_sessions VALUES ('s', ?, 0.0)", (math.inf,))
    db.close()
    with BallotStore(path) as store:
        assert store.query("SELECT function FROM curator_sessions") == [("majority",)]
        store.open_central_session("s", 3, 2, ["bill"], math.inf, 0.0, mode=MODE)  # majority: the default
        with pytest.raises(ParameterError, match="function majority"):
            store.open_central_session("s", 3, 2, ["bill"], math.inf, 0.0, mode=MODE, function="or")
    with BallotStore(path) as again:  # migrated once: opens as it is
        assert again.query("SELECT session, function FROM curator_sessions") == [("s", "majority")]
