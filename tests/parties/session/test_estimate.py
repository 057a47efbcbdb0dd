"""The up-front estimate of a live run: linear in parties and rounds, cheaper per party with shared
connections, checked inputs; printed before a large simulate."""

from __future__ import annotations

import math

import pytest

from mpdp.parties.session.estimate import (
    AUTO_SETUP_SECONDS,
    BASE_BYTES,
    CONNECT_SECONDS,
    FD_HEADROOM,
    MESSAGES_PER_SECOND,
    PARTY_BYTES,
    REPETITION_SECONDS,
    ROUND_SECONDS,
    START_SECONDS,
    choose_connections,
    estimate_run,
    ready_timeout_floor,
    resolve_connections,
    round_timeout_floor,
)
from mpdp.parties.session.sizing import SESSION_TIME_LIMIT, session_cost
from mpdp.protocols.errors import ParameterError


def test_the_estimate_is_the_documented_linear_model() -> None:
    got = estimate_run(5000, 3, 1, "per-party")
    seconds = START_SECONDS + 5000 * CONNECT_SECONDS["per-party"] + 3 * ROUND_SECONDS + 3 * 5000 * (
        1 / MESSAGES_PER_SECOND["per-party"] + REPETITION_SECONDS)
    assert got.seconds == pytest.approx(seconds, rel=1e-12)
    assert got.peak_bytes == BASE_BYTES + 5000 * PARTY_BYTES["per-party"]
    # measured by benchmarks/bench_many_parties.py (loaded 2-core machine): 5,000 parties x 3 rounds took
    # 60.7 s and 647 MB per party, 38.3 s and 515 MB per worker; the model stays within 2x of that
    assert 60.7 / 2 < got.seconds < 2 * 60.7 and 647 / 2 < got.peak_bytes / 2**20 < 2 * 647
    shared = estimate_run(5000, 3, 1, "per-worker")
    assert 38.3 / 2 < shared.seconds < 2 * 38.3 and 515 / 2 < shared.peak_bytes / 2**20 < 2 * 515
    # mpdp sweep --live --parties 5 (one point, one repetition a round): 10 rounds in 8.8 s, 200 in 30.2 s
    assert 8.8 / 2 < estimate_run(5, 10, 1).seconds < 2 * 8.8 and 30.2 / 2 < estimate_run(5, 200, 1).seconds < 2 * 30.2
    # mpdp simulate --parties 100000 --rounds 1 --connections per-worker (load 8-10): 372 s on the wire, 1,191 MB
    huge = estimate_run(100_000, 1, 1, "per-worker")
    assert 372 / 2 < huge.seconds < 2 * 372 and 1191 / 2 < huge.peak_bytes / 2**20 < 2 * 1191


def test_the_round_timeout_floor_is_thrice_a_rounds_messages() -> None:
    per_message = 1 / MESSAGES_PER_SECOND["per-worker"] + REPETITION_SECONDS
    assert round_timeout_floor(100_000, 1, "per-worker") == pytest.approx(
        3 * (ROUND_SECONDS + 100_000 * per_message), rel=1e-12)
    assert round_timeout_floor(435, 200) < 60.0  # the House keeps the default 60 s


def test_the_up_front_check_uses_the_printed_estimate() -> None:
    cost, printed = session_cost(100_000, 1, 1, "per-worker"), estimate_run(100_000, 1, 1, "per-worker")
    assert (cost.seconds, cost.memory_bytes) == (printed.seconds, printed.peak_bytes)
    assert cost.seconds < SESSION_TIME_LIMIT  # 10^5 parties over 2 workers, one round: minutes, allowed
    assert session_cost(2_000_000, 1).seconds > SESSION_TIME_LIMIT  # refused without --time-limit


def test_describe_scales_its_unit() -> None:
    assert "GB peak memory" in estimate_run(10, 1, 1).describe()
    assert " s on the wire" in estimate_run(10, 1, 1).describe()
    assert " h on the wire" in estimate_run(100_000, 100, 200).describe()


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"parties": 0}, "parties"), ({"rounds": 1.5}, "rounds"), ({"repetitions": True}, "repetitions"),
    ({"connections": "per-host"}, "connections"),
])
def test_bad_input_is_named(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"parties": 10, "rounds": 2, "repetitions": 1, **kwargs}
    with pytest.raises(ParameterError, match=name):
        estimate_run(**args)  # type: ignore[arg-type]


