"""The transport layer: one small interface (:class:`Transport`, :class:`Connector`, :class:`Delivery`)
with an in-memory implementation for unit tests (:class:`InMemoryBroker`)."""

from mpdp.broker.transport.base import Connector, Delivery, Transport, as_bytes
from mpdp.broker.transport.filters import check_filter, check_topic, matches
from mpdp.broker.transport.memory import InMemoryBroker, MemoryTransport

__all__ = [
    "Connector",
    "Delivery",
    "InMemoryBroker",
    "MemoryTransport",
    "Transport",
    "as_bytes",
    "check_filter",
    "check_topic",
    "matches",
]
