"""End to end: worker processes running parties, the observer and a real broker; the transcript in
SQLite equals what the run returned; a killed worker stops the run within seconds, naming it."""

from __future__ import annotations

import dataclasses
import functools
import logging
import multiprocessing
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.ports import free_loopback_port
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.rounds.outcome import RunOutcome
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.seeds import round_generator
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rounds.transcript_check import verify_transcript
from mpdp.parties.session import runner
from mpdp.parties.session.runner import RunConfig, run, run_async
from mpdp.protocols.errors import ParameterError, TransportError, WorkerError
from mpdp.protocols.functions import BooleanFunction, accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import decision_rule
from mpdp.protocols.rules.rules import DecisionRule
from tests.calibration import scaled
from tests.mqtt_fixtures import brute_force_majority

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]
K, R, REPS, SEED = 12, 3, 20, 2024


def _config(tmp_path: Path, broker: BrokerSettings, **changes: object) -> RunConfig:
    rng = np.random.default_rng(5)
    bits = rng.integers(0, 2, size=(K, R)).astype(np.int8)
    bits[3, 1] = bits[8, 2] = -1
    mechanisms = tuple(
        RandomizedResponse(float("inf")) if i < 2 else RandomizedResponse(0.5 + 0.1 * i, 0.05 if i % 4 == 0 else 0.0)
        for i in range(K)
    )
    fields: dict[str, object] = dict(
        session=f"it-{tmp_path.name[-10:].replace('_', '')}", round_names=("bill a", "bill b", "bill c"),
        bits=bits, mechanisms=mechanisms, repetitions=REPS, seed=SEED, function=parse_function("majority"),
        measure=accuracy_measure("zero-one", 2), broker=broker, workers=2, store_path=tmp_path / "t.sqlite",
        round_timeout=scaled(15.0),
    )
    fields.update(changes)
    return RunConfig(**fields)  # type: ignore[arg-type]


def _check(config: RunConfig, outcome: RunOutcome) -> None:
    assert len(outcome.rounds) == R and outcome.wall_time > 0
    seeds = np.random.SeedSequence(SEED).spawn(K)
    with TranscriptStore(config.store_path) as store:
        for index, got in enumerate(outcome.rounds):
            takes_part = config.bits[:, index] >= 0
            assert (got.index, got.name, got.status) == (index, config.round_names[index], "complete")
            assert got.participants.tolist() == np.flatnonzero(takes_part).tolist()
            assert got.abstained.tolist() == np.flatnonzero(~takes_part).tolist() and got.absent.size == 0
            assert got.symbols.shape == (REPS, takes_part.sum()) and got.symbols.dtype == np.uint8
            assert (got.messages_received, got.messages_rejected) == (K, 0)
            # each party's column is its own randomized response from its own per-round generator
            for j, party in enumerate(got.participants):
                rng = round_generator(seeds[party], index)
                expected = config.mechanisms[party].sample(int(config.bits[party, index]), REPS, rng)
                assert np.array_equal(got.symbols[:, j], expected)
            # epsilon = inf parties report their bit exactly
            assert (got.symbols[:, :2] == config.bits[:2, index]).all()
            mechs = [config.mechanisms[p] for p in got.participants]
            decisions, clear = brute_force_majority(mechs, got.symbols)
            assert got.decisions.dtype == np.int64 and got.decisions.shape == (REPS,)
            assert clear.sum() >= REPS // 2 and np.array_equal(got.decisions[clear], decisions[clear])
            stored = store.load_round(config.session, index)
            for field in ("participants", "symbols", "decisions", "abstained", "absent"):
                assert np.array_equal(getattr(stored, field), getattr(got, field)), field
            assert (stored.messages_received, stored.messages_rejected) == (K, 0)
    assert multiprocessing.active_children() == []


