"""Fixtures of the broker tests."""

from tests.mqtt_fixtures import mosquitto

__all__ = ["mosquitto"]
