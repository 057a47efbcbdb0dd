"""Fixtures of the integration tests."""

from tests.mqtt_fixtures import mosquitto

__all__ = ["mosquitto"]
