"""The run's progress bar: a resumed run starts at what its store holds (it showed round 0 until the workers
were ready), and its rate and time left count only the messages received since it started."""

from __future__ import annotations

import numpy as np

from mpdp.parties.session.datasets import Dataset
from mpdp.parties.session.progress import Progress

#: 40 parties, 6 rounds: 240 messages in all.
DATA = Dataset("votes", tuple(f"round-{i + 1}" for i in range(6)), np.ones((40, 6), dtype=np.int8), ("",) * 40)


class Clock:
    """Seconds set by the test."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_resumed_run_starts_at_its_recorded_rounds_and_estimates_only_what_is_left() -> None:
    clock = Clock()
    bar = Progress(DATA, enabled=False, rounds_done=3, messages_done=120, clock=clock)
    assert bar.state == ("round 4/6", 120, None)  # 3 rounds recorded, the 4th under way; no rate measured yet
    for second, messages in ((1.0, 140), (2.0, 160)):  # 20 messages a second since the start
        clock.now = second
        bar.update(3, messages)
    description, done, left = bar.state
    assert (description, done) == ("round 4/6", 160)
    assert left == (240 - 160) / 20  # 4 s: the 80 messages left at 20 a second
    clock.now = 3.0
    bar.update(4, 180)
    assert bar.state == ("round 5/6", 180, (240 - 180) / 20)
    bar.update(6, 240)
    assert bar.state[:2] == ("round 6/6", 240)  # every round done: the last, not 7/6


def test_a_fresh_run_starts_at_round_one_not_zero() -> None:
    """The newcomer saw ``round 0/5``: rounds are counted from 1, the bar names the round under way."""
    clock = Clock()
    bar = Progress(DATA, enabled=False, clock=clock)
    assert bar.state == ("round 1/6", 0, None)
    for second, messages in ((1.0, 20), (2.0, 40)):
        clock.now = second
        bar.update(1, messages)
    assert bar.state == ("round 2/6", 40, (240 - 40) / 20)
