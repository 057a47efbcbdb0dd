"""The reconnect backoff: full jitter under a doubling ceiling capped at 5 s, cut at the window's end,
drawn from the random source it is given; and the process's one-line-per-change outage log."""

from __future__ import annotations

import logging
import random

import pytest

from mpdp.broker.transport.backoff import CAP_DELAY, FIRST_DELAY, Backoff
from mpdp.broker.transport.outage import Outages
from mpdp.protocols.errors import ParameterError


def _delays(backoff: Backoff, n: int) -> list[float]:
    out = []
    for _ in range(n):
        backoff.attempted()
        delay = backoff.delay()
        assert delay is not None
        out.append(delay)
    return out


def test_the_delays_are_full_jitter_under_a_doubling_ceiling_capped_at_five_seconds() -> None:
    delays = _delays(Backoff(3600.0, random.Random(7)), 12)
    ceilings = [min(CAP_DELAY, FIRST_DELAY * 2**n) for n in range(12)]
    assert ceilings[:3] == [0.1, 0.2, 0.4] and ceilings[-1] == 5.0
    assert all(0 <= d <= c for d, c in zip(delays, ceilings, strict=True))
    # full jitter: each delay is the ceiling times a uniform draw of the given source, no more, no less
    draws = random.Random(7)
    assert delays == [draws.uniform(0.0, c) for c in ceilings]


def test_the_same_seed_draws_the_same_delays_and_the_global_state_is_untouched() -> None:
    random.seed(123)
    before = random.getstate()
    first, second = _delays(Backoff(60.0, random.Random(1)), 8), _delays(Backoff(60.0, random.Random(1)), 8)
    assert first == second
    assert _delays(Backoff(60.0, random.Random(2)), 8) != first
    assert random.getstate() == before


def test_the_mean_delay_at_the_cap_is_half_the_cap() -> None:
    """Seeded: 2,000 draws from [0, 5] have mean 2.5 and sd 5/sqrt(12)/sqrt(2000) = 0.032; 0.15 is > 4.6 sd."""
    backoff = Backoff(1e6, random.Random(11))
    delays = _delays(backoff, 2020)[20:]  # past the doubling: every ceiling is the cap
    assert abs(sum(delays) / len(delays) - CAP_DELAY / 2) < 0.15
    assert max(delays) <= CAP_DELAY and min(delays) >= 0


def test_no_delay_reaches_past_the_window() -> None:
    backoff = Backoff(0.05, random.Random(3), first=1.0, cap=1.0)
    backoff.attempted()
    delay = backoff.delay()
    assert delay is not None and delay <= 0.05
    backoff.started -= 1.0  # the window is over
    assert backoff.remaining == 0 and backoff.delay() is None
    assert Backoff(0.0, random.Random(3)).delay() is None  # window 0: one attempt, no retry


@pytest.mark.parametrize("window, first, cap", [(-1.0, 0.1, 5.0), (float("nan"), 0.1, 5.0), (1.0, 0.0, 5.0),
                                                (1.0, 6.0, 5.0)])
def test_bad_backoff_values_are_refused(window: float, first: float, cap: float) -> None:
    with pytest.raises(ParameterError):
        Backoff(window, random.Random(0), first=first, cap=cap)


def test_a_process_with_many_connections_logs_one_loss_and_one_return(caplog: pytest.LogCaptureFixture) -> None:
    outages, url = Outages(), "mqtt://127.0.0.1:1"
    caplog.set_level(logging.DEBUG, logger="mpdp.transport")
    for i in range(200):
        outages.lost(url, f"party-{i}", "connection refused", 600.0)
    assert outages.ongoing(url)
    for i in range(199):
        outages.restored(url, f"party-{i}", attempts=1 + i % 7)
    outages.restored(url, "party-199", attempts=2)
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert warnings[0] == f"lost the connection to the MQTT broker at {url} (connection refused); reconnecting " \
                          "for up to 10 min"
    assert len(warnings) == 2 and warnings[1].startswith(f"reconnected to the MQTT broker at {url} after ")
    assert warnings[1].endswith(" s (200 connections, at most 7 attempts each)")
    assert sum(r.levelno == logging.DEBUG for r in caplog.records) == 400  # each connection's own, at DEBUG
    assert not outages.ongoing(url)


def test_connections_that_give_up_end_the_outage_without_a_return_line(caplog: pytest.LogCaptureFixture) -> None:
    outages, url = Outages(), "mqtt://127.0.0.1:2"
    caplog.set_level(logging.WARNING, logger="mpdp.transport")
    outages.lost(url, "a", "gone", 5.0)
    outages.lost(url, "b", "gone", 5.0)
    outages.restored(url, "a", attempts=3)
    assert outages.ongoing(url)  # b is still away: no return line yet
    outages.abandoned(url, "b")
    outages.abandoned(url, "never-lost")  # a connection closed while connected: nothing to note
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2 and lines[1].endswith(" s (3 attempts)")  # one came back: counted as one
    outages.lost(url, "c", "gone", 5.0)
    outages.abandoned(url, "c")  # gave up, none came back: only the loss line (its error says the rest)
    assert [r.getMessage()[:8] for r in caplog.records] == ["lost the", "reconnec", "lost the"]
