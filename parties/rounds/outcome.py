"""What a run returns, for every protocol: one :class:`RoundOutcome` per round inside a :class:`RunOutcome`.

Randomized response (:mod:`mpdp.parties.rr`): ``decisions`` are the observer's, ``symbols`` what the
participants sent. Curator (:mod:`mpdp.parties.curator`): ``decisions`` are the curator's released outputs
and ``symbols`` is None (ballots are sealed; only the release is published, never the count)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.accounting import Spent
from mpdp.parties.rounds.ranges import format_ranges

__all__ = ["ABSTAIN_BUDGET_EXHAUSTED", "ABSTAIN_POLICY", "NO_DECISION", "RoundOutcome", "RoundStatus", "RunOutcome",
           "UNDECIDED", "double_release_text", "failed_rounds_text", "lost_answers", "lost_answers_text",
           "no_answers_text"]

#: How a round closed: every roster party answered; the round timeout passed first; it passed with no
#: answer at all (``failed``); or every party heard from abstained (``no-answers``: no party released).
#: The last two have nothing to decide from: their decisions are -1, never data.
RoundStatus = Literal["complete", "timeout", "failed", "no-answers"]
#: The statuses of rounds that were not decided (nothing to decide from).
UNDECIDED: tuple[RoundStatus, ...] = ("failed", "no-answers")

#: The decision recorded for each repetition of an undecided round (:data:`UNDECIDED`: nothing was decided).
NO_DECISION = -1

#: The abstention reason of a party whose answer would take it beyond its privacy budget.
ABSTAIN_BUDGET_EXHAUSTED = "budget-exhausted"
#: The abstention reason of a party asked for more repetitions than its own policy allows.
ABSTAIN_POLICY = "policy"


@dataclass(frozen=True, slots=True, eq=False)
class RoundOutcome:
    """One round as the round engine (:mod:`mpdp.parties.rounds.engine`) closed and recorded it.

    Attributes:
        name: the round's name (a bill).
        participants: int64 (n,), the ids of the parties whose answer counts (symbols, or a sealed
            ballot), ascending.
        symbols: uint8 (repetitions, n): ``symbols[r, j]`` is participant j's symbol in repetition r;
            None for a protocol whose parties send no symbols in the clear (the curator).
        decisions: int64 (repetitions,): the round's result for each repetition: the observer's
            decision rule's estimate of f, or the curator's released output (0/1); :data:`NO_DECISION`
            (-1) throughout for a ``failed`` round.
        messages_received: messages accepted for this round (symbols and abstentions).
        messages_rejected: messages rejected while this round was open (any reason).
        index: the round index (0-based).
        abstained: int64, ids of parties that abstained (said so on the wire).
        absent: int64, ids of parties the observer did not hear from before the round timeout.
        status: ``"complete"`` (every party answered), ``"timeout"`` (some absent), ``"failed"`` (no
            answer at all: every party absent, e.g. the broker or every host was down) or ``"no-answers"``
            (every party heard from abstained: no release to decide from; ``reasons`` says why).
        exhausted: int64, the ids in ``abstained`` whose reason is :data:`ABSTAIN_BUDGET_EXHAUSTED`
            (out of privacy budget; the others did not vote).
        reasons: abstention reason -> the ids of the parties that abstained with it, ascending.
        double_released: int64, one entry per second, different, validly signed answer with symbols a
            party sent to this round (a double release: each is one more release of its randomized
            response, charged by :func:`mpdp.parties.rounds.privacy.ledgers_from_rounds`), ascending.
        party_decisions: int64 (n, repetitions): row j = participant j's own decisions of f
            (002 eqs. (2), (4)), -1 where its decision message never arrived; None when the run did
            not ask the parties to decide.
        lost: int64, the ids in ``absent`` whose answer was expected but never arrived: their host reported
            ready and the round received another of its parties' answers (:func:`lost_answers`), so the host
            was answering: the answer was lost on the way (a broker that dropped it, a client in the
            validators' share group that took it) or the host died mid-round. Ascending; empty for a round
            loaded from a store (not recorded there).
    """

    name: str
    participants: NDArray[np.int64]
    symbols: NDArray[np.uint8] | None
    decisions: NDArray[np.int64]
    messages_received: int
    messages_rejected: int
    index: int = 0
    abstained: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    absent: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    status: RoundStatus = "complete"
    exhausted: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    party_decisions: NDArray[np.int64] | None = None
    double_released: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    reasons: dict[str, list[int]] = field(default_factory=dict)
    lost: NDArray[np.int64] = field(default_factory=lambda: np.zeros(0, dtype=np.int64))


def lost_answers(hosts: Iterable[Sequence[int]], heard: Collection[int]) -> NDArray[np.int64]:
    """The parties whose answer to a round was expected but not received: those of a host (``hosts``: each
    ready host's party ids) of which ``heard`` (the parties whose answer or abstention arrived) holds
    another party, but not them. A host none of whose parties was heard is gone (reported as such), not a
    loss. Returns int64 ids, ascending."""
    lost: set[int] = set()
    for parties in hosts:
        missing = {int(p) for p in parties if p not in heard}
        if len(missing) < len(parties):
            lost |= missing
    return np.array(sorted(lost), dtype=np.int64)


def lost_answers_text(rounds: Sequence[RoundOutcome]) -> str | None:
    """One line naming, per round, the parties whose answers were lost (:attr:`RoundOutcome.lost`), or None."""
    hit = [r for r in rounds if r.lost.size]
    if not hit:
        return None
    where = "; ".join(f"round {r.index} ({r.name}): parties {format_ranges(r.lost.tolist())}" for r in hit[:10])
    more = f"; and {len(hit) - 10} more round(s)" if len(hit) > 10 else ""
    total = sum(r.lost.size for r in hit)
    return (f"LOST ANSWERS: {total} answer(s) expected but never received (their host answered the round for "
            f"other parties; recorded absent): {where}{more}; a broker that dropped them, a client in the "
            f"validators' share group, or a host that died mid-round")


def double_release_text(rounds: Sequence[RoundOutcome]) -> str | None:
    """One line naming every party that released twice in ``rounds`` (round index and name: party ids), or
    None if none did."""
    hit = [r for r in rounds if r.double_released.size]
    if not hit:
        return None
    parties = sorted({int(p) for r in hit for p in r.double_released})
    where = "; ".join(f"round {r.index} ({r.name}): parties {', '.join(map(str, sorted(set(r.double_released.tolist()))))}"
                      for r in hit[:10])
    more = f"; and {len(hit) - 10} more round(s)" if len(hit) > 10 else ""
    return (f"DOUBLE RELEASE: {len(parties)} part{'y' if len(parties) == 1 else 'ies'} sent two different validly "
            f"signed answers to one round (two hosts serve them, or a host lost its answer record; charged to "
            f"their privacy): {where}{more}")


def failed_rounds_text(rounds: Sequence[RoundOutcome]) -> str | None:
    """One line naming the ``failed`` rounds among ``rounds`` (index and name), or None if none failed."""
    failed = [r for r in rounds if r.status == "failed"]
    if not failed:
        return None
    names = ", ".join(f"{r.index} ({r.name})" for r in failed[:10])
    more = f" and {len(failed) - 10} more" if len(failed) > 10 else ""
    return (f"{len(failed)} of {len(rounds)} round(s) failed with no answer at all (nothing was decided, their "
            f"decisions are recorded as -1): {names}{more}")


def no_answers_text(rounds: Sequence[RoundOutcome]) -> str | None:
    """One line naming the ``no-answers`` rounds among ``rounds`` (index, name, the parties' abstention
    reasons), or None if there are none."""
    empty = [r for r in rounds if r.status == "no-answers"]
    if not empty:
        return None
    names = ", ".join(f"{r.index} ({r.name}: " + "; ".join(f"{reason} {format_ranges(ids)}"
                                                          for reason, ids in sorted(r.reasons.items())) + ")"
                      for r in empty[:10])
    more = f" and {len(empty) - 10} more" if len(empty) > 10 else ""
    return (f"{len(empty)} of {len(rounds)} round(s) had no answer to decide from: every party heard from abstained "
            f"(nothing was decided, their decisions are recorded as -1; abstention reason and parties): {names}{more}")


@dataclass(frozen=True, slots=True, eq=False)
class RunOutcome:
    """A whole run, of either protocol.

    Attributes:
        protocol: ``"rr"`` (randomized response, the central observer decides) or ``"curator"``.
        broker_kind: ``"mosquitto"``, ``"embedded"`` or ``"external"``.
        broker_url: ``mqtt://host:port`` of the broker used.
        wall_time: seconds from the start of :func:`mpdp.parties.session.runner.run` to the end of the last round.
        rounds: one :class:`RoundOutcome` per round, in order.
        session: the session id; store_path: the SQLite transcript store.
        seed_entropy: the root seed actually used (the given seed, or OS entropy) so that a
            simulation can be repeated; None in deployment mode.
        spent: one :class:`mpdp.analysis.Spent` per party, the privacy it spent over the rounds it answered
            (every repetition one release), by the exact optimum at ``delta_slack`` and by basic
            composition; computed from the recorded transcript (:func:`mpdp.parties.rounds.privacy.ledgers_from_rounds`);
            empty for the curator protocol (the curator, not the parties, releases).
        delta_slack: the delta_tilde of ``spent``.
    """

    broker_kind: Literal["mosquitto", "embedded", "external"]
    broker_url: str
    wall_time: float
    rounds: tuple[RoundOutcome, ...]
    protocol: str = "rr"
    session: str = ""
    store_path: Path | None = None
    seed_entropy: int | None = None
    spent: tuple[Spent, ...] = ()
    delta_slack: float = 0.0
