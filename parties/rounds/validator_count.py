"""How many validator processes a run may use (:mod:`mpdp.parties.session.validators`, the observer's scale-out),
checked with the run's settings before anything starts."""

from __future__ import annotations

from mpdp.broker.lockdown import MAX_VALIDATORS
from mpdp.protocols.errors import ParameterError

__all__ = ["MAX_VALIDATORS", "check_validators"]


def check_validators(validators: object, broker_kind: str, protocol: str) -> None:
    """Refuse a validator count the run cannot use.

    Args:
        broker_kind: the broker's kind (``mosquitto``, ``embedded``, ``external``).

    Raises:
        ParameterError: not an integer in [0, :data:`MAX_VALIDATORS`]; validators with the embedded
            broker (amqtt has no shared subscriptions) or with a protocol other than ``rr``. Behind the
            observer login of ``mpdp broker config`` each validator uses its own login (``broker config --validators N``).
    """
    if isinstance(validators, bool) or not isinstance(validators, int) or not 0 <= validators <= MAX_VALIDATORS:
        raise ParameterError("validators", validators, f"an integer in [0, {MAX_VALIDATORS}]")
    if validators and protocol != "rr":
        raise ParameterError("validators", validators, f"0 with protocol {protocol} (validators serve the rr observer)")
    if validators and broker_kind == "embedded":
        raise ParameterError("validators", validators, "0 with the embedded broker (no MQTT 5 shared "
                             "subscriptions): broker mosquitto or an external broker URL")
