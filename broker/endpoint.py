"""A running broker's address, and the one way mpdp connects to it (:meth:`BrokerEndpoint.connect`)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Literal

import aiomqtt

from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW
from mpdp.broker.settings import PASSWORD_ENV, BrokerSettings, Scheme, url_host
from mpdp.broker.transport.mqtt import (
    SESSION_EXPIRY,
    MqttTransport,
    aiomqtt_client,
    open_transport,
)

__all__ = ["SESSION_EXPIRY", "BrokerEndpoint"]


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """Where clients connect: address, transport, TLS, login, MQTT version, and which kind of broker serves there.

    A :class:`mpdp.broker.transport.base.Connector`; picklable: worker processes receive it. ``kind`` is
    ``"mosquitto"`` or ``"embedded"`` for a broker this run started, ``"external"`` for one given by URL.
    The password is left out of the repr and of :attr:`url`.

    Attributes:
        scheme: ``mqtt`` (TCP), ``mqtts`` (TLS), ``ws`` (WebSocket) or ``wss`` (WebSocket over TLS).
        timeout: seconds for one connection attempt and for every acknowledgement from the broker.
        queue_size: incoming messages a client holds before it stops acknowledging (backpressure).
        reconnect_window: seconds a client keeps trying to connect (backoff with jitter) when its
            connection is lost (and when it first connects) before it gives up; its publishes and
            subscribes wait for the new connection meanwhile. 0: one attempt, no retry.
        username, password: the login (None: anonymous).
        cafile: the CA's PEM file that verifies the broker's certificate (None: the system's CAs).
        certfile, keyfile: the client's certificate and key (PEM) for TLS client authentication.
        websocket_path: the HTTP path of a ws/wss broker (None: ``/mqtt``).
    """

    kind: Literal["mosquitto", "embedded", "external"]
    host: str
    port: int
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    timeout: float = 10.0
    queue_size: int = 1000
    reconnect_window: float = DEFAULT_RECONNECT_WINDOW
    scheme: Scheme = "mqtt"
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    cafile: str | None = None
    certfile: str | None = None
    keyfile: str | None = None
    websocket_path: str | None = None

    @property
    def tls(self) -> bool:
        """True for ``mqtts`` and ``wss``."""
        return self.scheme in ("mqtts", "wss")

    @property
    def url(self) -> str:
        """``scheme://[user@]host:port[/path]`` (``mqtt://[::1]:1883`` for an IPv6 host); never the password."""
        user = f"{self.username}@" if self.username else ""
        return f"{self.scheme}://{user}{url_host(self.host)}:{self.port}{self.websocket_path or ''}"

    def reached(self) -> BrokerSettings:
        """Settings by which another run reaches this running broker as an external one, with its login
        (a child broker's random one: it is in no URL), timeout and reconnect window. TLS files are not
        carried (our children listen in plain MQTT on loopback)."""
        settings = BrokerSettings.from_url(self.url, environ={} if self.password is None else {PASSWORD_ENV: self.password})
        return settings.model_copy(update={"timeout": self.timeout, "reconnect_window": self.reconnect_window})

    def connect(self, client_id: str, *, persistent: bool = False) -> AbstractAsyncContextManager[MqttTransport]:
        """A connected :class:`mpdp.broker.transport.mqtt.MqttTransport` as ``async with``.

        Args:
            client_id: the MQTT client id, unique per broker (role + session + a random suffix where
                no fixed id is needed).
            persistent: keep the session on the broker across reconnects, so QoS 1 messages that
                arrive while disconnected are delivered on reconnect.

        Raises (on entry):
            TransportError: the broker cannot be reached (one line naming the URL).
        """
        return open_transport(self, client_id, persistent=persistent)

    def client(self, identifier: str, *, persistent: bool = False) -> aiomqtt.Client:
        """A new (unconnected) plain aiomqtt client (acknowledging on receipt); use it as ``async with``.

        For code not yet on :meth:`connect` (the observer); prefer :meth:`connect`.
        """
        return aiomqtt_client(self, identifier, persistent=persistent, manual_ack=False)
