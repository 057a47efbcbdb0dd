"""Which answer record a party host answers a session with, noted in its parties' keys folder.

A host that starts without the record its parties answered with (deleted, another ``--record``, a record
created afresh at the old path) would answer replayed or re-announced rounds with fresh randomness: a
second release of every bit. The record itself cannot say it is missing, and the observer's transcript is
not the host's to read; the keys folder is: a host runs only with its parties' private keys. So
:func:`claim_record` notes in ``KEYS/answer-records.json`` the record's path and identity
(:attr:`mpdp.parties.rounds.answer_record.AnswerRecord.identity`) for the session and the hosted parties,
and refuses to start a host of any of those parties with another record, a missing one, or one created
again, unless told explicitly (``mpdp party --new-record``, after checking that no round the lost record
answered is still open or can be announced again).

The rule covers a host restarted in the same keys folder; keys copied to another folder make a second,
independent note, and that double release is caught by the observer instead
(:mod:`mpdp.parties.rounds.engine`, ``double-release``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.ranges import format_ranges
from mpdp.protocols.errors import ParameterError

__all__ = ["NOTE_NAME", "claim_record"]

#: The note's file name in the keys folder.
NOTE_NAME = "answer-records.json"

_Entry = dict[str, object]


def _read_note(note: Path) -> dict[str, list[_Entry]]:
    """The note: session -> entries ``{"record": path, "identity": hex, "parties": [ids]}``; {} when missing.

    Raises:
        ParameterError: the file is not a note written by :func:`claim_record`.
    """
    if not note.exists():
        return {}
    try:
        document = json.loads(note.read_bytes().decode("utf-8"))
        if not isinstance(document, dict) or not all(
                isinstance(entries, list) and all(isinstance(e, dict) and isinstance(e.get("record"), str)
                                                  and isinstance(e.get("identity"), str)
                                                  and isinstance(e.get("parties"), list) for e in entries)
                for entries in document.values()):
            raise ValueError("not a note of answer records")
    except (OSError, ValueError) as exc:
        raise ParameterError("note", str(note), "the keys folder's note of answer records (JSON written by mpdp party)",
                             hint=f"{exc}; restore it, or remove it only if no session of these keys is running") from None
    return document


def _conflict(entry: _Entry, record: Path, identity: str | None) -> str | None:
    """Why ``record`` (``identity`` None: the file is missing) is not the record noted in ``entry``, or None."""
    noted = Path(str(entry["record"]))
    if noted != record:
        return f"they answered with the record {noted}"
    if identity is None:
        return "that record file is missing"
    if identity != entry["identity"]:
        return "that record file was created again (it is not the one they answered with)"
    return None


def claim_record(keys: Path, session: str, parties: Sequence[int], record: Path, *, new_record: bool = False) -> None:
    """Check that ``record`` is the answer record ``parties`` of ``session`` answered with (when the note in
    ``keys`` says they answered with one), then note it (creating the record file if missing).

    Args:
        keys: the hosted parties' keys folder (the note is written there).
        session: the session id; parties: the hosted party ids.
        record: the host's answer record (SQLite).
        new_record: start even when the noted record is lost or another (the operator checked that no round it
            answered can be announced again): the note then names ``record``.

    Raises:
        ParameterError: another, missing or re-created record for parties noted with a record (names the
            parties, the noted record and ``--new-record``); an unreadable note; an unwritable keys folder or record.
    """
    record = record.resolve()
    note = keys / NOTE_NAME
    document = _read_note(note)
    identity = None
    if record.exists():
        with AnswerRecord(record) as opened:
            identity = opened.identity
    hosted = set(parties)
    entries = document.get(session, [])
    for entry in entries:
        overlap = hosted & {int(p) for p in entry["parties"]}  # type: ignore[attr-defined]
        why = _conflict(entry, record, identity) if overlap else None
        if why is not None and not new_record:
            raise ParameterError(
                "--record", str(record), f"the answer record of parties {format_ranges(overlap)} in session "
                f"{session!r}: {why} (noted in {note})",
                hint="a host with another record answers again with fresh randomness, a second release of every "
                     "bit: restore that file and pass it as --record; only if it is lost and no round it answered "
                     "can be announced again (the session ended, or its observer is stopped for good), start with "
                     "--new-record")
    with AnswerRecord(record) as opened:
        identity = opened.identity
    kept = [e | {"parties": left} for e in entries  # other hosts' parties in this folder keep their records
            if (left := sorted({int(p) for p in e["parties"]} - hosted))]  # type: ignore[attr-defined]
    document[session] = [*kept, {"record": str(record), "identity": identity, "parties": sorted(hosted)}]
    temporary = note.with_name(f".{NOTE_NAME}.{os.getpid()}")
    try:
        temporary.write_text(json.dumps(document, indent=1) + "\n")
        os.replace(temporary, note)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise ParameterError("--keys", str(keys), "a writable keys folder (the host notes its answer record there)",
                             hint=str(exc)) from None
