"""Fixtures of the parties tests."""

from tests.mqtt_fixtures import mosquitto

__all__ = ["mosquitto"]
