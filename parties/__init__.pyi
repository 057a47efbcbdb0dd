"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

from .session.observe import ObserveConfig, observe, observe_async, wait_for_parties
from .curator.curator import Curator
from .curator.outcome import CuratorRunOutcome, ReleaseOutcome
from .curator.party import CuratorParty
from .curator.runner import curator_privacy_level, run_curator, run_curator_async
from .curator.store import CuratorRecord, CuratorStore, RecordedBallot
from .rr.decisions import (
    PartyDecider,
    PartyDecisionSpec,
    apply_rule,
)
from .session.external_broker import deployment_endpoint
from .session.host import HostConfig, host_bits, host_parties
from .rr.observer import Observer, open_observer, serve_observer
from .rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome, RunOutcome
from .rr.party import (
    ABSTAIN_DID_NOT_VOTE,
    Party,
    PartySpec,
    secure_sampler,
)
from .session.pool import WorkerPool
from .session.seeds import SeedTree, decision_generator, round_generator
from .rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    ledgers_from_rounds,
    privacy_section,
    privacy_summary,
)
from .rounds.ranges import format_ranges, parse_ranges
from .rounds.roster import Roster
from .session.runner import (
    ProgressCallback,
    RunConfig,
    default_workers,
    run,
    run_async,
)
from .session.files import (
    KeyFile,
    PartyEntry,
    RosterFile,
    SessionRoster,
    coordinator_key_path,
    party_key_path,
    read_private_key,
    read_roster,
    write_session,
)
from .rounds.store import RecordedMessage, RoundRecord, TranscriptStore
from .session.worker import WorkerSpec, serve_parties, worker_main

__all__ = [
    "ABSTAIN_BUDGET_EXHAUSTED",
    "ABSTAIN_DID_NOT_VOTE",
    "DEFAULT_DELTA_SLACK",
    "Curator",
    "CuratorParty",
    "CuratorRecord",
    "CuratorRunOutcome",
    "CuratorStore",
    "Observer",
    "Party",
    "PartyDecider",
    "PartyDecisionSpec",
    "PartySpec",
    "ProgressCallback",
    "RecordedBallot",
    "RecordedMessage",
    "ReleaseOutcome",
    "Roster",
    "RoundOutcome",
    "RoundRecord",
    "RunConfig",
    "RunOutcome",
    "TranscriptStore",
    "WorkerPool",
    "WorkerSpec",
    "apply_rule",
    "check_privacy_options",
    "curator_privacy_level",
    "decision_generator",
    "default_workers",
    "ledgers_from_rounds",
    "open_observer",
    "privacy_section",
    "privacy_summary",
    "SeedTree",
    "round_generator",
    "run",
    "run_async",
    "run_curator",
    "run_curator_async",
    "secure_sampler",
    "serve_observer",
    "serve_parties",
    "worker_main",
    # deployment: one process per role (mpdp keys / party / observe)
    "HostConfig",
    "KeyFile",
    "ObserveConfig",
    "PartyEntry",
    "RosterFile",
    "SessionRoster",
    "coordinator_key_path",
    "deployment_endpoint",
    "format_ranges",
    "host_bits",
    "host_parties",
    "observe",
    "observe_async",
    "parse_ranges",
    "party_key_path",
    "read_private_key",
    "read_roster",
    "wait_for_parties",
    "write_session",
]
