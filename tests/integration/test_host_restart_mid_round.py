"""A party host SIGKILLed mid-round, after it answered, and restarted while the round is still open (real
processes: `mpdp keys`, an `mpdp party` host, `mpdp observe`, a real mosquitto). The round's announcement
went out before the new host connected; the observer's heartbeat names the open round, and the restarted
host re-sends the SAME signed bytes from its answer record (never a fresh draw). The other host's parties
(5-8) are held back by the test, which reported them ready with their keys and answers for them only once
the re-send is seen, so the round stays open across the restart. And a host stopped (SIGTERM) before a round's
announcement and restarted while that round is open: its "ready" makes the observer announce the round again,
and the host answers it (before, it was recorded absent once the round timed out)."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.session_files import party_key_path, read_private_key, read_roster
from mpdp.parties.rounds.store import TranscriptStore
from tests.calibration import scaled, scaled_arg
from tests.integration.test_deploy import _finish
from tests.integration.test_party_restart import HOSTS, K, _Deployment, watched_deployment

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

HELD = range(5, 9)  # host b's parties: the test speaks for them
hosted = range(HOSTS["a"][0], 5)  # host a's parties, run by `mpdp party`


def _held_keys(keys: Path) -> dict[int, bytes]:
    """The private keys of the parties ``HELD`` from the keys folder ``keys`` of `mpdp keys`."""
    facts = read_roster(keys / "roster.json")
    return {p: read_private_key(party_key_path(keys / "parties-5-8", p), facts, p) for p in HELD}


async def _poll(condition: Callable[[], bool], seconds: float) -> None:
    """Return once ``condition()`` is true (polled every 10 ms); TimeoutError after ``seconds`` (an idle
    machine's bound, scaled)."""
    async with asyncio.timeout(scaled(seconds)):
        while not condition():
            await asyncio.sleep(0.01)


@contextlib.asynccontextmanager
async def _held_back_host(endpoint: BrokerEndpoint, session: str, keys: dict[int, bytes]) -> AsyncIterator[None]:
    """Report parties ``HELD`` ready (signed by each one's key) every 0.3 s until round 0 is announced."""
    topics = Topics(session)

    async def beacon() -> None:
        async with endpoint.connect(f"test-{session}-held") as transport:
            await transport.subscribe(topics.rounds)
            while True:
                status = WorkerStatus.signed([keys[p] for p in HELD], session=session, worker=HELD[0],
                                             state="ready", parties=tuple(HELD))
                await transport.publish(topics.status, status.model_dump_json())
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(0.3):
                        async for delivery in transport.deliveries():
                            if Announcement.model_validate_json(delivery.payload).kind == "round":
                                return

    task = asyncio.create_task(beacon())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def _answer_held(endpoint: BrokerEndpoint, session: str, keys: dict[int, bytes], index: int) -> None:
    """Publish the held-back parties' answers to round ``index`` (signed by their keys)."""
    async with endpoint.connect(f"test-{session}-held-{index}") as transport:
        for p in HELD:
            answer = PartyMessage.signed(keys[p], session=session, round=index, party=p, repetitions=1,
                                         symbols=np.array([p % 2], dtype=np.uint8))
            await transport.publish(Topics(session).party(p), answer.to_wire())


@contextlib.asynccontextmanager
async def _started(mosquitto: BrokerEndpoint, tmp_path: Path, tag: str, rounds: int) -> AsyncIterator[
        tuple[str, _Deployment, list[PartyMessage], dict[int, bytes], asyncio.subprocess.Process,
              asyncio.subprocess.Process]]:
    """A deployment of ``rounds`` rounds: host a (`mpdp party`), parties ``HELD`` reported ready by the test, the
    observer (rounds open 60 s after their last answer); yields the session, the deployment, the messages seen,
    the held parties' keys, host a and the observer."""
    session = f"{tag}-{tmp_path.name[-10:].replace('_', '')}"
    async with watched_deployment(mosquitto, tmp_path, session, rounds) as (deployment, seen):
        keys = _held_keys(deployment.keys)
        first = await deployment.host("a", 1)
        async with _held_back_host(mosquitto, session, keys):
            yield session, deployment, seen, keys, first, await deployment.observer(1, "--round-timeout",
                                                                                   scaled_arg(60))


async def test_host_killed_mid_round_resends_its_recorded_answer(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    async with _started(mosquitto, tmp_path, "mid", 1) as (session, deployment, seen, keys, first, observer):

        def answered(copies: int) -> bool:
            counts = Counter(m.party for m in seen if m.round == 0)
            return all(counts[p] >= copies for p in hosted)

        await _poll(lambda: answered(1), 30)  # host a answered round 0, which stays open
        sent = {m.party: m.to_wire() for m in seen if m.round == 0}
        first.kill()
        assert await first.wait() == -signal.SIGKILL and observer.returncode is None
        second = await deployment.host("a", 2)
        await _poll(lambda: answered(2), 40)  # the restarted host re-sent round 0, not yet closed
        assert observer.returncode is None and second.returncode is None
        await _answer_held(mosquitto, session, keys, 0)  # host b answers at last
        codes = [await _finish(proc, 30) for proc in (observer, second)]
    assert codes == [0, 0], deployment.logs()

    # every copy host a published for round 0, before and after its restart, is the same signed bytes
    copies = {p: {m.to_wire() for m in seen if (m.round, m.party) == (0, p)} for p in hosted}
    assert copies == {p: {sent[p]} for p in hosted}
    assert all(PartyMessage.from_wire(sent[p]).kind == "symbols" for p in hosted)
    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        stored = [(m["round"], m["party"], m["payload"]) for m in store.messages(session)]
        assert [(r, p) for r, p, _ in stored] == [(0, p) for p in range(K)]  # one message per (round, party)
        assert {p: text for _, p, text in stored if p in hosted} == {p: sent[p] for p in hosted}
        outcome = store.load_round(session, 0)
        assert outcome.status == "complete" and outcome.participants.tolist() == list(range(K))
        assert not any(reason == "duplicate" for _, reason in store.rejects(session))
    with deployment.record("a") as record:
        for p in hosted:  # the ledger: one charge, for the one distinct answer
            assert record.ledger(session, p, 1e-6).rounds == (0,)
            assert record.answers(session, p) == {0: sent[p]}


async def test_host_restarted_during_a_round_it_missed_answers_it(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    async with _started(mosquitto, tmp_path, "mis", 2) as (session, deployment, seen, keys, first, observer):

        def answered(index: int) -> bool:
            return {m.party for m in seen if m.round == index} >= set(hosted)

        await _poll(lambda: answered(0), 30)  # host a answered round 0, which stays open
        first.terminate()  # as an operator stops it
        await _finish(first, 15)
        async with mosquitto.connect(f"test-{session}-rounds") as rounds:
            await rounds.subscribe(Topics(session).rounds)
            await _answer_held(mosquitto, session, keys, 0)  # round 0 completes; round 1 goes out, host a is down
            async with asyncio.timeout(scaled(30)):
                async for delivery in rounds.deliveries():
                    if Announcement.model_validate_json(delivery.payload).round == 1:
                        break
        await asyncio.sleep(scaled(3))  # host a's last "ready" is seconds old (engine.REJOIN_GAP)
        assert not answered(1) and observer.returncode is None
        second = await deployment.host("a", 2)
        await _poll(lambda: answered(1), 30)  # well inside the round's 60 s quiet time: the host answered round 1
        await _answer_held(mosquitto, session, keys, 1)
        codes = [await _finish(proc, 30) for proc in (observer, second)]
    assert codes == [0, 0], deployment.logs()

    with TranscriptStore(tmp_path / "out1" / "transcripts.sqlite") as store:
        assert [store.load_round(session, r).status for r in (0, 1)] == ["complete", "complete"]
        stored = {(m["round"], m["party"]): m["payload"] for m in store.messages(session)}
    with deployment.record("a") as record:
        for p in hosted:  # one answer per round, the one published (every copy the same bytes), one charge each
            answers = record.answers(session, p)
            assert {r: {m.to_wire() for m in seen if (m.round, m.party) == (r, p)} for r in (0, 1)} \
                == {r: {answers[r]} for r in (0, 1)}
            assert {r: stored[r, p] for r in (0, 1)} == answers
            assert record.ledger(session, p, 1e-6).rounds == (0, 1)
