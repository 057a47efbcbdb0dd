"""How many validator processes a run may use (:mod:`mpdp.parties.session.validators`, the observer's scale-out),
checked with the run's settings before anything starts."""

from __future__ import annotations

from mpdp.broker.lockdown import MAX_VALIDATORS, OBSERVER
from mpdp.protocols.errors import ParameterError

__all__ = ["MAX_VALIDATORS", "check_validators"]


def check_validators(validators: object, broker_kind: str, protocol: str, username: str | None = None) -> None:
    """Refuse a validator count the run cannot use.

    Args:
        broker_kind: the broker's kind (``mosquitto``, ``embedded``, ``external``); username: the observer's login.

    Raises:
        ParameterError: not an integer in [0, :data:`MAX_VALIDATORS`]; validators with the embedded
            broker (amqtt has no shared subscriptions), with a protocol other than ``rr``, or with the
            observer login of ``mpdp broker config`` (its listener gives every observer connection the one
            client id ``observer``: a validator would take the observer's session over).
    """
    if isinstance(validators, bool) or not isinstance(validators, int) or not 0 <= validators <= MAX_VALIDATORS:
        raise ParameterError("validators", validators, f"an integer in [0, {MAX_VALIDATORS}]")
    if validators and protocol != "rr":
        raise ParameterError("validators", validators, f"0 with protocol {protocol} (validators serve the rr observer)")
    if validators and username == OBSERVER:
        raise ParameterError("validators", validators, "0 with the observer login of `mpdp broker config` (its "
                             "listener gives every observer connection the client id 'observer'; see docs/deploy.md)")
    if validators and broker_kind == "embedded":
        raise ParameterError("validators", validators, "0 with the embedded broker (no MQTT 5 shared "
                             "subscriptions): use --broker mosquitto or an external broker URL")
