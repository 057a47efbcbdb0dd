"""The processes: party, observer, transcript store, runner, datasets and the ``mpdp`` CLI."""

from parties.curator import Curator
from parties.curator_outcome import CuratorRunOutcome, ReleaseOutcome
from parties.curator_party import CuratorParty
from parties.curator_runner import curator_privacy_level, run_curator, run_curator_async
from parties.curator_store import CuratorRecord, CuratorStore, RecordedBallot
from parties.observer import (
    DecisionRule,
    Observer,
    RuleFactory,
    default_rule_factory,
    open_observer,
    serve_observer,
)
from parties.outcome import RoundOutcome, RunOutcome
from parties.party import (
    ABSTAIN_DID_NOT_VOTE,
    Party,
    PartySpec,
    round_generator,
    secure_sampler,
)
from parties.pool import WorkerPool
from parties.roster import Roster
from parties.runner import ProgressCallback, RunConfig, default_workers, run, run_async
from parties.store import RecordedMessage, RoundRecord, TranscriptStore
from parties.worker import WorkerSpec, serve_parties, worker_main

__all__ = [
    "ABSTAIN_DID_NOT_VOTE",
    "Curator",
    "CuratorParty",
    "CuratorRecord",
    "CuratorRunOutcome",
    "CuratorStore",
    "DecisionRule",
    "Observer",
    "Party",
    "PartySpec",
    "ProgressCallback",
    "RecordedBallot",
    "RecordedMessage",
    "ReleaseOutcome",
    "Roster",
    "RoundOutcome",
    "RoundRecord",
    "RuleFactory",
    "RunConfig",
    "RunOutcome",
    "TranscriptStore",
    "WorkerPool",
    "WorkerSpec",
    "curator_privacy_level",
    "default_rule_factory",
    "default_workers",
    "open_observer",
    "round_generator",
    "run",
    "run_async",
    "run_curator",
    "run_curator_async",
    "secure_sampler",
    "serve_observer",
    "serve_parties",
    "worker_main",
]
