"""MQTT transport: settings, the brokers a run starts (mosquitto child, embedded amqtt), topics, wire
messages, Ed25519 signing. Imports nothing of mpdp but :mod:`mpdp.protocols.errors`."""

from .certificates import CertificateAuthority
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
from .lockdown import BrokerConfig, Limits, write_broker_config
from .messages import (
    MAX_REPETITIONS,
    Announcement,
    PartyMessage,
    WorkerStatus,
    decode_answer,
    new_nonce,
)
from .mosquitto import CONFIG_TEMPLATE, render_config, run_configured_mosquitto, run_mosquitto
from .mpc_messages import MpcAnnouncement, ServerJob, ServerReport, SharedBallot, SumRelease
from .packing import (
    any_symbol_at_least,
    pack_bytes,
    pack_symbols,
    packed_length,
    unpack_bytes,
    unpack_rows,
    unpack_symbols,
)
from .passwords import new_password, password_line, verify_password_line
from .ports import LOOPBACK, free_loopback_port
from .sealed import generate_x25519_key_pair, open_sealed, seal
from .settings import ENV_VAR, BrokerSettings, find_mosquitto, redact_url
from .signing import (
    canonical_bytes,
    generate_key_pair,
    load_private_key,
    load_public_key,
    public_key_of,
    sign_bytes,
    sign_message,
    verify_bytes,
    verify_message,
)
from .topics import SESSION_PATTERN, Topics, check_session
from .wire import WireAnswer, sign_answer

__all__ = [
    "CONFIG_TEMPLATE",
    "DEFAULT_LIFETIME",
    "ENV_VAR",
    "LOOPBACK",
    "MAX_REPETITIONS",
    "ServerJob",
    "ServerReport",
    "SESSION_PATTERN",
    "Announcement",
    "BrokerConfig",
    "BrokerEndpoint",
    "BrokerSettings",
    "CertificateAuthority",
    "CuratorAnnouncement",
    "CuratorRelease",
    "DecisionMessage",
    "FreshnessGuard",
    "Limits",
    "MpcAnnouncement",
    "PartyMessage",
    "SharedBallot",
    "SumRelease",
    "SealedBallot",
    "Topics",
    "TranscriptMessage",
    "WireAnswer",
    "WorkerStatus",
    "any_symbol_at_least",
    "canonical_bytes",
    "check_connectivity",
    "check_session",
    "decode_answer",
    "external_endpoint",
    "find_mosquitto",
    "free_loopback_port",
    "next_sequence",
    "generate_key_pair",
    "generate_x25519_key_pair",
    "load_private_key",
    "load_public_key",
    "new_nonce",
    "new_password",
    "open_broker",
    "open_sealed",
    "pack_bytes",
    "pack_decisions",
    "pack_symbols",
    "packed_length",
    "password_line",
    "public_key_of",
    "redact_url",
    "render_config",
    "run_configured_mosquitto",
    "run_embedded",
    "run_mosquitto",
    "seal",
    "sign_bytes",
    "sign_answer",
    "sign_message",
    "stamp",
    "unpack_bytes",
    "unpack_decisions",
    "unpack_rows",
    "unpack_symbols",
    "verify_bytes",
    "verify_message",
    "verify_password_line",
    "wait_until_accepting",
    "write_broker_config",
]
