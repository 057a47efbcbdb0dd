"""A run's transcript verified offline (parties/session/verify.py): a session answered by two runs, each under
its own keys (a resumed simulation), is proven with the keys the store keeps per run; one roster for every round
proves only the rounds answered under it; bad inputs are refused naming the value and what is allowed."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.signing import generate_key_pair
from mpdp.broker.wire import sign_answer
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.session_files import SessionRoster
from mpdp.parties.rounds.store import RecordedMessage, TranscriptStore
from mpdp.parties.session.verify import verify_run
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

SESSION = "two-runs"
K, ROUNDS, SECOND_RUN = 3, 3, 2  # rounds 0, 1 answered under the first run's keys, round 2 under the second's
FIRST, FIRST_KEYS = Roster.generate((RandomizedResponse(1.0),) * K)
SECOND, SECOND_KEYS = Roster.generate((RandomizedResponse(1.0),) * K)


def _store(folder: Path) -> Path:
    path = folder / "transcripts.sqlite"
    with TranscriptStore(path) as store:
        store.open_session(SESSION, K, 1, [f"r{i}" for i in range(ROUNDS)], mode="simulation (seeded generators)")
        store.record_roster(SESSION, FIRST.public_keys)  # no round recorded: from round 0
        for round_ in range(ROUNDS):
            keys = FIRST_KEYS if round_ < SECOND_RUN else SECOND_KEYS
            for party in range(K):
                symbols = np.array([(round_ + party) % 2], dtype=np.uint8)
                payload = sign_answer(keys[party], session=SESSION, round=round_, party=party, repetitions=1,
                                      symbols=symbols).to_wire()
                store.record_message(SESSION, round_, 1, RecordedMessage(party, "symbols", None, symbols, payload))
    with sqlite3.connect(path) as db:  # the second run's keys, as record_roster keeps them once rounds 0-1 are recorded

        db.execute("INSERT INTO roster_keys VALUES (?, ?, ?)", (SESSION, SECOND_RUN, b"".join(SECOND.public_keys)))
    db.close()
    return path


def _roster_file(folder: Path, roster: Roster, session: str = SESSION) -> Path:
    path = folder / f"roster-{session}.json"
    facts = SessionRoster(session, roster, generate_key_pair()[1])
    path.write_text(facts.to_file().model_dump_json(), encoding="utf-8")
    return path


def test_each_runs_answers_are_proven_under_that_runs_keys(tmp_path: Path) -> None:
    _store(tmp_path)
    result = verify_run(tmp_path)  # the folder; its only session
    assert result.proven and result.failure is None
    assert (result.session, result.parties, result.answers) == (SESSION, K, K * ROUNDS)
    assert result.keys == "the keys kept in the store (2 runs)"
    assert verify_run(tmp_path / "transcripts.sqlite", SESSION).answers == K * ROUNDS  # the file itself


def test_one_roster_for_every_round_proves_only_the_rounds_answered_under_it(tmp_path: Path) -> None:
    _store(tmp_path)
    first = verify_run(tmp_path, roster=_roster_file(tmp_path, FIRST))
    assert not first.proven and first.answers == 0
    assert first.failure == ("signature: messages round 2 party 0: its signature does not verify under the "
                             "party's key")
    second = verify_run(tmp_path, roster=_roster_file(tmp_path, SECOND))
    assert second.failure is not None and second.failure.startswith("signature: messages round 0 party 0:")


def test_a_changed_byte_of_a_stored_answer_is_named(tmp_path: Path) -> None:
    path = _store(tmp_path)
    with sqlite3.connect(path) as db:
        (payload,) = db.execute("SELECT payload FROM messages WHERE round = 1 AND party = 2").fetchone()
        changed = bytearray(payload)
        changed[-1] ^= 0x01  # the signature's last byte
        db.execute("UPDATE messages SET payload = ? WHERE round = 1 AND party = 2", (bytes(changed),))
    db.close()
    result = verify_run(tmp_path)
    assert result.failure == "signature: messages round 1 party 2: its signature does not verify under the party's key"


def test_bad_inputs_are_refused_naming_them(tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match=r"^run='.*' is not allowed: a run folder holding transcripts.sqlite"):
        verify_run(tmp_path)
    _store(tmp_path)
    with pytest.raises(ParameterError, match=r"^session='other' is not allowed: one of the stored sessions: two-runs$"):
        verify_run(tmp_path, "other")
    with pytest.raises(ParameterError, match=r"the roster of session 'two-runs' and its 3 parties \(it is session "
                                             r"'other''s, 3 parties\)"):
        verify_run(tmp_path, roster=_roster_file(tmp_path, FIRST, "other"))
    for lost in ("first_round = 0", "1"):  # an earlier mpdp ran rounds 0-1, this one resumed it; then all of it
        with sqlite3.connect(tmp_path / "transcripts.sqlite") as db:
            db.execute(f"DELETE FROM roster_keys WHERE {lost}")  # noqa: S608 - fixed conditions
        db.close()
        with pytest.raises(ParameterError, match=r"a transcript that keeps the public keys of session 'two-runs''s "
                                                 r"3 parties \(an earlier mpdp wrote it, or its first rounds: give the "
                                                 r"roster.json that mpdp keys wrote, --roster FILE, or roster=FILE in "
                                                 r"Python\)$"):
            verify_run(tmp_path)


def test_a_curator_session_is_refused_naming_it(tmp_path: Path) -> None:
    from mpdp.parties.ballots.store import BallotStore

    with BallotStore(tmp_path / "transcripts.sqlite") as store:
        store.open_central_session("ballots", K, 1, ["r0"], 1.0, 0.0, mode="simulation (seeded generators)",
                                   function="majority")
    with pytest.raises(ParameterError, match=r"a randomized-response run \(session ballots's parties sent ballots to "
                                             r"a curator or to mpc servers, which it does not check\)$"):
        verify_run(tmp_path)
