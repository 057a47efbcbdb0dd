"""MQTT transport: settings, the brokers a run starts (mosquitto child, embedded amqtt), topics, wire
messages, Ed25519 signing. Imports nothing of mpdp but :mod:`protocols.errors`."""

from broker.connectivity import check_connectivity, wait_until_accepting
from broker.curator_messages import CuratorAnnouncement, CuratorRelease, SealedBallot
from broker.decision_messages import (
    DecisionMessage,
    TranscriptMessage,
    pack_decisions,
    unpack_decisions,
)
from broker.embedded import run_embedded
from broker.endpoint import BrokerEndpoint
from broker.launch import external_endpoint, open_broker
from broker.messages import (
    MAX_REPETITIONS,
    Announcement,
    PartyMessage,
    WorkerStatus,
    new_nonce,
)
from broker.mosquitto import CONFIG_TEMPLATE, render_config, run_mosquitto
from broker.packing import pack_symbols, packed_length, unpack_symbols
from broker.ports import LOOPBACK, free_loopback_port
from broker.sealed import generate_x25519_key_pair, open_sealed, seal
from broker.settings import ENV_VAR, BrokerSettings, find_mosquitto
from broker.signing import (
    canonical_bytes,
    generate_key_pair,
    load_private_key,
    load_public_key,
    public_key_of,
    sign_message,
    verify_message,
)
from broker.topics import SESSION_PATTERN, Topics, check_session

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
