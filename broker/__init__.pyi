"""MQTT transport: settings, the brokers a run starts (mosquitto child, embedded amqtt), topics, wire
messages, Ed25519 signing. Imports nothing of mpdp but :mod:`mpdp.protocols.errors`."""

from .connectivity import check_connectivity, wait_until_accepting
from .control import DEFAULT_LIFETIME, FreshnessGuard, next_sequence, stamp
from .curator_messages import CuratorAnnouncement, CuratorRelease, SealedBallot
from .decision_messages import (
    DecisionMessage,
    TranscriptMessage,
    pack_decisions,
    unpack_decisions,
)
from .embedded import run_embedded
from .endpoint import BrokerEndpoint
from .launch import external_endpoint, open_broker
from .messages import (
    MAX_REPETITIONS,
    Announcement,
    PartyMessage,
    WorkerStatus,
    new_nonce,
)
from .mosquitto import CONFIG_TEMPLATE, render_config, run_mosquitto
from .packing import pack_symbols, packed_length, unpack_symbols
from .ports import LOOPBACK, free_loopback_port
from .sealed import generate_x25519_key_pair, open_sealed, seal
from .settings import ENV_VAR, BrokerSettings, find_mosquitto
from .signing import (
    canonical_bytes,
    generate_key_pair,
    load_private_key,
    load_public_key,
    public_key_of,
    sign_message,
    verify_message,
)
from .topics import SESSION_PATTERN, Topics, check_session

__all__ = [
    "CONFIG_TEMPLATE",
    "DEFAULT_LIFETIME",
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
    "FreshnessGuard",
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
    "next_sequence",
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
    "stamp",
    "unpack_decisions",
    "unpack_symbols",
    "verify_message",
    "wait_until_accepting",
]
