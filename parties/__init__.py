"""The processes: the protocol-neutral round engine, the protocols on it (randomized response, curator),
sessions (runner, workers, deployment roles) and the ``mpdp`` command line.

Names are imported lazily (PEP 562): ``from mpdp.parties import run`` loads only what ``run`` needs.
"""

from __future__ import annotations

import importlib
from typing import Any

#: Public name -> the module that defines it.
_WHERE: dict[str, str] = {
    **dict.fromkeys(("ClosedRound", "Closing", "RoundEngine", "RoundProtocol", "open_engine"), "rounds.engine"),
    **dict.fromkeys(("ABSTAIN_BUDGET_EXHAUSTED", "RoundOutcome", "RunOutcome"), "rounds.outcome"),
    **dict.fromkeys(("DEFAULT_DELTA_SLACK", "check_privacy_options", "ledgers_from_rounds", "privacy_section",
                     "privacy_summary"), "rounds.privacy"),
    **dict.fromkeys(("format_ranges", "parse_ranges"), "rounds.ranges"),
    "Roster": "rounds.roster",
    **dict.fromkeys(("MessageRows", "RecordedMessage", "RoundRecord", "RoundRows", "TranscriptStore"),
                    "rounds.store"),
    **dict.fromkeys(("ABSTAIN_DID_NOT_VOTE", "Party", "PartySpec", "secure_sampler"), "rr.party"),
    "Observer": "rr.observer",
    **dict.fromkeys(("PartyDecider", "PartyDecisionSpec", "apply_rule"), "rr.decisions"),
    "RandomizedResponseSession": "rr.session",
    "Curator": "curator.curator",
    "CuratorParty": "curator.party",
    **dict.fromkeys(("BallotRows", "CuratorStore", "RecordedBallot"), "curator.store"),
    **dict.fromkeys(("CuratorSession", "curator_privacy_level"), "curator.session"),
    **dict.fromkeys(("PROTOCOLS", "RunConfig", "default_workers"), "session.config"),
    **dict.fromkeys(("ProgressCallback", "SessionProtocol", "run", "run_async"), "session.runner"),
    **dict.fromkeys(("SeedTree", "decision_generator", "round_generator"), "session.seeds"),
    "evaluate_run": "session.evaluate",
    "WorkerPool": "session.pool",
    **dict.fromkeys(("WorkerSpec", "serve_parties", "worker_main"), "session.worker"),
    # deployment: one process per role (mpdp keys / party / observe)
    "deployment_endpoint": "session.external_broker",
    **dict.fromkeys(("KeyFile", "PartyEntry", "RosterFile", "SessionRoster", "coordinator_key_path",
                     "party_key_path", "read_private_key", "read_roster", "write_session"), "session.files"),
    **dict.fromkeys(("HostConfig", "host_bits", "host_parties"), "session.host"),
    **dict.fromkeys(("ObserveConfig", "observe", "observe_async", "wait_for_parties"), "session.observe"),
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import the defining module of ``name`` on first use (PEP 562)."""
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))

