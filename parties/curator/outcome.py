"""What a curator-protocol run returns: one :class:`ReleaseOutcome` per round in a
:class:`CuratorRunOutcome`. Only what was published is here: the released outputs, never the count."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np

__all__ = ["CuratorRunOutcome", "ReleaseOutcome"]


@dataclass(frozen=True, slots=True, eq=False)
class ReleaseOutcome:
    """One round of the curator protocol as published and recorded.

    Attributes:
        name: the round's name (a bill); index: the round index (0-based).
        participants: int64 (n,), ids of the parties whose sealed ballot was accepted, ascending.
        outputs: int64 (repetitions,), the curator's released outputs (0/1), independent draws of the
            optimal central mechanism for the same ballots (repetitions are a simulation device).
        messages_received, messages_rejected: accepted messages (ballots and abstentions); rejected
            ones while the round was open (any reason, e.g. ``decrypt``).
        abstained: int64, ids that abstained in the clear; absent: int64, ids not heard from.
        status: ``"complete"`` or ``"timeout"``.
    """

    name: str
    index: int
    participants: np.ndarray
    outputs: np.ndarray
    messages_received: int
    messages_rejected: int
    abstained: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    absent: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    status: Literal["complete", "timeout"] = "complete"


@dataclass(frozen=True, slots=True, eq=False)
class CuratorRunOutcome:
    """A whole curator-protocol run (fields as :class:`mpdp.parties.rounds.outcome.RunOutcome`, rounds released)."""

    broker_kind: Literal["mosquitto", "embedded", "external"]
    broker_url: str
    wall_time: float
    rounds: tuple[ReleaseOutcome, ...]
    session: str = ""
    store_path: Path | None = None
    seed_entropy: int | None = None
