"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.party import CuratorParty
from mpdp.parties.curator.session import CuratorSession, curator_privacy_level
from mpdp.parties.curator.store import BallotRows, CuratorStore, RecordedBallot
from mpdp.parties.rounds.engine import (
    ClosedRound,
    Closing,
    RoundEngine,
    RoundProtocol,
    open_engine,
)
from mpdp.parties.rounds.outcome import (
    ABSTAIN_BUDGET_EXHAUSTED,
    RoundOutcome,
    RunOutcome,
)
from mpdp.parties.rounds.privacy import (
    DEFAULT_DELTA_SLACK,
    check_privacy_options,
    ledgers_from_rounds,
    privacy_section,
    privacy_summary,
)
from mpdp.parties.rounds.ranges import format_ranges, parse_ranges
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import (
    MessageRows,
    RecordedMessage,
    RoundRecord,
    RoundRows,
    TranscriptStore,
)
from mpdp.parties.rr.decisions import (
    PartyDecider,
    PartyDecisionSpec,
    apply_rule,
    decision_generator,
)
from mpdp.parties.rr.observer import (
    Observer,
    ObserverRule,
    RuleFactory,
    default_rule_factory,
    optimal_rule_factory,
    zero_one_rule,
)
from mpdp.parties.rr.party import (
    ABSTAIN_DID_NOT_VOTE,
    Party,
    PartySpec,
    round_generator,
    secure_sampler,
)
from mpdp.parties.session.external_broker import deployment_endpoint
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
from mpdp.parties.session.host import HostConfig, host_bits, host_parties
from mpdp.parties.session.observe import (
    ObserveConfig,
    observe,
    observe_async,
    wait_for_parties,
)
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.runner import (
    ProgressCallback,
    RunConfig,
    default_workers,
    observer_decision_seed,
    run,
    run_async,
)
from mpdp.parties.session.worker import WorkerSpec, serve_parties, worker_main

__all__ = [
    "ABSTAIN_BUDGET_EXHAUSTED",
    "ABSTAIN_DID_NOT_VOTE",
    "DEFAULT_DELTA_SLACK",
    "BallotRows",
    "ClosedRound",
    "Closing",
    "Curator",
    "CuratorSession",
    "MessageRows",
    "RoundEngine",
    "RoundProtocol",
    "RoundRows",
    "open_engine",
    "CuratorParty",
    "CuratorStore",
    "ObserverRule",
    "Observer",
    "Party",
    "PartyDecider",
    "PartyDecisionSpec",
    "PartySpec",
    "ProgressCallback",
    "RecordedBallot",
    "RecordedMessage",
    "Roster",
    "RoundOutcome",
    "RoundRecord",
    "RuleFactory",
    "RunConfig",
    "RunOutcome",
    "TranscriptStore",
    "WorkerPool",
    "WorkerSpec",
    "apply_rule",
    "check_privacy_options",
    "curator_privacy_level",
    "decision_generator",
    "default_rule_factory",
    "default_workers",
    "ledgers_from_rounds",
    "observer_decision_seed",
    "optimal_rule_factory",
    "privacy_section",
    "privacy_summary",
    "round_generator",
    "run",
    "run_async",
    "secure_sampler",
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
    "zero_one_rule",
]
