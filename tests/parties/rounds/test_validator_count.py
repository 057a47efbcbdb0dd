"""parties.rounds.validator_count: the validator counts a run cannot use are refused, naming why."""

import pytest

from mpdp.parties.rounds.validator_count import check_validators
from mpdp.protocols.errors import ParameterError


@pytest.mark.parametrize("count, kind, protocol, allowed", [
    (-1, "mosquitto", "rr", "an integer in [0, 64]"),
    (65, "external", "rr", "an integer in [0, 64]"),
    (True, "mosquitto", "rr", "an integer in [0, 64]"),
    (2, "embedded", "rr", "0 with the embedded broker"),
    (1, "mosquitto", "curator", "0 with protocol curator"),
])
def test_check_validators_refuses_what_a_run_cannot_use(count: object, kind: str, protocol: str,
                                                        allowed: str) -> None:
    with pytest.raises(ParameterError, match="validators") as info:
        check_validators(count, kind, protocol)
    assert allowed in str(info.value)


def test_check_validators_takes_zero_anywhere_and_n_on_mosquitto() -> None:
    for kind in ("embedded", "mosquitto", "external"):
        check_validators(0, kind, "curator")
    check_validators(64, "external", "rr")
