"""Fixtures of the transport tests."""

from tests.mqtt_fixtures import mosquitto

__all__ = ["mosquitto"]
