"""The closing line of ``mpdp party``: what the hosted parties did in the session, read from the host's answer
record (:class:`mpdp.parties.rounds.answer_record.AnswerRecord`), so a host whose every answer was an abstention
(``policy``: the observer asked for more releases than ``--max-repetitions``; ``budget-exhausted``) says so
instead of "answered"."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from mpdp.broker.messages import PartyMessage
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.numerics.cost import noun

__all__ = ["answers_summary"]


def answers_summary(record: Path, session: str, parties: Sequence[int]) -> str:
    """What ``parties`` sent in ``session`` by ``record``: the rounds answered, and of those the rounds where
    every hosted party abstained (no release), counted by reason.

    A round counts as released when any hosted party sent symbols (a message that is not a randomized-response
    answer, e.g. an mpc share, counts as a release)."""
    by_round: dict[int, list[str | None]] = {}
    with AnswerRecord(record) as opened:
        for party in parties:
            for index, payload in opened.answers(session, party).items():
                by_round.setdefault(index, []).append(_abstention(payload))
    rounds = len(by_round)
    silent = [reasons for reasons in by_round.values() if all(reason is not None for reason in reasons)]
    if not rounds:
        return "answered no round until the end"
    answered = f"{rounds} {noun(rounds, 'round')}"
    if not silent:
        return f"answered {answered} until the end"
    counts = Counter(reason for reasons in silent for reason in sorted(set(reasons), key=str))
    why = ", ".join(f"{reason}: {count}" for reason, count in sorted(counts.items(), key=lambda item: str(item[0])))
    if len(silent) == rounds:
        return f"abstained from all {answered} ({why}) until the end: nothing released"
    return f"answered {answered} until the end: abstained from {len(silent)} ({why}), released in {rounds - len(silent)}"


def _abstention(payload: bytes) -> str | None:
    """The reason of an abstention, None for a release."""
    try:
        message = PartyMessage.from_wire(payload)
    except ProtocolViolation:  # not a randomized-response answer (an mpc share)
        return None
    return message.reason if message.kind == "abstain" else None