async def test_small_run_through_mosquitto(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    progress: list[tuple[int, int]] = []
    config = _config(tmp_path, settings)
    outcome = await run_async(config, lambda rounds, messages: progress.append((rounds, messages)))
    assert (outcome.broker_kind, outcome.broker_url) == ("external", mosquitto.url)
    _check(config, outcome)
    assert progress[-1] == (R, K * R) and progress == sorted(progress)
    # a second run of the same session resumes: every round is in the store, no process starts
    again = await run_async(config)
    assert [r.decisions.tolist() for r in again.rounds] == [r.decisions.tolist() for r in outcome.rounds]


async def test_parties_multiplexed_over_one_connection_per_worker(mosquitto: BrokerEndpoint, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """--connections per-worker: the same transcript (each party's own draws) with every worker's parties on one
    MQTT connection, their answers unsigned in the workers' signed bundles; the stored transcript is proven answer
    by answer from the store and the roster's public keys (the bundles and the parties' endorsements are kept)."""
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    config = _config(tmp_path, settings, connections="per-worker")
    rosters: list[Roster] = []
    generate = Roster.generate

    def kept(mechanisms: Sequence[RandomizedResponse]) -> tuple[Roster, tuple[bytes, ...]]:
        roster, private_keys = generate(mechanisms)
        rosters.append(roster)
        return roster, private_keys

    monkeypatch.setattr(Roster, "generate", staticmethod(kept))
    _check(config, await run_async(config))
    with TranscriptStore(config.store_path) as store:
        assert {bytes(p)[:1] for (p,) in store.query("SELECT payload FROM messages WHERE payload IS NOT NULL")} == {
            b"\x05"}  # every answer unsigned, in a bundle
        assert verify_transcript(store, config.session, rosters[0].public_keys) == K * R


def test_small_run_through_the_embedded_broker(tmp_path: Path) -> None:
    config = _config(tmp_path, BrokerSettings.from_url("embedded", environ={}))
    outcome = run(config)
    assert outcome.broker_kind == "embedded" and outcome.seed_entropy == SEED
    _check(config, outcome)


def test_unreachable_broker_fails_before_any_process_starts(tmp_path: Path) -> None:
    url = f"mqtt://127.0.0.1:{free_loopback_port()}"
    with pytest.raises(TransportError, match=url.replace(".", r"\.")):
        run(_config(tmp_path, BrokerSettings.from_url(url + "?timeout=2", environ={}, reconnect_window=0.0)))
    assert multiprocessing.active_children() == []
    assert not (tmp_path / "t.sqlite").exists()


class _SlowRule:
    """A decision rule that takes ``seconds`` (blocking) to decide: what the O(k^2) posterior of the average
    rule takes at k = 10^4 and more (a minute and more), in seconds."""

    def __init__(self, rule: DecisionRule, seconds: float) -> None:
        self._rule, self._seconds = rule, seconds

    def __getattr__(self, name: str) -> object:
        return getattr(self._rule, name)

    def decide(self, symbols: np.ndarray, **options: object) -> object:
        time.sleep(self._seconds)
        return self._rule.decide(symbols, **options)


async def test_a_decision_longer_than_the_observer_grace_keeps_the_multiplexed_workers(
        mosquitto: BrokerEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The observer's decision of round 0 takes 4 s, twice the workers' 2 s observer grace (both scaled) (as the average
    rule's posterior takes minutes at k = 2 x 10^4 against the default 60 s grace): the coordinator's
    heartbeat goes on meanwhile, so no party leaves and both rounds are complete (a decision in the event
    loop silenced it: every worker gave up during round 0's close, with an empty CancelledError, and the
    run failed)."""
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    average = functools.partial(decision_rule, engine="posterior")
    slow_rounds = [scaled(4.0)]  # the first decision only

    def slow(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
             measure: np.ndarray) -> DecisionRule:
        seconds = slow_rounds.pop() if slow_rounds else 0.0
        return _SlowRule(average(mechanisms, function, measure), seconds)  # type: ignore[return-value]

    specs = runner.worker_specs
    monkeypatch.setattr(runner, "worker_specs", lambda *args: [
        dataclasses.replace(spec, observer_grace=scaled(2.0)) for spec in specs(*args)])
    config = _config(tmp_path, settings, connections="per-worker", rule_factory=slow,
                     round_names=("bill a", "bill b"), bits=_config(tmp_path, settings).bits[:, :2])
    with caplog.at_level(logging.WARNING, "mpdp"):
        outcome = await run_async(config)
    assert [(r.status, r.absent.size) for r in outcome.rounds] == [("complete", 0), ("complete", 0)]
    assert not slow_rounds and [r.getMessage() for r in caplog.records if r.name == "mpdp.run"] == []
    assert multiprocessing.active_children() == []


async def test_workers_lost_after_every_answer_of_the_last_round_are_a_warning_not_a_failure(
        mosquitto: BrokerEndpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """Every party answered the last of two rounds; while it closes (a 1.5 s decision), the observer's event
    loop stalls (a blocking progress callback) past the workers' 1.5 s observer grace (both scaled) until both workers
    have given up and exited with code 1. The transcript is complete, so the run succeeds, and a warning
    names each worker, its parties, its exit code (and its cause once its report is read)."""
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    average = functools.partial(decision_rule, engine="posterior")

    def slow(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
             measure: np.ndarray) -> DecisionRule:
        return _SlowRule(average(mechanisms, function, measure), scaled(1.5))  # type: ignore[return-value]

    specs = runner.worker_specs
    monkeypatch.setattr(runner, "worker_specs", lambda *args: [
        dataclasses.replace(spec, observer_grace=scaled(1.5)) for spec in specs(*args)])
    stalled: list[float] = []
    patience = scaled(20)

    def stall_once_answered(rounds: int, messages: int) -> None:
        if rounds == 1 and messages == 2 * K and not stalled:  # the last round is complete and closing
            start = time.monotonic()
            while multiprocessing.active_children() and time.monotonic() - start < patience:
                time.sleep(0.05)  # until the workers have left
            stalled.append(time.monotonic() - start)

    config = _config(tmp_path, settings, connections="per-worker", rule_factory=slow,
                     round_names=("bill a", "bill b"), bits=_config(tmp_path, settings).bits[:, :2])
    with caplog.at_level(logging.WARNING, "mpdp"):
        outcome = await run_async(config, stall_once_answered)
    assert [(r.status, r.absent.size) for r in outcome.rounds] == [("complete", 0), ("complete", 0)]
    assert stalled and stalled[0] < patience, stalled
    warnings = [r.getMessage() for r in caplog.records if r.name == "mpdp.run"]
    assert len(warnings) == 1 and warnings[0].endswith(
        "after every party answered the last round (1): the transcript is complete"), warnings
    assert "(parties 0-5)" in warnings[0] and "(parties 6-11)" in warnings[0], warnings
    assert warnings[0].count("exited with code 1") == 2, warnings


async def test_a_killed_worker_stops_the_run_within_seconds_naming_it(mosquitto: BrokerEndpoint,
                                                                    tmp_path: Path) -> None:
    """A worker SIGKILLed once round 0 is decided (3 trials): the event loop watches the processes'
    sentinels, so the run stops during round 1 within seconds, not at its 60 s timeout, with one line naming
    the worker, its parties, its exit code and the signal; round 0 stays recorded, no process is left."""
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    stopped: list[float] = []
    for trial in range(3):
        config = _config(tmp_path, settings, round_timeout=60.0, session=f"kill-{trial}-{tmp_path.name[-8:]}",
                         store_path=tmp_path / f"t{trial}.sqlite")
        killed: list[float] = []

        def kill_after_first_round(rounds_done: int, messages: int) -> None:
            if rounds_done == 1 and not killed:
                worker = max(multiprocessing.active_children(), key=lambda p: p.name)  # mpdp-worker-1
                os.kill(worker.pid, signal.SIGKILL)  # type: ignore[arg-type]
                killed.append(time.monotonic())

        with pytest.raises(WorkerError) as info:
            await run_async(config, kill_after_first_round)
        stopped.append(time.monotonic() - killed[0])
        assert str(info.value) == ("worker process 1 (parties 6-11) exited with code -9 (killed by SIGKILL) without "
                                   "reporting a cause (during round 1 ('bill b'); the run stopped)")
        assert multiprocessing.active_children() == []
        with TranscriptStore(config.store_path) as store:
            assert store.recorded_rounds(config.session) == [0]
    assert max(stopped) < min(scaled(10.0), 50.0), stopped  # the round would have waited 60 s
    print(f"SIGKILL to error: {', '.join(f'{s:.2f}' for s in stopped)} s")


def test_run_config_validates_its_fields(tmp_path: Path) -> None:
    settings = BrokerSettings.from_url("embedded", environ={})
    cases = {
        "bits": dict(bits=np.zeros((K, R + 1), np.int8)),
        "values 0, 1, -1": dict(bits=np.full((K, R), 2, np.int8)),
        "repetitions": dict(repetitions=0),
        "workers": dict(workers=0),
        "mechanisms": dict(mechanisms=(1.0,) * K),
        "round_timeout": dict(round_timeout=float("inf")),
        "session": dict(session="a/b"),
        "measure": dict(measure=np.zeros(3)),
        "seed": dict(seed=-1),
        "connections": dict(connections="per-host"),
    }
    for needle, change in cases.items():
        with pytest.raises(ParameterError, match=needle):
            _config(tmp_path, settings, **change)
    config = _config(tmp_path, settings)
    assert config.bits.dtype == np.int8 and not config.bits.flags.writeable
    assert _config(tmp_path, settings, workers=None).workers == os.cpu_count()
