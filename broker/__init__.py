"""MQTT transport: settings, the brokers a run starts (mosquitto child, embedded amqtt), topics, wire
messages, Ed25519 signing. Imports nothing of mpdp but :mod:`mpdp.protocols.errors`."""

# The names listed in __init__.pyi are imported on first use (PEP 562), so ``import mpdp.broker`` stays
# cheap; type checkers read the stub.
import lazy_loader

__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
