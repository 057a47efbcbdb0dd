"""The processes: the protocol-neutral round engine, the protocols on it (randomized response, curator,
mpc), sessions (runner, workers, deployment roles) and the ``mpdp`` command line.

Names are imported lazily (PEP 562): ``from mpdp.parties import run`` loads only what ``run`` needs;
``__init__.pyi`` lists them for type checkers and for the loader.
"""

from .ballots.central import CentralSession, central_privacy_level, curator_privacy_level
from .ballots.party import BallotMaker, BallotParty
from .ballots.store import BallotRows, BallotStore, RecordedBallot
from .curator.curator import Curator
from .curator.party import SealedBallots
from .curator.session import CuratorSession
from .mpc.cluster import ServerCluster, ServerCost, secure_release
from .mpc.coordinator import MpcCoordinator
from .mpc.deployed_server import DeployedServerConfig, run_server
from .mpc.party import SharedBallots
from .mpc.remote import BrokerServers
from .mpc.session import MpcSession
from .mpc.store import MpcStore
from .rounds.config import PROTOCOLS, RunConfig, default_workers
from .rounds.engine import ClosedRound, Closing, RoundEngine, RoundProtocol, open_engine
from .rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome, RunOutcome
from .rounds.party_spec import ABSTAIN_DID_NOT_VOTE, PartySpec
from .rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    ledgers_from_rounds,
    privacy_section,
    privacy_summary,
)
from .rounds.ranges import format_ranges, parse_ranges
from .rounds.registry import SessionProtocol, session_protocol
from .rounds.roster import Roster
from .rounds.seeds import SeedTree, decision_generator, round_generator
from .rounds.session_files import (
    KeyFile,
    PartyEntry,
    RosterFile,
    ServerKeyPair,
    ServerRoster,
    SessionRoster,
    coordinator_key_path,
    party_key_path,
    read_private_key,
    read_roster,
    read_server_keys,
    server_key_path,
    write_session,
)
from .rounds.store import (
    MessageRows,
    RecordedMessage,
    RoundRecord,
    RoundRows,
    TranscriptStore,
)
from .rr.decisions import PartyDecider, PartyDecisionSpec, apply_rule
from .rr.observer import Observer
from .rr.party import Party, secure_sampler
from .rr.session import RandomizedResponseSession
from .session.compare import ProtocolComparison, ProtocolCost, compare_live
from .session.evaluate import evaluate_run
from .session.external_broker import deployment_endpoint
from .session.host import HostConfig, host_bits, host_parties
from .session.observe import ObserveConfig, observe, observe_async, wait_for_parties
from .session.pool import WorkerPool
from .session.runner import ProgressCallback, run, run_async
from .session.worker import WorkerSpec, serve_parties, worker_main

__all__ = [
    "ABSTAIN_BUDGET_EXHAUSTED",
    "ABSTAIN_DID_NOT_VOTE",
    "BallotMaker",
    "BallotParty",
    "BallotRows",
    "BallotStore",
    "BrokerServers",
    "ClosedRound",
    "Closing",
    "CentralSession",
    "Curator",
    "CuratorSession",
    "DEFAULT_DELTA_SLACK",
    "DeployedServerConfig",
    "HostConfig",
    "KeyFile",
    "MessageRows",
    "MpcCoordinator",
    "MpcSession",
    "MpcStore",
    "ObserveConfig",
    "Observer",
    "PROTOCOLS",
    "Party",
    "PartyDecider",
    "PartyDecisionSpec",
    "PartyEntry",
    "PartySpec",
    "ProgressCallback",
    "ProtocolComparison",
    "ProtocolCost",
    "RandomizedResponseSession",
    "RecordedBallot",
    "RecordedMessage",
    "Roster",
    "RosterFile",
    "RoundEngine",
    "RoundOutcome",
    "RoundProtocol",
    "RoundRecord",
    "RoundRows",
    "RunConfig",
    "RunOutcome",
    "SealedBallots",
    "SeedTree",
    "ServerCluster",
    "ServerCost",
    "ServerKeyPair",
    "ServerRoster",
    "SessionProtocol",
    "SessionRoster",
    "SharedBallots",
    "TranscriptStore",
    "WorkerPool",
    "WorkerSpec",
    "apply_rule",
    "central_privacy_level",
    "check_privacy_options",
    "compare_live",
    "coordinator_key_path",
    "curator_privacy_level",
    "decision_generator",
    "default_workers",
    "deployment_endpoint",
    "evaluate_run",
    "format_ranges",
    "host_bits",
    "host_parties",
    "ledgers_from_rounds",
    "observe",
    "observe_async",
    "open_engine",
    "parse_ranges",
    "party_key_path",
    "privacy_section",
    "privacy_summary",
    "read_private_key",
    "read_roster",
    "read_server_keys",
    "round_generator",
    "run",
    "run_async",
    "run_server",
    "secure_release",
    "secure_sampler",
    "serve_parties",
    "session_protocol",
    "server_key_path",
    "wait_for_parties",
    "worker_main",
    "write_session",
]
