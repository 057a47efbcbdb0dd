"""A run's stored transcript verified offline (``mpdp verify RUN``): every stored answer proven to come from its party.

RUN is a run's folder holding ``transcripts.sqlite`` (``mpdp simulate --out DIR``, ``mpdp observe --out DIR``) or
the SQLite file itself. Each answer is proven by :func:`mpdp.parties.rounds.transcript_check.verify_transcript`
(its own Ed25519 signature, or for a simulation's bundled answer the worker's signed bundle and the party's signed
endorsement of the worker's key) under the roster's public keys: those of ``roster`` (a ``roster.json`` that
``mpdp keys`` wrote) for every round, else the ones the store keeps (``roster_keys``: ``mpdp simulate`` and
``mpdp observe`` record the keys of each run, a resumed simulation's fresh keys from its first round on).

Then what the store's readers (``mpdp export``, reports) use besides the payloads is checked against the proven
answers: each stored row's ``kind``, ``reason``, ``repetitions`` and ``symbols`` columns (there), each round
record's party lists and status, and the decision rows' coverage
(:func:`mpdp.parties.rounds.record_check.check_round_records`, whose docstring says what is not proven:
:data:`NOT_PROVEN`).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mpdp.parties.rounds.record_check import check_round_records
from mpdp.parties.rounds.session_files import read_roster
from mpdp.parties.rounds.store import TranscriptStore, check_store_file
from mpdp.parties.rounds.transcript_check import verify_transcript
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.numerics.cost import noun

__all__ = ["NOT_PROVEN", "STORE_NAME", "Verification", "verify_run"]

#: The transcript a run's folder holds.
STORE_NAME = "transcripts.sqlite"
#: What a proven run still takes on the observer's word (:mod:`mpdp.parties.rounds.record_check`).
NOT_PROVEN = ("which output each decided repetition holds (the decision rule's mechanisms and generator are not "
              "stored), absences, and the received/rejected counts")


@dataclass(frozen=True, slots=True)
class Verification:
    """What :func:`verify_run` checked.

    Attributes:
        store: the SQLite transcript; session: the session verified; parties: its k; rounds: rounds recorded.
        keys: where the public keys came from (``the roster FILE``, or the store's keys of its runs).
        answers: the stored answers proven (on a failure, those of the runs checked before the one that failed).
        failure: None when every answer is proven and the stored columns, round records and decision rows agree
            with them; else the first problem, naming its table, round and party (or repetition) and why
            (``signature``, ``schema``, ``unknown-party``, ``column``, ``missing``, ``round-record``,
            ``decisions``).
    """

    store: Path
    session: str
    parties: int
    rounds: int
    keys: str
    answers: int
    failure: str | None

    @property
    def proven(self) -> bool:
        """Every stored answer is proven."""
        return self.failure is None


def _store_path(run: str | Path) -> Path:
    path = Path(run)
    store = path / STORE_NAME if path.is_dir() else path
    if not store.is_file():
        raise ParameterError("run", str(run), f"a run folder holding {STORE_NAME} (mpdp simulate or observe with "
                                              "--out DIR), or a transcript .sqlite file")
    return store


def _session(store: TranscriptStore, session: str | None) -> str:
    stored = list(store.sessions())
    if session is None and len(stored) == 1:
        return stored[0]
    if session is None or session not in stored:
        allowed = "one of the stored sessions: " + ", ".join(stored) if stored else "a session (the store holds none)"
        raise ParameterError("session", session, allowed)
    return session


def _key_runs(store: TranscriptStore, run: str | Path, session: str, parties: int,
              roster: str | Path | None) -> tuple[str, list[tuple[range, tuple[bytes, ...]]]]:
    """Where the keys come from, and each run's rounds with the keys its parties answered with."""
    if roster is not None:
        facts = read_roster(roster)
        if facts.session != session or facts.roster.k != parties:
            raise ParameterError("roster", str(roster), f"the roster of session {session!r} and its {parties} "
                                 f"{noun(parties, 'party', 'parties')} (it is session {facts.session!r}'s, "
                                 f"{facts.roster.k} {noun(facts.roster.k, 'party', 'parties')})")
        keys = [(0, facts.roster.public_keys)]
        where = f"the keys of the roster {roster}"
    else:
        keys = store.roster_keys(session)
        if not keys or keys[0][0] > 0 or any(len(run_keys) != parties for _, run_keys in keys):  # from round 0
            raise ParameterError("run", str(run), f"a transcript that keeps the public keys of session {session!r}'s "
                                 f"{parties} {noun(parties, 'party', 'parties')}", hint="an earlier mpdp wrote it, or "
                                 "its first rounds: give the roster.json that mpdp keys wrote, --roster FILE, or "
                                 "roster=FILE in Python")
        where = f"the keys kept in the store ({len(keys)} {noun(len(keys), 'run')})"
    stops = [first for first, _ in keys[1:]] + [2**62]
    return where, [(range(first, stop), run_keys) for (first, run_keys), stop in zip(keys, stops, strict=True)]


def verify_run(run: str | Path, session: str | None = None, roster: str | Path | None = None) -> Verification:
    """Prove every stored answer of a run's randomized-response transcript, and that what its readers use agrees
    with them (module docstring).

    Args:
        run: the run's folder (holding ``transcripts.sqlite``) or the SQLite file.
        session: the session to verify; None: the store's only one.
        roster: a ``roster.json`` whose keys hold for every round; None: the keys the store keeps.

    Returns:
        :class:`Verification`, its ``failure`` naming the first answer not proven or stored row that disagrees
        (None: all proven).

    Raises:
        ParameterError: no transcript at ``run``, a damaged one, a ``session`` not stored (names the stored ones)
            or none given where several are, a curator or mpc session (their ballots are not answers), a roster
            of another session or size, or without ``roster`` a store that keeps no keys from round 0 on (an earlier
            mpdp ran it, or its first rounds).
    """
    path = _store_path(run)
    check_store_file(path)
    try:
        with TranscriptStore(path) as store:
            name = _session(store, session)
            if store.query("SELECT name FROM sqlite_master WHERE name = 'curator_sessions'") and store.query(
                    "SELECT 1 FROM curator_sessions WHERE session = ?", (name,)):
                raise ParameterError("run", str(run), f"a randomized-response run (session {name}'s parties sent "
                                                      "ballots to a curator or to mpc servers, which it does not check)")
            (parties,), = store.query("SELECT parties FROM sessions WHERE session = ?", (name,))
            rounds = len(store.recorded_rounds(name))
            where, runs = _key_runs(store, run, name, int(parties), roster)
            answers = 0
            try:
                for rounds_of_run, keys in runs:
                    answers += verify_transcript(store, name, keys, rounds_of_run)
                check_round_records(store, name)
            except ProtocolViolation as exc:
                return Verification(path, name, parties, rounds, where, answers, str(exc))
    except (sqlite3.Error, UnicodeDecodeError) as exc:  # damage quick_check did not see
        raise ParameterError("run", str(run), "an intact SQLite transcript store",
                             hint=f"damaged: {exc}; restore it from a copy") from None
    return Verification(path, name, parties, rounds, where, answers, None)
