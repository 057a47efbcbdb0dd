"""MQTT transport: settings, the embedded broker, topics, wire messages, signing, mosquitto config."""

__all__: list[str] = []
