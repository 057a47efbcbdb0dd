"""A running broker's address and the one way mpdp makes MQTT clients for it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import aiomqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from mpdp.broker.settings import url_host

__all__ = ["BrokerEndpoint"]

#: Seconds a persistent MQTT v5 session outlives its connection (v3.1.1 sessions never expire).
SESSION_EXPIRY = 3600


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """Where clients connect: host, port, MQTT version, and which kind of broker serves there.

    Picklable: worker processes receive it. ``kind`` is ``"mosquitto"`` or ``"embedded"`` for a
    broker this run started, ``"external"`` for one given by URL.
    """

    kind: Literal["mosquitto", "embedded", "external"]
    host: str
    port: int
    protocol: Literal["3.1.1", "5"] = "3.1.1"
    timeout: float = 10.0

    @property
    def url(self) -> str:
        """``mqtt://host:port`` (``mqtt://[::1]:1883`` for an IPv6 host)."""
        return f"mqtt://{url_host(self.host)}:{self.port}"

    def client(self, identifier: str, *, persistent: bool = False) -> aiomqtt.Client:
        """A new (unconnected) aiomqtt client; use it as ``async with``.

        Args:
            identifier: the MQTT client id, unique per broker (mpdp uses session + role + id).
            persistent: keep the session on the broker across reconnects (clean_session False in
                MQTT 3.1.1, clean_start False with a session expiry in MQTT 5), so QoS 1 messages
                that arrive while disconnected are delivered on reconnect.
        """
        if self.protocol == "5":
            properties = None
            if persistent:
                properties = Properties(PacketTypes.CONNECT)
                properties.SessionExpiryInterval = SESSION_EXPIRY
            return aiomqtt.Client(
                self.host, self.port, identifier=identifier, protocol=aiomqtt.ProtocolVersion.V5,
                clean_start=False if persistent else True, properties=properties,
                timeout=self.timeout,
            )
        return aiomqtt.Client(
            self.host, self.port, identifier=identifier, protocol=aiomqtt.ProtocolVersion.V311,
            clean_session=not persistent, timeout=self.timeout,
        )

