"""Observer scale-out end to end on a real mosquitto: two validator processes (MQTT 5 shared subscription)
verify the parties' messages and the observer merges. The run records every (round, party) exactly once
and decides exactly as a single-process observer with the same seed; a validator killed mid-session
stops the run with a WorkerError naming it, within seconds, leaving no process behind (by PID);
`mpdp observe --validators 2` records a deployed session exactly as published."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import multiprocessing
import os
import re
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage, decode_answer
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.topics import Topics, new_validator_group
from mpdp.parties.rounds.outcome import lost_answers_text
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session import validators as validators_module
from mpdp.parties.session.evaluate import evaluate_run
from mpdp.parties.session.runner import RunConfig, run_async
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled
from tests.integration.test_deploy import _finish
from tests.integration.test_party_restart import published_once, watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.asyncio(loop_scope="session"), pytest.mark.timeout(240)]
K, R, REPS, SEED = 40, 5, 3, 77
DEPLOYED_ROUNDS = 4
ROUND_TIMEOUT = scaled(60.0)  # a run that waited for a round to time out would take a minute (if idle)


def _config(tmp_path: Path, mosquitto: BrokerEndpoint, name: str, validators: int) -> RunConfig:
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2, size=(K, R)).astype(np.int8)
    bits[5, 2] = -1  # an abstention goes through the validators too
    return RunConfig(
        session=f"val-{name}-{tmp_path.name[-8:].replace('_', '')}", round_names=tuple(f"r{r}" for r in range(R)),
        bits=bits, mechanisms=tuple(RandomizedResponse(0.5 + 0.05 * i) for i in range(K)), repetitions=REPS,
        seed=SEED, function=parse_function("majority"), measure=accuracy_measure("zero-one", 2),
        broker=BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={}), workers=2,
        store_path=tmp_path / f"{name}.sqlite", round_timeout=ROUND_TIMEOUT, validators=validators)


async def test_two_validators_record_each_answer_once_and_decide_as_one_observer(
        mosquitto: BrokerEndpoint, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mpdp.validators")
    single = await run_async(_config(tmp_path, mosquitto, "single", 0))
    config = _config(tmp_path, mosquitto, "pair", 2)
    pair = await run_async(config)
    assert len(pair.rounds) == len(single.rounds) == R
    for one, two in zip(single.rounds, pair.rounds, strict=True):
        assert (two.status, two.messages_received, two.messages_rejected) == ("complete", K, 0)
        for field in ("participants", "abstained", "absent", "symbols", "decisions"):
            assert np.array_equal(getattr(one, field), getattr(two, field)), (one.index, field)
    assert pair.rounds[2].abstained.tolist() == [5]
    with TranscriptStore(config.store_path) as store:
        recorded = [(m["round"], m["party"]) for m in store.messages(config.session)]
        assert store.rejects(config.session) == {}
    assert recorded == [(r, p) for r in range(R) for p in range(K)]  # each exactly once
    forwarded = [line for line in caplog.messages if line.startswith("validators forwarded")]
    assert len(forwarded) == 1
    counts = [int(n) for n in re.findall(r"\d+", forwarded[0])]
    assert sum(counts) == K * R and len(counts) == 2 and min(counts) > 0, counts  # both took a share
    assert multiprocessing.active_children() == []


async def test_answers_taken_by_a_client_in_the_validators_group_are_named_lost(
        mosquitto: BrokerEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 22: a client that knows the validators' group (here: told it; in a deployment only the validators
    know it) takes its share of the answers. The run does not pass this off as success: each round names as
    ``lost`` exactly the (round, party) answers that client took (their host answered the round), in the
    outcome and in results.json's rounds."""
    group = new_validator_group()
    monkeypatch.setattr(validators_module, "new_validator_group", lambda: group)
    full = _config(tmp_path, mosquitto, "lost", 2)
    config = dataclasses.replace(full, round_names=("r0", "r1"), bits=full.bits[:, :2], round_timeout=scaled(2.0))
    taken: set[tuple[int, int]] = set()
    rogue_endpoint = dataclasses.replace(mosquitto, protocol="5")
    async with rogue_endpoint.connect(f"rogue-{config.session}") as rogue:
        await rogue.subscribe(Topics(config.session).shared_parties(group))

        async def take() -> None:
            async for delivery in rogue.deliveries():
                taken.add((decode_answer(delivery.payload).round, int(delivery.topic.rsplit("/", 1)[1])))

        thief = asyncio.create_task(take())
        try:
            outcome = await run_async(config)
        finally:
            thief.cancel()
    lost = {(r.index, int(p)) for r in outcome.rounds for p in r.lost}
    assert taken and lost == taken  # every taken answer is named, nothing else
    for r in outcome.rounds:
        assert r.status == "timeout" and r.lost.tolist() == r.absent.tolist()
    rng = np.random.default_rng(0)
    entries = [e.to_json() for e in evaluate_run(outcome, config.bits, config.mechanisms, config.function,
                                                 rule="average", alpha=0.05, rng=rng)]
    assert [entry["lost"] for entry in entries] == [r.lost.tolist() for r in outcome.rounds]
    assert lost_answers_text(outcome.rounds) is not None


async def test_a_killed_validator_stops_the_run_naming_it_without_orphans(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    pids: dict[str, int] = {}
    killed: list[float] = []

    def progress(rounds_done: int, messages: int) -> None:
        pids.update({p.name: p.pid for p in multiprocessing.active_children() if p.pid})
        if rounds_done == 2 and not killed:
            killed.append(time.monotonic())
            os.kill(pids["mpdp-validator-1"], signal.SIGKILL)

    with pytest.raises(WorkerError) as info:
        await run_async(_config(tmp_path, mosquitto, "kill", 2), progress)
    message = str(info.value)
    assert f"validator 1 (pid {pids['mpdp-validator-1']}) exited with code -9" in message, message
    assert "the run stopped" in message, message
    assert time.monotonic() - killed[0] < scaled(15.0)  # not the round's 60 s timeout
    assert sorted(pids) == ["mpdp-validator-0", "mpdp-validator-1", "mpdp-worker-0", "mpdp-worker-1"]
    assert multiprocessing.active_children() == []
    for pid in pids.values():  # gone, not merely detached
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


async def test_mpdp_observe_with_two_validators_records_the_deployed_session(
        mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """`mpdp observe --validators 2` with two `mpdp party` hosts (real processes): exit 0, the stored
    transcript is exactly what the parties published, once per (round, party)."""
    session = f"vobs-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, DEPLOYED_ROUNDS) as (deployment, seen):
        procs = [await deployment.host("a", 1), await deployment.host("b", 1),
                 await deployment.observer(1, "--validators", "2", "--allow-anonymous-broker")]
        codes = [await _finish(proc, 90) for proc in procs]
        await asyncio.sleep(scaled(0.3))  # the last messages reach the watcher
    assert codes == [0, 0, 0], deployment.logs()
    published = published_once(seen, DEPLOYED_ROUNDS)
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        stored = {(m["round"], m["party"]): m["payload"] for m in store.messages(session)}
        assert all(store.load_round(session, r).status == "complete" for r in range(DEPLOYED_ROUNDS))
        assert store.rejects(session) == {}
    assert {key: PartyMessage.from_wire(text) for key, text in stored.items()} == {
        key: PartyMessage.from_wire(text) for key, text in published.items()}
