"""The broker of a deployed role (``mpdp party``, ``mpdp observe``), and of a simulation's parties
(``mpdp simulate --party-broker``): always one that is already running.

A simulation may start its own broker; a deployment's processes live on different hosts and meet at a
broker they did not start, so these commands accept only a broker URL (``--broker`` or
``MPDP_BROKER_URL``: mqtt, mqtts, ws or wss, with a login and TLS files; :mod:`mpdp.broker.settings`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import external_endpoint
from mpdp.broker.settings import ENV_VAR, BrokerSettings
from mpdp.protocols.errors import ParameterError

__all__ = ["SIMULATION_MIN_WINDOW", "deployment_endpoint", "party_broker_settings", "simulation_window"]

#: Seconds: the least reconnect window of a simulation's clients (:func:`simulation_window`).
SIMULATION_MIN_WINDOW = 60.0


def deployment_endpoint(url: str | None, environ: Mapping[str, str] | None = None, **login: Any) -> BrokerEndpoint:
    """The endpoint of ``--broker URL`` (or ``MPDP_BROKER_URL``), which must name a running broker.

    Args:
        login: ``cafile``, ``cert``, ``key``, ``protocol``, ``reconnect_window`` of
            :meth:`mpdp.broker.settings.BrokerSettings.from_url` (None: from the environment; the window's
            default :data:`mpdp.broker.reconnect_window.DEFAULT_RECONNECT_WINDOW`, minutes: a deployed role rides
            out a broker restart).

    Raises:
        ParameterError: a malformed URL or login, or none / ``auto`` / ``embedded`` / ``mosquitto`` (a
            deployed role does not start a broker).
    """
    env = os.environ if environ is None else environ
    endpoint = external_endpoint(BrokerSettings.from_url(url, env, **login))
    if endpoint is None:
        given = ("--broker", url) if url and url.strip() else (ENV_VAR, env.get(ENV_VAR, "") or "(unset)")
        raise ParameterError(
            *given, "mqtt|mqtts|ws|wss://HOST[:PORT] of a running broker "
            f"(--broker or {ENV_VAR}); the deployed roles meet at a broker they do not start",
        )
    return endpoint


def party_broker_settings(url: str, option: str = "party_broker") -> BrokerSettings:
    """The broker a simulation's parties attach to (``mpdp simulate --party-broker URL``): a running one.

    The observer stays on ``--broker``; the parties' workers connect to ``url``, typically an edge broker
    bridged to (or clustered with) the observer's, so every message crosses the bridge (docs/deploy.md).
    The environment is not read: the option is given or there is no party broker.

    Raises:
        ParameterError: (named ``option``) a malformed URL, or a keyword (``auto``, ``embedded``,
            ``mosquitto``): the parties' broker is one the run does not start.
    """
    try:
        settings = BrokerSettings.from_url(url, {})
    except ParameterError as exc:
        raise ParameterError(option, url, exc.allowed, exc.hint) from None
    if settings.kind != "external":
        raise ParameterError(option, url, "mqtt://HOST[:PORT] of a running broker the parties attach to "
                             "(an edge broker bridged to --broker's, or another node of its cluster)")
    return settings


def simulation_window(round_timeout: float) -> float:
    """The reconnect window (seconds) of a simulation's clients when none is given: sized to the run,
    ``max(60 s, round_timeout)``, so that a broker back within a round's time loses the run nothing,
    and one gone for good ends it in about a round's time rather than the deployed roles' minutes."""
    return max(SIMULATION_MIN_WINDOW, round_timeout)
