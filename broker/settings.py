"""Where the MQTT broker is and how to log in: ``--broker URL`` or ``MPDP_BROKER_URL``, validated at the edge.

Accepted values (case-insensitive keywords)::

    (nothing)              start our own broker: mosquitto if the binary is found, else embedded
    auto                   the same, said explicitly
    mosquitto              start a mosquitto child process (error if the binary is missing)
    embedded               start the embedded amqtt broker in this process
    SCHEME://[USER[:PASSWORD]@]HOST[:PORT][/PATH][?protocol=3.1.1|5&timeout=SECONDS]
                           an external broker that is already running; SCHEME is
                           mqtt (TCP, port 1883), mqtts (TLS, 8883), ws (WebSocket, 80) or
                           wss (WebSocket over TLS, 443); a PATH only for ws/wss (default /mqtt)

Credentials and TLS files may come from the environment instead of the command line (the command line
wins): ``MPDP_BROKER_USERNAME``, ``MPDP_BROKER_PASSWORD`` (or ``MPDP_BROKER_PASSWORD_FILE``, a file
holding it, as container secrets are given), ``MPDP_BROKER_CAFILE``, ``MPDP_BROKER_CERT``,
``MPDP_BROKER_KEY``. A password is never printed: :attr:`BrokerSettings.url` and every message leave it
out, and its repr is ``'**********'`` (pydantic ``SecretStr``). Malformed values raise
:class:`ParameterError` naming the value (password redacted) and what is allowed.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qs, unquote, urlsplit

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW, MAX_RECONNECT_WINDOW
from mpdp.protocols.errors import ParameterError

__all__ = ["DEFAULT_PORTS", "ENV_VAR", "PASSWORD_ENV", "PASSWORD_FILE_ENV", "TLS_ENV", "USERNAME_ENV", "BrokerSettings", "find_mosquitto",
           "redact_url", "url_host"]

#: Environment variable read when no ``--broker`` is given.
ENV_VAR = "MPDP_BROKER_URL"
#: Environment variables of the login: ``--broker``'s ``user:password@`` wins over them.
USERNAME_ENV, PASSWORD_ENV = "MPDP_BROKER_USERNAME", "MPDP_BROKER_PASSWORD"
#: Environment variable naming a file that holds the password (used when no password is given otherwise).
PASSWORD_FILE_ENV = "MPDP_BROKER_PASSWORD_FILE"
#: Environment variables of the TLS files: option -> variable (``--cafile`` etc. win over them).
TLS_ENV = {"cafile": "MPDP_BROKER_CAFILE", "cert": "MPDP_BROKER_CERT", "key": "MPDP_BROKER_KEY"}
#: The port of each URL scheme when the URL names none.
DEFAULT_PORTS = {"mqtt": 1883, "mqtts": 8883, "ws": 80, "wss": 443}
Scheme = Literal["mqtt", "mqtts", "ws", "wss"]
_KEYWORDS = ("auto", "mosquitto", "embedded")
_ALLOWED = ("'auto', 'mosquitto', 'embedded' or mqtt|mqtts|ws|wss://[USER[:PASSWORD]@]HOST[:PORT][/PATH]"
            "[?protocol=3.1.1|5&timeout=SECONDS]")


def find_mosquitto() -> Path | None:
    """The mosquitto binary on PATH or in /usr/sbin, or None."""
    found = shutil.which("mosquitto") or shutil.which("mosquitto", path="/usr/sbin:/usr/local/sbin")
    return Path(found) if found else None


def redact_url(url: str) -> str:
    """``url`` with the password of its ``user:password@`` replaced by ``***`` (for messages)."""
    head, sep, rest = url.partition("://")
    userinfo, at, tail = rest.rpartition("@")
    if not sep or not at or ":" not in userinfo:
        return url
    return f"{head}://{userinfo.split(':', 1)[0]}:***@{tail}"


class BrokerSettings(BaseModel):
    """Which broker a run uses and how clients reach and log in to it.

    Attributes:
        kind: ``auto`` (start mosquitto if found, else embedded), ``mosquitto``, ``embedded`` or
            ``external`` (connect to ``host:port``).
        host, port: the external broker's address (None unless ``kind == "external"``).
        scheme: ``mqtt`` (TCP), ``mqtts`` (TLS), ``ws`` (WebSocket) or ``wss`` (WebSocket over TLS).
        path: the WebSocket path (ws/wss only; None: paho's ``/mqtt``).
        protocol: the MQTT version clients speak; the embedded amqtt broker supports ``3.1.1`` only.
        timeout: seconds for connecting and for every acknowledgement from the broker.
        reconnect_window: seconds a client keeps reconnecting (backoff with jitter) after losing its
            connection, its publishes waiting meanwhile, before it gives up (0: no retry); None: the
            command's default (:data:`DEFAULT_RECONNECT_WINDOW`; ``mpdp simulate`` sizes it to the run).
        username, password: the login (the password never shown: ``SecretStr``).
        cafile: PEM file of the CA that signed the broker's certificate (TLS; None: the system's CAs).
        certfile, keyfile: the client's certificate and private key (PEM) for TLS client authentication.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["auto", "mosquitto", "embedded", "external"] = "auto"
    host: str | None = None
    port: int | None = Field(default=None, ge=1, le=65535)
    scheme: Scheme = "mqtt"
    path: str | None = None
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    timeout: float = Field(default=10.0, gt=0, le=3600)
    reconnect_window: float | None = Field(default=None, ge=0, le=MAX_RECONNECT_WINDOW)
    username: str | None = Field(default=None, min_length=1)
    password: SecretStr | None = None
    cafile: Path | None = None
    certfile: Path | None = None
    keyfile: Path | None = None

    @property
    def tls(self) -> bool:
        """True for ``mqtts`` and ``wss``."""
        return self.scheme in ("mqtts", "wss")

    def window(self, default: float = DEFAULT_RECONNECT_WINDOW) -> float:
        """The reconnect window in seconds: :attr:`reconnect_window`, or ``default`` when it is left to the
        command (None)."""
        return default if self.reconnect_window is None else self.reconnect_window

    def with_window(self, given: float | None, default: float, name: str = "reconnect_window") -> BrokerSettings:
        """These settings with :attr:`reconnect_window` set (seconds): ``given`` if not None, else their own,
        else ``default``.

        Raises:
            ParameterError: (named ``name``) ``given`` out of range (0 to :data:`MAX_RECONNECT_WINDOW`).
        """
        if given is not None:
            _check_window(given, name)
        window = given if given is not None else self.window(default)
        return self.model_copy(update={"reconnect_window": float(window)})

    @classmethod
    def from_url(cls, url: str | None = None, environ: Mapping[str, str] | None = None, *,
                 cafile: str | os.PathLike[str] | None = None, cert: str | os.PathLike[str] | None = None,
                 key: str | os.PathLike[str] | None = None, protocol: str | None = None,
                 reconnect_window: float | None = None) -> BrokerSettings:
        """Parse ``--broker URL`` (if None, ``MPDP_BROKER_URL``; if unset, ``auto``) and the login and
        TLS options (each, if None, from its ``MPDP_BROKER_*`` variable).

        Args:
            protocol: ``--mqtt-version`` (``3.1.1`` or ``5``); wins over the URL's ``?protocol=``.
            reconnect_window: ``--reconnect-window`` (seconds; None: the command's default).

        Raises:
            ParameterError: an unknown keyword or scheme, a bad port, path or query key; TLS files without
                mqtts/wss, a missing TLS file, a key without a certificate, or a password without a user.
        """
        env = os.environ if environ is None else environ
        name = "broker"  # the keyword; the command line names its --broker (mpdp.parties.cli.errors.flag_named)
        if url is None or not url.strip():
            # the environment's URL, else the default (named broker, not an unset variable)
            from_env = env.get(ENV_VAR, "").strip()
            url, name = (from_env, ENV_VAR) if from_env else ("auto", "broker")
        text = url.strip()
        shown = redact_url(text)
        if text.lower() in _KEYWORDS:
            fields: dict[str, object] = {"kind": text.lower()}
        else:
            fields = _parse_url(name, text, shown)
        if protocol is not None:
            fields["protocol"] = protocol
        if reconnect_window is not None:
            _check_window(reconnect_window)
            fields["reconnect_window"] = reconnect_window
        if fields.get("username") is None and env.get(USERNAME_ENV):
            fields["username"] = env[USERNAME_ENV]
        if fields.get("password") is None and env.get(PASSWORD_ENV):
            fields["password"] = env[PASSWORD_ENV]
        elif fields.get("password") is None and env.get(PASSWORD_FILE_ENV):
            fields["password"] = _read_password(env[PASSWORD_FILE_ENV])
        given = {"cafile": cafile, "cert": cert, "key": key}
        for option, value in given.items():
            value = value if value is not None else (env.get(TLS_ENV[option]) or None)
            if value is not None:
                fields[{"cafile": "cafile", "cert": "certfile", "key": "keyfile"}[option]] = Path(value)
        try:
            settings = cls(**fields)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ParameterError(name, shown, _ALLOWED, hint=_first_error(exc)) from None
        settings._check_login(name, shown)
        return settings

    def _check_login(self, name: str, shown: str) -> None:
        files = {"--cafile": self.cafile, "--cert": self.certfile, "--key": self.keyfile}
        given = {option: path for option, path in files.items() if path is not None}
        if given and self.kind != "external":
            raise ParameterError(next(iter(given)), str(next(iter(given.values()))), "TLS files for an external "
                                 "broker (mqtts:// or wss://)", hint=f"{name} is {shown!r}")
        if given and not self.tls:
            raise ParameterError(next(iter(given)), str(next(iter(given.values()))),
                                 "TLS files only with an mqtts:// or wss:// broker URL", hint=f"{name} is {shown!r}")
        for option, path in given.items():
            if not path.is_file():
                raise ParameterError(option, str(path), "a readable PEM file", hint="no such file")
        if self.keyfile is not None and self.certfile is None:
            raise ParameterError("--key", str(self.keyfile), "a private key together with --cert")
        if self.password is not None and self.username is None:
            raise ParameterError(name, shown, "a password together with a user name",
                                 hint=f"give USER:PASSWORD@ or {USERNAME_ENV}")
        if (self.username is not None or self.password is not None) and self.kind != "external":
            raise ParameterError(name, shown, "a login for an external broker only",
                                 hint=f"unset {USERNAME_ENV}/{PASSWORD_ENV} or give a broker URL")

    @property
    def url(self) -> str:
        """The settings written back as a ``--broker`` value, without the password."""
        if self.kind != "external":
            return self.kind
        user = f"{self.username}@" if self.username else ""
        path = self.path or ""
        return (f"{self.scheme}://{user}{url_host(self.host)}:{self.port}{path}"
                f"?protocol={self.protocol}&timeout={self.timeout:g}")


