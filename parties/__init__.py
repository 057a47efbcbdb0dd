"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

from mpdp.parties.session.observe import ObserveConfig, observe, observe_async, wait_for_parties
from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.outcome import CuratorRunOutcome, ReleaseOutcome
from mpdp.parties.curator.party import CuratorParty
from mpdp.parties.curator.runner import curator_privacy_level, run_curator, run_curator_async
from mpdp.parties.curator.store import CuratorRecord, CuratorStore, RecordedBallot
from mpdp.parties.rr.decisions import (
    PartyDecider,
    PartyDecisionSpec,
    apply_rule,
)
from mpdp.parties.session.external_broker import deployment_endpoint
from mpdp.parties.session.host import HostConfig, host_bits, host_parties
from mpdp.parties.rr.observer import Observer, open_observer, serve_observer
from mpdp.parties.rounds.outcome import ABSTAIN_BUDGET_EXHAUSTED, RoundOutcome, RunOutcome
from mpdp.parties.rr.party import (
    ABSTAIN_DID_NOT_VOTE,
    Party,
    PartySpec,
    secure_sampler,
)
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.seeds import SeedTree, decision_generator, round_generator
from mpdp.parties.rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    ledgers_from_rounds,
    privacy_section,
    privacy_summary,
)
from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.session.runner import (
    ProgressCallback,
    RunConfig,
    default_workers,
    run,
    run_async,
)
from mpdp.parties.session.files import (
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
from mpdp.parties.rounds.store import RecordedMessage, RoundRecord, TranscriptStore
from mpdp.parties.session.worker import WorkerSpec, serve_parties, worker_main

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