def test_the_ready_wait_follows_the_start_up_estimate() -> None:
    """60 s for small runs; 3x the estimated start-up (6 s + the per-party connect cost) beyond: 10^5
    parties with a connection each get 3 (6 + 320) = 978 s (a fixed 60 s failed them, issue 23)."""
    assert ready_timeout_floor(1000) == 60.0
    assert ready_timeout_floor(100_000) == pytest.approx(3 * (START_SECONDS + 100_000 * CONNECT_SECONDS["per-party"]))
    assert ready_timeout_floor(100_000) == pytest.approx(978.0)
    assert ready_timeout_floor(100_000, "per-worker") == pytest.approx(3 * (6.0 + 100_000 * 0.7e-3))
    with pytest.raises(ParameterError, match="connections"):
        ready_timeout_floor(10, "per-host")


def test_auto_keeps_a_connection_per_party_up_to_the_setup_bound_then_shares() -> None:
    """The threshold is where the per-party start-up estimate crosses AUTO_SETUP_SECONDS (independently:
    solve START + k x connect = bound for k), checked one party either side, with no file-descriptor bound."""
    edge = math.floor((AUTO_SETUP_SECONDS - START_SECONDS) / CONNECT_SECONDS["per-party"])
    assert 10_000 < edge < 20_000  # about 16,900 with the measured constants, as the docstring says
    assert choose_connections(edge, nofile=10**9)[0] == "per-party"
    assert choose_connections(edge + 1, nofile=10**9)[0] == "per-worker"
    assert "set up" in choose_connections(edge + 1, nofile=10**9)[1]
    assert choose_connections(100_000)[0] == "per-worker"  # the run: 10^5 parties
    assert choose_connections(5) == ("per-party", f"5 parties: per-party up to {edge:,} (their set-up estimated "
                                                  "within 60 s)")


def test_auto_shares_when_the_sockets_exceed_the_file_descriptor_limit() -> None:
    limit = 1000
    assert choose_connections(limit - FD_HEADROOM, nofile=limit)[0] == "per-party"
    choice, why = choose_connections(limit - FD_HEADROOM + 1, nofile=limit)
    assert choice == "per-worker" and "file-descriptor limit 1000" in why


def test_resolve_keeps_what_was_asked_for_and_refuses_others() -> None:
    assert resolve_connections("per-party", 100_000, nofile=10**6) == ("per-party", "asked for")
    assert resolve_connections("per-worker", 5) == ("per-worker", "asked for")
    assert resolve_connections("auto", 5)[0] == "per-party"
    with pytest.raises(ParameterError, match="per-host"):
        resolve_connections("per-host", 5)
    with pytest.raises(ParameterError, match="parties"):
        choose_connections(0)


def test_per_party_asked_for_past_the_file_descriptor_limit_is_refused_naming_the_remedies() -> None:
    """auto's bound (k + FD_HEADROOM <= limit, checked one party either side) refuses an explicit per-party at
    once, instead of the workers' readiness failing after 60 s; per-worker has no such bound."""
    limit = 1000
    fits = limit - FD_HEADROOM  # 744 sockets + 256 = 1000
    assert resolve_connections("per-party", fits, nofile=limit) == ("per-party", "asked for")
    with pytest.raises(ParameterError) as refused:
        resolve_connections("per-party", fits + 1, nofile=limit)
    assert str(refused.value) == (
        "cannot run with connections per-party: a socket for each of 745 parties would exceed the "
        "file-descriptor limit 1000 (it needs about 1001); use --connections per-worker "
        "(connections='per-worker'), or raise the limit (ulimit -n 1001) and run again")
    assert resolve_connections("per-worker", 100, nofile=64) == ("per-worker", "asked for")
    assert resolve_connections("auto", 100, nofile=64) == (
        "per-worker", "a socket for each of 100 parties would exceed the file-descriptor limit 64")
    with pytest.raises(ParameterError, match="parties"):
        resolve_connections("per-party", 0, nofile=limit)
