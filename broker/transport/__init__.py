"""The transport layer: one small interface (:class:`Transport`, :class:`Connector`, :class:`Delivery`)
with the MQTT implementation (:class:`MqttTransport`, made by ``BrokerEndpoint.connect``) and an
in-memory one for unit tests (:class:`InMemoryBroker`)."""

from mpdp.broker.transport.base import Connector, Delivery, Transport, as_bytes, next_delivery
from mpdp.broker.transport.filters import check_filter, check_topic, matches
from mpdp.broker.transport.memory import InMemoryBroker, MemoryTransport
from mpdp.broker.transport.mqtt import MqttTransport, open_transport

__all__ = [
    "Connector",
    "Delivery",
    "InMemoryBroker",
    "MemoryTransport",
    "MqttTransport",
    "Transport",
    "as_bytes",
    "check_filter",
    "check_topic",
    "matches",
    "next_delivery",
    "open_transport",
]
