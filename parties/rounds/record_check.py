"""A stored randomized-response transcript's round records and decision rows checked against its answers: what
``mpdp export``, reports and :meth:`mpdp.parties.rounds.store.TranscriptStore.load_round` read besides the answers.

Run after :func:`mpdp.parties.rounds.transcript_check.verify_transcript` has proven every stored answer and that
each ``messages`` row's ``kind`` is its answer's, so a row's ``kind`` here stands for its proven answer. For each
recorded round (``rounds``):

* its ``participants``, ``abstained`` and ``absent`` split the roster's parties 0..k-1, each party once;
* ``participants`` are exactly the parties whose stored answer carries symbols, ``abstained`` exactly those whose
  answer abstains (so a deleted or absent-marked answer of a listed party is named, and so is an answer the
  record leaves out); every stored row has the session's ``repetitions``;
* its ``status`` is the one its answers give: ``failed`` with no answer, ``no-answers`` when every answer
  abstains, otherwise ``complete`` or ``timeout`` (``complete`` with no party absent);
* its ``decisions`` rows are repetitions 0..R-1 (R: the session's repetitions), each ``NO_DECISION`` (-1) for an
  undecided round and an output (>= 0) for a decided one; no decision row names a round not recorded.

Not proven: which decided output each repetition holds (the observer's decision rule needs the roster's
mechanisms, the function and, for a randomized rule, the observer's generator, none of which the store keeps),
an absence (nothing is signed for it: a stored answer removed together with its party's place in
``participants``, moved to ``absent``, is not seen), and the counts ``messages_received``/``messages_rejected``
and the ``rejects`` table (the observer's tallies of what it refused).
"""

from __future__ import annotations

import json
from collections import defaultdict

from mpdp.parties.rounds.outcome import NO_DECISION
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.protocols.errors import ProtocolViolation

__all__ = ["check_round_records"]

#: The ``rounds`` columns naming parties, and the ``messages`` kind each one's parties have.
_LISTS = (("participants", "symbols"), ("abstained", "abstain"), ("absent", "absent"))


def _status(participants: int, abstained: int, absent: int) -> tuple[str, ...]:
    """The statuses a round with these many parties answering, abstaining and absent may have."""
    if participants + abstained == 0:
        return ("failed",)
    if participants == 0:
        return ("no-answers",)
    return ("complete", "timeout") if absent == 0 else ("timeout",)


def _party_lists(round_: int, columns: list[str]) -> dict[str, list[int]]:
    """The round record's ``participants``, ``abstained`` and ``absent`` (JSON lists of party ids)."""
    lists = {}
    for (column, _), text in zip(_LISTS, columns, strict=True):
        try:
            lists[column] = [int(party) for party in json.loads(text)]
        except (ValueError, TypeError):
            raise ProtocolViolation("round-record", f"rounds round {round_}: {column} is {text[:40]!r}, a JSON "
                                                    "list of party ids expected") from None
    return lists


def _check_lists(round_: int, parties: int, lists: dict[str, list[int]], kinds: dict[int, str]) -> None:
    """The round record's party lists against the roster and the stored rows' kinds (module docstring)."""
    listed: dict[int, str] = {}
    for column, kind in _LISTS:
        for party in lists[column]:
            if not 0 <= party < parties or party in listed:
                raise ProtocolViolation("round-record", f"rounds round {round_}: party {party} in {column} is "
                                        + (f"also in {listed[party]}" if party in listed else
                                           f"outside the roster's parties 0..{parties - 1}"))
            listed[party] = column
            stored = kinds.get(party, "absent")  # no row: nothing stored, as for the absent
            if stored != kind:
                what = "no stored answer" if stored == "absent" else f"a stored answer of kind {stored!r}"
                raise ProtocolViolation("missing" if stored == "absent" else "round-record",
                                        f"round {round_} party {party}: the round record lists it in {column} but "
                                        f"messages holds {what}")
    unlisted = sorted(set(range(parties)) - set(listed))
    if unlisted:
        raise ProtocolViolation("round-record", f"rounds round {round_}: party {unlisted[0]} is in none of "
                                                "participants, abstained, absent")


def _check_decisions(round_: int, status: str, repetitions: int, decisions: list[tuple[int, int]]) -> None:
    """A recorded round's decision rows (module docstring)."""
    indices = [r for r, _ in decisions]
    if indices != list(range(repetitions)):
        missing = sorted(set(range(repetitions)) - set(indices))
        extra = sorted(set(indices) - set(range(repetitions)))
        raise ProtocolViolation("decisions", f"decisions round {round_}: repetitions {indices[:5]}"
                                f"{'...' if len(indices) > 5 else ''} stored, 0..{repetitions - 1} expected"
                                f"{f' (missing {missing[:5]})' if missing else ''}{f' (extra {extra[:5]})' if extra else ''}")
    undecided = status in ("failed", "no-answers")
    for repetition, decision in decisions:
        if (decision == NO_DECISION) != undecided or decision < NO_DECISION:
            expected = f"{NO_DECISION} (round {status}: nothing decided)" if undecided else "an output (>= 0)"
            raise ProtocolViolation("decisions", f"decisions round {round_} repetition {repetition}: {decision}, "
                                                 f"{expected} expected")


def check_round_records(store: TranscriptStore, session: str) -> None:
    """Check ``session``'s round records and decision rows against its stored answers (module docstring).

    Args:
        store: the transcript, its answers proven (:func:`mpdp.parties.rounds.transcript_check.verify_transcript`);
            session: the session id.

    Raises:
        ProtocolViolation: the first disagreement, naming the table, round (and party or repetition):
            ``missing`` (a party the round record lists as answering or abstaining has no stored answer),
            ``round-record`` (party lists, status or a row's repetitions), ``decisions`` (decision rows).
    """
    (parties, repetitions), = store.query("SELECT parties, repetitions FROM sessions WHERE session = ?", (session,))
    kinds: dict[int, dict[int, str]] = defaultdict(dict)
    for round_, party, kind, reps in store.query(
            "SELECT round, party, kind, repetitions FROM messages WHERE session = ?", (session,)):
        if reps != repetitions:
            raise ProtocolViolation("round-record", f"messages round {round_} party {party}: {reps} repetitions, "
                                                    f"the session's {repetitions} expected")
        kinds[int(round_)][int(party)] = str(kind)
    decisions: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for round_, repetition, decision in store.query(
            "SELECT round, repetition, decision FROM decisions WHERE session = ? ORDER BY round, repetition",
            (session,)):
        decisions[int(round_)].append((int(repetition), int(decision)))
    recorded = set()
    for round_, status, *columns in store.query(
            "SELECT round, status, participants, abstained, absent FROM rounds WHERE session = ? ORDER BY round",
            (session,)):
        recorded.add(int(round_))
        lists = _party_lists(int(round_), columns)
        _check_lists(int(round_), int(parties), lists, kinds.get(int(round_), {}))
        allowed = _status(*(len(lists[column]) for column, _ in _LISTS))
        if status not in allowed:
            raise ProtocolViolation("round-record", f"rounds round {round_}: status {status!r}, its answers give "
                                                    f"{' or '.join(map(repr, allowed))}")
        _check_decisions(int(round_), str(status), int(repetitions), decisions.get(int(round_), []))
    unrecorded = sorted(set(decisions) - recorded)
    if unrecorded:
        raise ProtocolViolation("decisions", f"decisions round {unrecorded[0]}: no round record holds that round")
