"""Where the MQTT broker is: ``--broker URL`` or ``MPDP_BROKER_URL``, validated at the edge.

Accepted values (case-insensitive keywords)::

    (nothing)              start our own broker: mosquitto if the binary is found, else embedded
    auto                   the same, said explicitly
    mosquitto              start a mosquitto child process (error if the binary is missing)
    embedded               start the embedded amqtt broker in this process
    mqtt://HOST[:PORT][?protocol=3.1.1|5&timeout=SECONDS]
                           an external broker that is already running (port 1883 by default)

The command line wins over the environment. Malformed values raise :class:`ParameterError` naming the
value and what is allowed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, urlsplit

from pydantic import BaseModel, ConfigDict, Field

from mpdp.protocols.errors import ParameterError

__all__ = ["ENV_VAR", "BrokerSettings", "find_mosquitto"]

#: Environment variable read when no ``--broker`` is given.
ENV_VAR = "MPDP_BROKER_URL"
_KEYWORDS = ("auto", "mosquitto", "embedded")
_ALLOWED = "'auto', 'mosquitto', 'embedded' or mqtt://HOST[:PORT][?protocol=3.1.1|5&timeout=SECONDS]"


def find_mosquitto() -> Path | None:
    """The mosquitto binary on PATH or in /usr/sbin, or None."""
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    return Path(found) if found else None


class BrokerSettings(BaseModel):
    """Which broker a run uses and how clients talk to it.

    Attributes:
        kind: ``auto`` (start mosquitto if found, else embedded), ``mosquitto``, ``embedded`` or
            ``external`` (connect to ``host:port``).
        host, port: the external broker's address (None unless ``kind == "external"``).
        protocol: the MQTT version clients speak; the embedded amqtt broker supports ``3.1.1`` only.
        timeout: seconds for connecting and for every acknowledgement from the broker.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["auto", "mosquitto", "embedded", "external"] = "auto"
    host: str | None = None
    port: int | None = Field(default=None, ge=1, le=65535)
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    timeout: float = Field(default=10.0, gt=0, le=3600)

    @classmethod
    def from_url(cls, url: str | None = None, environ: Mapping[str, str] | None = None) -> BrokerSettings:
        """Parse ``--broker URL``; if None, the ``MPDP_BROKER_URL`` variable; if unset, ``auto``.

        Raises:
            ParameterError: an unknown keyword, a scheme other than ``mqtt``, a bad port or query key.
        """
        env = os.environ if environ is None else environ
        name = "--broker"
        if url is None or not url.strip():
            url, name = env.get(ENV_VAR, "").strip() or "auto", ENV_VAR
        text = url.strip()
        if text.lower() in _KEYWORDS:
            return cls(kind=text.lower())
        parts = urlsplit(text)
        if parts.scheme.lower() != "mqtt" or not parts.hostname:
            raise ParameterError(name, url, _ALLOWED)
        if parts.path not in ("", "/") or parts.username or parts.fragment:
            raise ParameterError(name, url, _ALLOWED, hint="no path, user or fragment")
        try:
            port = 1883 if parts.port is None else parts.port
        except ValueError:
            raise ParameterError(name, url, _ALLOWED, hint="the port must be 1..65535") from None
        query = parse_qs(parts.query, keep_blank_values=True)
        unknown = sorted(set(query) - {"protocol", "timeout"})
        if unknown:
            raise ParameterError(name, url, _ALLOWED, hint=f"unknown query key {unknown[0]!r}")
        options: dict[str, object] = {key: values[-1] for key, values in query.items()}
        try:
            return cls(kind="external", host=parts.hostname, port=port, **options)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ParameterError(name, url, _ALLOWED, hint=_first_error(exc)) from None

    @property
    def url(self) -> str:
        """The settings written back as a ``--broker`` value."""
        if self.kind != "external":
            return self.kind
        return f"mqtt://{url_host(self.host)}:{self.port}?protocol={self.protocol}&timeout={self.timeout:g}"


def url_host(host: str | None) -> str:
    """``host`` as the host part of a URL: an IPv6 address in brackets (``::1`` -> ``[::1]``, RFC 3986)."""
    host = host or ""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _first_error(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"
    return str(exc)