def _parse_url(name: str, text: str, shown: str) -> dict[str, object]:
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        raise ParameterError(name, shown, _ALLOWED)
    websocket = scheme in ("ws", "wss")
    if parts.fragment or (parts.path not in ("", "/") and not websocket):
        raise ParameterError(name, shown, _ALLOWED, hint="no fragment; a path only for ws:// and wss://")
    try:
        port = DEFAULT_PORTS[scheme] if parts.port is None else parts.port
    except ValueError:
        raise ParameterError(name, shown, _ALLOWED, hint="the port must be 1..65535") from None
    query = parse_qs(parts.query, keep_blank_values=True)
    unknown = sorted(set(query) - {"protocol", "timeout"})
    if unknown:
        raise ParameterError(name, shown, _ALLOWED, hint=f"unknown query key {unknown[0]!r}")
    fields: dict[str, object] = {key: values[-1] for key, values in query.items()}
    fields.update(kind="external", host=parts.hostname, port=port, scheme=scheme)
    if websocket and parts.path not in ("", "/"):
        fields["path"] = parts.path
    if parts.username:
        fields["username"] = unquote(parts.username)
    if parts.password is not None:
        fields["password"] = unquote(parts.password)
    return fields


def _check_window(seconds: float, name: str = "--reconnect-window") -> None:
    """Refuse a reconnect window out of range, naming the option ``name`` (not pydantic's field)."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float) or not 0 <= seconds <= MAX_RECONNECT_WINDOW:
        raise ParameterError(name, seconds,
                             f"seconds from 0 (no retry) to {MAX_RECONNECT_WINDOW:g} (a week)")


def _read_password(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8").strip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(PASSWORD_FILE_ENV, path, "a readable file holding the broker password",
                             hint=type(exc).__name__) from None


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
