"""The reconnect window's bounds (seconds), in a module of their own so that the CLI's parser (``mpdp --help``)
can name them without importing pydantic, aiomqtt or the rest of the broker layer."""

from __future__ import annotations

__all__ = ["DEFAULT_RECONNECT_WINDOW", "MAX_RECONNECT_WINDOW"]

#: Seconds a client keeps reconnecting to a broker that went away, unless told otherwise: a deployed role
#: (``mpdp party``, ``mpdp observe``) rides out a broker restart or a network outage of minutes.
DEFAULT_RECONNECT_WINDOW = 600.0
#: The longest reconnect window accepted (seconds): a week.
MAX_RECONNECT_WINDOW = 7 * 86400.0
