"""MQTT transport: settings, the brokers a run starts (mosquitto child, embedded amqtt), topics, wire
messages, Ed25519 signing. Imports nothing of mpdp but :mod:`mpdp.protocols.errors`."""

from mpdp.broker.connectivity import check_connectivity, wait_until_accepting
from mpdp.broker.curator_messages import CuratorAnnouncement, CuratorRelease, SealedBallot
from mpdp.broker.decision_messages import (
    DecisionMessage,
    TranscriptMessage,
    pack_decisions,
    unpack_decisions,
)
from mpdp.broker.embedded import run_embedded
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import external_endpoint, open_broker
from mpdp.broker.messages import (
    MAX_REPETITIONS,
    Announcement,
    PartyMessage,
    WorkerStatus,
    new_nonce,
)
from mpdp.broker.mosquitto import CONFIG_TEMPLATE, render_config, run_mosquitto
from mpdp.broker.packing import pack_symbols, packed_length, unpack_symbols
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.sealed import generate_x25519_key_pair, open_sealed, seal
from mpdp.broker.settings import ENV_VAR, BrokerSettings, find_mosquitto
from mpdp.broker.signing import (
    canonical_bytes,
    generate_key_pair,
    load_private_key,
    load_public_key,
    public_key_of,
    sign_message,
    verify_message,
)
from mpdp.broker.topics import SESSION_PATTERN, Topics, check_session

__all__ = [
    "CONFIG_TEMPLATE",
    "ENV_VAR",
    "LOOPBACK",
    "MAX_REPETITIONS",
    "SESSION_PATTERN",
    "Announcement",
    "BrokerEndpoint",
    "BrokerSettings",
    "CuratorAnnouncement",
    "CuratorRelease",
    "DecisionMessage",
    "PartyMessage",
    "SealedBallot",
    "Topics",
    "TranscriptMessage",
    "WorkerStatus",
    "canonical_bytes",
    "check_connectivity",
    "check_session",
    "external_endpoint",
    "find_mosquitto",
    "free_loopback_port",
    "generate_key_pair",
    "generate_x25519_key_pair",
    "load_private_key",
    "load_public_key",
    "new_nonce",
    "open_broker",
    "open_sealed",
    "pack_decisions",
    "pack_symbols",
    "packed_length",
    "public_key_of",
    "render_config",
    "run_embedded",
    "run_mosquitto",
    "seal",
    "sign_message",
    "unpack_decisions",
    "unpack_symbols",
    "verify_message",
    "wait_until_accepting",
]
