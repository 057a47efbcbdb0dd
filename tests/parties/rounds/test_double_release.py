"""A double release caught by the observer: two party processes for one party (same key, each with a fresh
answer record) answer the same round with fresh randomness. The engine keeps both signed answers (the first
in ``messages``, the second in ``double_releases``), names the party at ERROR, lists it in the round's
``double_released`` and the privacy ledger charges both answers; the same bytes re-sent are no double release."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.messages import PartyMessage, decode_answer
from mpdp.broker.signing import load_public_key, verify_message
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.outcome import double_release_text
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.privacy import ledgers_from_rounds, privacy_section
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import Party
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, TOPICS

pytestmark = pytest.mark.timeout(30)

REPS = 8
MECHANISMS = (RandomizedResponse(1.0), RandomizedResponse(1.0))


def _party(roster_keys: tuple[bytes, ...], party: int, seed: int, broker: InMemoryBroker, record: Path) -> Party:
    spec = PartySpec(party, np.array([1], np.int8), MECHANISMS[party], roster_keys[party],
                     np.random.SeedSequence(seed), None, PrivacyLedger(1e-6))
    return Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=10.0, record=AnswerRecord(record))


def _observer(roster: Roster, store: TranscriptStore) -> Observer:
    return Observer(TOPICS, roster, store, function=parse_function("majority"),
                    measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)


async def _until(condition: object, seconds: float = 5.0) -> None:
    async with asyncio.timeout(seconds):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.01)


async def test_two_hosts_of_one_party_are_a_double_release_kept_named_and_charged(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    roster, keys = Roster.generate(MECHANISMS)
    broker = InMemoryBroker()
    # party 0 served twice (same key, another record, other randomness), party 1 once
    parties = [_party(keys, 0, 1, broker, tmp_path / "a.sqlite"), _party(keys, 0, 2, broker, tmp_path / "b.sqlite"),
               _party(keys, 1, 3, broker, tmp_path / "c.sqlite")]
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s", 2, REPS, ["r0"], mode="simulation (seeded generators)")
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, _observer(roster, store),
                               repetitions=REPS, round_timeout=5.0) as engine:
            ready = [asyncio.Event() for _ in parties]
            serving = [asyncio.create_task(p.run(e.set)) for p, e in zip(parties, ready, strict=True)]
            for event in ready:
                await event.wait()
            with caplog.at_level(logging.ERROR, "mpdp.rounds"):
                outcome = await engine.run_round(0, "r0")
                # the second answer of party 0 may come before the close or after it (then it is "late")
                await _until(lambda: store.double_releases("s", 0).size == 1)
            for task in serving:
                task.cancel()
        rejects = store.rejects("s")
        doubled = store.query("SELECT party, kind, payload FROM double_releases WHERE session = 's'")
        first = store.recorded_payload("s", 0, 0)
        reloaded = store.load_round("s", 0)
    assert outcome.participants.tolist() == [0, 1]
    assert rejects == {(0, "double-release"): 1}
    assert reloaded.double_released.tolist() == [0]
    # both answers are kept, different, and each verifies with party 0's roster key
    assert len(doubled) == 1 and doubled[0][:2] == (0, "symbols") and first is not None and doubled[0][2] != first
    public = load_public_key(roster.public_keys[0])
    assert all(verify_message(decode_answer(bytes(p)), public) for p in (first, doubled[0][2]))
    assert sorted({parties[0].loop.sent[0], parties[1].loop.sent[0]}) == sorted({first, bytes(doubled[0][2])})
    # named at ERROR, once
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and "DOUBLE RELEASE: party 0 " in errors[0]
    # the ledger charges both answers of party 0: 2 x REPS releases in one round
    ledgers = ledgers_from_rounds([reloaded], MECHANISMS, REPS, 1e-6)
    assert [ledger.spent().mechanisms for ledger in ledgers] == [2 * REPS, REPS]
    assert ledgers[0].spent().epsilon_basic == pytest.approx(2 * REPS * 1.0)
    section = privacy_section([ledger.spent() for ledger in ledgers], [reloaded], None, 1e-6, REPS)
    assert section["summary"]["parties_double_released"] == [0]  # type: ignore[index]
    text = double_release_text([reloaded])
    assert text is not None and "round 0 (r0): parties 0" in text


async def test_the_same_answer_re_sent_after_the_round_closed_is_late_not_a_double_release(tmp_path: Path) -> None:
    roster, keys = Roster.generate(MECHANISMS)
    broker = InMemoryBroker()
    parties = [_party(keys, p, p + 1, broker, tmp_path / f"{p}.sqlite") for p in (0, 1)]
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s", 2, REPS, ["r0", "r1"], mode="simulation (seeded generators)")
        async with broker.connect("resender") as resender, open_engine(
                broker, TOPICS, roster, store, COORD_PRIVATE, _observer(roster, store),
                repetitions=REPS, round_timeout=5.0) as engine:
            ready = [asyncio.Event() for _ in parties]
            serving = [asyncio.create_task(p.run(e.set)) for p, e in zip(parties, ready, strict=True)]
            for event in ready:
                await event.wait()
            outcome = await engine.run_round(0, "r0")
            recorded = store.recorded_payload("s", 0, 0)
            assert recorded is not None
            await resender.publish(TOPICS.party(0), recorded)  # the recorded bytes again: late only
            await _until(lambda: engine.rejections.total == 1)
            assert store.double_releases("s", 0).size == 0
            # another, validly signed answer to the recorded round is a double release
            second = PartyMessage.signed(keys[0], session="s", round=0, party=0, repetitions=REPS,
                                         symbols=np.zeros(REPS, np.uint8)).model_dump_json()
            await resender.publish(TOPICS.party(0), second)
            await _until(lambda: engine.rejections.total == 2)
            for task in serving:
                task.cancel()
        rejects = store.rejects("s")
        doubled = store.double_releases("s", 0).tolist()
    assert outcome.status == "complete" and doubled == [0]
    assert rejects == {(0, "late"): 1, (0, "double-release"): 1}


async def test_two_different_early_answers_are_a_double_release_when_the_round_opens(tmp_path: Path) -> None:
    roster, keys = Roster.generate(MECHANISMS)
    broker = InMemoryBroker()

    def answer(party: int, symbol: int | None) -> bytes:
        fields: dict[str, object] = dict(session="s", round=0, party=party, repetitions=REPS)
        fields.update(reason="policy") if symbol is None else fields.update(symbols=np.full(REPS, symbol, np.uint8))
        return PartyMessage.signed(keys[party], **fields).to_wire()  # type: ignore[arg-type]

    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s", 2, REPS, ["r0"], mode="simulation (seeded generators)")
        async with broker.connect("sender") as sender, open_engine(
                broker, TOPICS, roster, store, COORD_PRIVATE, _observer(roster, store),
                repetitions=REPS, round_timeout=5.0) as engine:
            # before any announcement (a restarted observer's persistent session): kept for round 0
            first = answer(0, 1)
            for party, payload in ((0, first), (0, first), (0, answer(0, 0)), (0, answer(0, 1)), (1, answer(1, None))):
                await sender.publish(TOPICS.party(party), payload)
            await asyncio.sleep(0.1)
            outcome = await engine.run_round(0, "r0")
        rejects = store.rejects("s")
    assert outcome.status == "complete" and outcome.participants.tolist() == [0]
    assert outcome.double_released.tolist() == [0]  # the first two distinct answers: one double release kept
    assert rejects == {(0, "double-release"): 1}
