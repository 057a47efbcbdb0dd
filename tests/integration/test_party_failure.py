"""A party that raises mid-run stops everything within seconds, naming the cause (issue 9: the
simulation stopped in 1 of 5 trials; in the others the run went on with parties silently absent).

* worker level, 20 of 20 trials over a real mosquitto: the worker reports "failed" with the cause at once,
  every other party task is cancelled and its MQTT client closed (a cancellation aiomqtt's ``wait_for``
  swallowed is re-raised), ``serve_parties`` raises;
* run level (spawned worker processes): the runner's watchdog cancels the round in progress, the pool stops
  every worker, the run raises a WorkerError naming the party's error, no process is left (by PID)."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, RoundAnnouncement, WorkerStatus
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import next_delivery
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.plan import PartyPlan
from mpdp.parties.rounds.registry import SessionProtocol, session_protocol
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.rr.party import Party, start_party
from mpdp.parties.session import runner
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session")]

K, WORKER_K, FAULTY, TRIALS, RUN_TRIALS = 40, 16, 13, 20, 3
ROUND_TIMEOUT = scaled(60.0)  # a run that waited for the round to time out would take a minute (if idle)


def start_faulty_party(spec: Any, *args: Any, **kwargs: Any) -> Party:
    """:func:`start_party`, but party ``FAULTY`` raises when it answers round 1 (picklable by name)."""
    party = start_party(spec, *args, **kwargs)
    if spec.party == FAULTY:
        respond = party.respond

        def failing(announcement: RoundAnnouncement) -> Any:
            if announcement.round >= 1:
                raise RuntimeError("planted fault")
            return respond(announcement)

        party.respond = failing  # type: ignore[method-assign]
    return party


class _FaultyPlan:
    """The randomized-response session protocol, whose workers start :func:`start_faulty_party`."""

    def __init__(self, inner: SessionProtocol) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def party_plan(self, config: RunConfig, seeds: SeedTree | None, earlier: Sequence[RoundOutcome]) -> PartyPlan:
        plan = self._inner.party_plan(config, seeds, earlier)
        return PartyPlan(start=start_faulty_party, seeds=plan.seeds, ledgers=plan.ledgers, decisions=plan.decisions)


def _config(tmp_path: Path, mosquitto: BrokerEndpoint, trial: int) -> RunConfig:
    bits = np.random.default_rng(trial).integers(0, 2, size=(K, 3)).astype(np.int8)
    return RunConfig(
        session=f"fault-{trial}-{tmp_path.name[-8:].replace('_', '')}", round_names=("a", "b", "c"), bits=bits,
        mechanisms=(RandomizedResponse(1.0),) * K, repetitions=1, seed=trial, function=parse_function("majority"),
        measure=accuracy_measure("zero-one", 2), workers=2, store_path=tmp_path / f"t{trial}.sqlite",
        broker=BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={}),
        round_timeout=ROUND_TIMEOUT,
    )


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_a_party_that_raises_stops_a_spawned_run_within_seconds(
        mosquitto: BrokerEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    faulty = _FaultyPlan(session_protocol("rr"))
    monkeypatch.setattr(runner, "session_protocol", lambda name: faulty if name == "rr" else session_protocol(name))
    stopped: list[float] = []
    for trial in range(RUN_TRIALS):
        pids: list[int] = []
        round_0_done: list[float] = []

        def progress(rounds_done: int, messages: int) -> None:
            pids.extend(p.pid for p in multiprocessing.active_children() if p.pid not in pids and p.pid)
            if rounds_done == 1 and not round_0_done:
                round_0_done.append(time.monotonic())

        with pytest.raises(WorkerError) as info:
            await runner.run_async(_config(tmp_path, mosquitto, trial), progress)
        stopped.append(time.monotonic() - round_0_done[0])  # from the fault (round 1 opens) to the error
        message = str(info.value)
        assert f"RuntimeError: planted fault (party {FAULTY})" in message, message
        assert "worker 0 (parties 0-19) failed" in message and "during round 1" in message, message
        assert multiprocessing.active_children() == []
        assert len(pids) == 2
        for pid in pids:  # gone, not merely detached
            with pytest.raises(ProcessLookupError):
                os.kill(pid, 0)
    assert len(stopped) == RUN_TRIALS and max(stopped) < scaled(10.0), stopped


@pytest.mark.timeout(120)
async def test_a_party_that_raises_stops_its_worker_within_seconds_in_20_of_20_trials(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    coordinator_private, coordinator_public = generate_key_pair()
    stopped = []
    for trial in range(TRIALS):
        session = f"wfault-{trial}-{tmp_path.name[-8:].replace('_', '')}"
        topics = Topics(session)
        parties = tuple(PartySpec(p, np.ones(3, np.int8), RandomizedResponse(1.0), generate_key_pair()[0],
                                  np.random.SeedSequence([trial, p])) for p in range(WORKER_K))
        spec = WorkerSpec(index=0, endpoint=mosquitto, session=session, coordinator_key=coordinator_public,
                          parties=parties, idle_timeout=scaled(60.0), start=start_faulty_party)
        async with mosquitto.connect(f"{session}-coordinator") as coordinator:
            await coordinator.subscribe(topics.status, topics.all_parties)
            worker = asyncio.create_task(serve_parties(spec))
            ready = await next_delivery(coordinator, scaled(30.0))
            assert ready is not None and WorkerStatus.model_validate_json(ready.payload).state == "ready"
            for index in (0, 1):
                await coordinator.publish(topics.rounds, Announcement.signed(
                    coordinator_private, session=session, kind="round", round=index, repetitions=1).model_dump_json())
            fault = time.monotonic()
            with pytest.raises(ExceptionGroup) as group:
                async with asyncio.timeout(scaled(10.0)):
                    await worker
            stopped.append(time.monotonic() - fault)
            assert group.group_contains(RuntimeError, match="planted fault")
            statuses = []
            while (delivery := await next_delivery(coordinator, scaled(1.0))) is not None:
                if delivery.topic == topics.status:
                    statuses.append(WorkerStatus.model_validate_json(delivery.payload))
            assert [(s.state, s.detail) for s in statuses] == [
                ("failed", f"RuntimeError: planted fault (party {FAULTY})")]
    assert len(stopped) == TRIALS and max(stopped) < scaled(5.0), stopped
