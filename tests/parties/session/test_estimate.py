"""The up-front estimate of a live run: linear in parties and rounds, cheaper per party with shared
connections, checked inputs; printed before a large simulate."""

from __future__ import annotations

import pytest

from mpdp.parties.session.estimate import (
    BASE_BYTES,
    CONNECT_SECONDS,
    MESSAGES_PER_SECOND,
    PARTY_BYTES,
    REPETITION_SECONDS,
    ROUND_SECONDS,
    START_SECONDS,
    estimate_run,
)
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
