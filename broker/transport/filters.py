"""MQTT topic names and topic filters (MQTT 3.1.1 §4.7): validation and matching.

A topic name has no wildcard; a filter may use ``+`` (exactly one level) and ``#`` (any number of
levels, last only). Matching is paho-mqtt's :func:`paho.mqtt.client.topic_matches_sub`.
"""

from __future__ import annotations

from paho.mqtt.client import topic_matches_sub

from mpdp.protocols.errors import ParameterError

__all__ = ["check_filter", "check_topic", "matches"]

_MAX_BYTES = 65535


def check_topic(topic: str) -> str:
    """Return ``topic`` or raise :class:`ParameterError`: a publish topic is 1..65535 UTF-8 bytes
    without ``+``, ``#`` or NUL."""
    if not isinstance(topic, str) or not 0 < len(topic.encode("utf-8")) <= _MAX_BYTES or any(
            c in topic for c in "+#\0"):
        raise ParameterError("topic", topic, "1..65535 UTF-8 bytes without the wildcards + and # or NUL")
    return topic


def check_filter(topic_filter: str) -> str:
    """Return ``topic_filter`` or raise :class:`ParameterError`: ``+`` and ``#`` fill a whole level,
    ``#`` only the last one."""
    levels = topic_filter.split("/") if isinstance(topic_filter, str) else []
    valid = (
        bool(levels) and 0 < len(topic_filter.encode("utf-8")) <= _MAX_BYTES and "\0" not in topic_filter
        and all(level in ("+", "#") or not set(level) & {"+", "#"} for level in levels)
        and "#" not in levels[:-1]
    )
    if not valid:
        raise ParameterError("topic filter", topic_filter,
                             "1..65535 UTF-8 bytes; '+' a whole level, '#' a whole last level")
    return topic_filter


def matches(topic_filter: str, topic: str) -> bool:
    """True iff ``topic`` matches ``topic_filter`` (MQTT rules; ``$``-topics match no leading wildcard)."""
    return bool(topic_matches_sub(topic_filter, topic))
