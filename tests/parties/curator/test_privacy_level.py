"""The one (epsilon, delta) a central protocol's release has (central_privacy_level), shared by the curator
run, the mpc run and the deployed mpc coordinator: what each protocol releases, and its refusals."""

from __future__ import annotations

import math

import pytest

from mpdp.parties.ballots.central import central_privacy_level
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


@pytest.mark.parametrize(("function", "protocol", "level"), [
    ("majority", "curator", (0.7, 0.01)),
    ("majority", "mpc", (0.7, 0.01)),
    ("sum", "mpc", (0.7, 0.0)),  # the geometric mechanism at epsilon: pure DP whatever the parties' delta
    ("xor", "curator", (0.7, 0.01)),  # every binary symmetric function by its optimal central mechanism
    ("threshold:2", "curator", (0.7, 0.01)),
    ("and", "curator", (0.7, 0.01)),
])
def test_the_release_has_the_parties_one_level(function: str, protocol: str, level: tuple[float, float]) -> None:
    parties = [RandomizedResponse(0.7, 0.01)] * 4
    assert central_privacy_level(parties, function, protocol) == level


@pytest.mark.parametrize(("mechanisms", "function", "protocol", "message"), [
    ([RandomizedResponse(1.0)] * 3, "sum", "curator",
     "one of majority (or passed), and, or, xor (or parity), threshold:T for the curator protocol"),
    ([RandomizedResponse(1.0)] * 3, "table:0,1,1,1", "curator", "threshold:T for the curator protocol"),
    ([RandomizedResponse(1.0)] * 3, "xor", "mpc", "one of majority (or passed), sum for the mpc protocol"),
    ([RandomizedResponse(1.0), RandomizedResponse(2.0)], "majority", "mpc", "2 different (epsilon, delta) levels"),
    ([RandomizedResponse(math.inf)] * 3, "sum", "mpc", "a finite epsilon > 0 for the geometric mechanism"),
    ([RandomizedResponse(1.0)] * 3, "majority", "rr", "one of curator, mpc"),
])
def test_what_a_protocol_cannot_release_is_named(mechanisms: list[RandomizedResponse], function: str, protocol: str,
                                                 message: str) -> None:
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        central_privacy_level(mechanisms, function, protocol)
