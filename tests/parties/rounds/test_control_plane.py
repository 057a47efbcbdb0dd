"""The signed, replay-proof control plane on the in-memory transport: forged, unsigned, replayed, expired
and other-session messages of every kind (worker status, round and end announcements, transcripts) are
rejected with their reason and counted, and change nothing; the freshness guard and the rate-limited
reject log on their own."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.control import FreshnessGuard, next_sequence, stamp
from mpdp.broker.decision_messages import TranscriptMessage
from mpdp.broker.messages import Announcement, WorkerStatus
from mpdp.broker.signing import generate_key_pair, sign_message, signature_text
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.answer_record import AnswerRecord
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.rejections import RejectLog
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.decisions import PartyDecider, PartyDecisionSpec
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import Party
from mpdp.parties.session import worker as worker_module
from mpdp.parties.session.worker import STATUS_PARTIES, WorkerSpec, status_reports
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, TOPICS, _drain, _end, _serve

pytestmark = pytest.mark.timeout(20)

SESSION = "s"  # the party-run tests' session, coordinator and helpers
STRANGER, _ = generate_key_pair()
RR = RandomizedResponse(0.7)


def _expired(message: Announcement | WorkerStatus | TranscriptMessage, key: bytes) -> str:
    """``message`` re-signed with an expiry one second in the past (a genuinely signed, stale message)."""
    stale = message.model_copy(update={"expires_ms": int(time.time() * 1000) - 1000})
    if isinstance(stale, WorkerStatus):  # one party's report: its one signature
        return stale.model_copy(update={"signatures": (signature_text(stale.digest(), key),)}).model_dump_json()
    return sign_message(stale, key).model_dump_json()


def _round(index: int, key: bytes = COORD_PRIVATE, session: str = SESSION) -> Announcement:
    return Announcement.signed(key, session=session, kind="round", round=index, repetitions=1)


# --- the freshness guard and the reject log -------------------------------------------------------------


class _Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 50), st.sampled_from(["a", "b"])), max_size=40))
def test_the_guard_accepts_exactly_the_running_maxima_per_sender(sends: list[tuple[int, str]]) -> None:
    """Law: a message is accepted iff its sequence beats every earlier accepted one of its sender."""
    guard = FreshnessGuard(clock=_Clock(0.0))
    best: dict[str, int] = {}
    for sequence, sender in sends:
        message = _round(0).model_copy(update={"sequence": sequence, "expires_ms": 1})
        fresh = sequence > best.get(sender, 0)
        try:
            guard.check(message, sender, "m")
        except ProtocolViolation as exc:
            assert not fresh and exc.reason == "replay"
        else:
            assert fresh
            best[sender] = sequence


def test_the_guard_refuses_at_the_expiry_and_sequences_increase() -> None:
    clock = _Clock(1000.0)
    guard = FreshnessGuard(clock=clock)
    message = _round(0).model_copy(update={"expires_ms": 1_000_500})
    clock.now = 1000.5  # exactly at the expiry: void
    with pytest.raises(ProtocolViolation, match="expired"):
        guard.check(message, "c", "m")
    assert guard.last("c") == 0  # nothing remembered of a refused message
    clock.now = 1000.499
    guard.check(message, "c", "m", record=False)  # checked only: nothing remembered
    assert guard.last("c") == 0
    guard.check(message, "c", "m")
    assert guard.last("c") == message.sequence
    sequences = [next_sequence() for _ in range(1000)]
    assert all(b > a for a, b in zip(sequences, sequences[1:], strict=False))
    before = time.time()
    assert before * 1000 + 1999 <= stamp(2.0)["expires_ms"] <= time.time() * 1000 + 2000
    with pytest.raises(ValueError, match="lifetime"):
        stamp(0.0)


def test_since_its_opening_the_guard_judges_by_sequence_not_age() -> None:
    """A message stamped (its sequence: the sender's clock in ns) at or after ``since_ns`` is accepted past its
    expiry (a starved observer read two "ready" parts 1.4 s and 7.0 s after they expired, 10^6 parties), once:
    sent again it is a replay; one stamped before ``since_ns`` still expires."""
    clock = _Clock(2000.0)  # 1,000 s after the guard opened: every message below has expired
    opened = 1000 * 10**9
    guard = FreshnessGuard(clock=clock, since_ns=opened)
    late = _round(0).model_copy(update={"sequence": opened, "expires_ms": 1_600_000})
    before = _round(0).model_copy(update={"sequence": opened - 1, "expires_ms": 1_600_000})
    with pytest.raises(ProtocolViolation, match="expired"):
        guard.check(before, "w", "m")
    guard.check(late, "w", "m")
    assert guard.last("w") == opened
    with pytest.raises(ProtocolViolation, match="replay"):
        guard.check(late, "w", "m")
    newer = late.model_copy(update={"sequence": opened + 5})
    guard.check(newer, "w", "m", record=False)  # checked only
    assert guard.last("w") == opened


def test_rejections_are_counted_and_logged_at_most_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    clock = _Clock(0.0)
    rejects = RejectLog(logging.getLogger("mpdp.test"), "observer", interval=5.0, clock=clock)
    with caplog.at_level(logging.WARNING, "mpdp.test"):
        for i in range(1000):
            clock.now = i * 0.004  # 1000 forgeries in 4 s
            rejects.reject("signature", f"forgery {i}")
        rejects.reject("schema", "junk")
        clock.now = 5.0
        rejects.reject("signature", "forgery 1000")
    assert rejects.counts == {"signature": 1001, "schema": 1} and rejects.total == 1002
    assert [r.getMessage() for r in caplog.records] == [
        "observer: rejected a message (signature): forgery 0",
        "observer: rejected a message (schema): junk",
        "observer: rejected a message (signature): forgery 1000 (and 999 more since the last report)",
    ]


def test_one_message_refused_by_many_receivers_is_one_line(caplog: pytest.LogCaptureFixture) -> None:
    """A deployed host's parties (one connection each) refused the announcement a broker restart delayed
    past its re-announcement: one WARNING line per party (218 per host of the House). One line now; each
    party still counts it, and a different message or one after the interval is logged again."""
    clock = _Clock(0.0)
    parties = [RejectLog(logging.getLogger("mpdp.test-shared"), f"party {i}", interval=5.0, clock=clock)
               for i in range(10)]
    stale = "rounds round 31: sequence 1 <= 2"
    with caplog.at_level(logging.WARNING, "mpdp.test-shared"):
        for party in parties:
            party.reject("replay", stale)
        parties[3].reject("replay", "rounds round 32: sequence 3 <= 4")
        clock.now = 5.0
        parties[4].reject("replay", stale)
    assert [p.counts["replay"] for p in parties] == [1, 1, 1, 2, 2, 1, 1, 1, 1, 1]
    assert [r.getMessage() for r in caplog.records] == [
        f"party 0: rejected a message (replay): {stale}",
        "party 3: rejected a message (replay): rounds round 32: sequence 3 <= 4",
        f"party 4: rejected a message (replay): {stale}",
    ]


# --- worker status at the observer ----------------------------------------------------------------------


async def test_forged_unsigned_replayed_and_expired_status_reports_change_nothing(tmp_path: Path) -> None:
    """Issue 9: an anonymous "failed" stopped the observer and a forged "ready" made it decide from
    nothing. Only the genuine "ready" of worker 0 (signed by the roster keys of parties 0 and 1) counts."""
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RR,) * 3)

    def status(signers: tuple[bytes, ...], state: str = "ready", worker: int = 0, parties: tuple[int, ...] = (0, 1),
               session: str = SESSION) -> WorkerStatus:
        return WorkerStatus.signed(signers, session=session, worker=worker, state=state,  # type: ignore[arg-type]
                                   parties=parties, detail="attacker's text" if state == "failed" else "")

    genuine = status((keys[0], keys[1])).model_dump_json()
    unsigned = json.dumps({k: v for k, v in json.loads(genuine).items() if k != "signatures"} | {"state": "failed"})
    attacks = [  # the first before worker 0's genuine "ready", the others after it
        # a host holding party 0's key claims party 1 too (issue 9's last gap): signed by 0 only (after the
        # genuine "ready", a "ready" of worker 0 again changes nothing: only its first signature is checked)
        ("signature", status((keys[0], keys[0]), worker=0).model_dump_json()),
        ("schema", unsigned),  # the old, unsigned "failed" of issue 9
        ("schema", json.dumps({"version": 1, "session": SESSION, "worker": 0, "state": "failed", "parties": [0]})),
        ("schema", json.dumps(json.loads(genuine) | {"parties": [0, 1, 2]})),  # a party added, no signature for it
        ("signature", status((STRANGER, STRANGER), "failed").model_dump_json()),  # a stranger's key
        ("signature", status((STRANGER,), worker=2, parties=(2,)).model_dump_json()),  # a forged "ready"
        ("signature", status((keys[2], keys[2]), "failed").model_dump_json()),  # party 2's key for 0's and 1's
        ("signature", status((STRANGER, keys[1])).model_dump_json()),  # a "ready" again: its first signature fails
        ("signature", status((keys[0], STRANGER), "failed").model_dump_json()),
        ("signature", genuine.replace('"ready"', '"failed"')),  # tampered
        ("session", status((keys[0], keys[1]), "failed", session="other").model_dump_json()),
        ("unknown-party", status((keys[0], STRANGER), parties=(0, 7)).model_dump_json()),
        ("expired", _expired(status((keys[2],), "failed", worker=2, parties=(2,)), keys[2])),
        ("replay", genuine),  # the genuine report captured and sent again
    ]
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, 3, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1,
                               round_timeout=1.0) as engine, broker.connect("attacker") as attacker:
            for text in (attacks[0][1], genuine, *(text for _, text in attacks[1:])):
                await attacker.publish(TOPICS.status, text)
            await asyncio.sleep(0.05)
            assert list(engine.ready_workers) == [0] and engine.ready_workers[0].parties == (0, 1)
            assert engine.failed_workers == {}
            expected: dict[str, int] = {}
            for reason, _ in attacks:
                expected[reason] = expected.get(reason, 0) + 1
            assert dict(engine.rejections.counts) == expected
            assert engine.messages_rejected == len(attacks)
            # a "ready" of worker 0 again, signed for party 0 only, its sequence far ahead: it changes nothing
            # (not the last sequence), so the newer genuine report below still counts
            ahead = status((keys[0], keys[1])).model_copy(update={"sequence": 2**62})
            ahead = ahead.model_copy(update={"signatures": tuple(signature_text(ahead.digest(), key)
                                                                 for key in (keys[0], STRANGER))})
            await attacker.publish(TOPICS.status, ahead.model_dump_json())
            later = status((keys[0], keys[1]), "failed").model_dump_json()  # a newer genuine report counts
            await attacker.publish(TOPICS.status, later)
            await asyncio.sleep(0.05)
            assert list(engine.failed_workers) == [0]
        assert {reason: n for (_, reason), n in store.rejects(SESSION).items()} == expected


async def test_a_worker_reports_ready_in_parts_and_the_observer_joins_them(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker of more than STATUS_PARTIES parties reports "ready" in parts (10^6 parties over 2 workers sent
    one 49 MB report, over mosquitto's 16 MB packet limit: the run waited for "ready" until its timeout).
    Each part is verified in full and joined to the worker's report; a part replayed, or forged, is refused and
    joins nothing. (Parts of 4 parties here; a part of STATUS_PARTIES parties is about 0.5 MB.)"""
    monkeypatch.setattr(worker_module, "STATUS_PARTIES", 4)
    broker = InMemoryBroker()
    mechanisms = (RR,) * 11
    roster, keys = Roster.generate(mechanisms)
    spec = WorkerSpec(0, broker, SESSION, COORD_PUBLIC, tuple(
        PartySpec(i, np.array([1], np.int8), RR, keys[i]) for i in range(len(mechanisms))))
    parts = list(status_reports(spec, "ready"))
    assert [p.parties for p in parts] == [(0, 1, 2, 3), (4, 5, 6, 7), (8, 9, 10)]
    per_party = (len(parts[0].model_dump_json()) - len(parts[2].model_dump_json()))
    assert STATUS_PARTIES * per_party < 2**19  # a full part, as sent: under 0.5 MB
    forged = parts[2].model_copy(update={"signatures": (signature_text(parts[2].digest(), STRANGER),) * 3})
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, roster.k, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1,
                               round_timeout=1.0) as engine, broker.connect("worker") as worker:
            for part in (parts[0], forged, parts[1], parts[0]):
                await worker.publish(TOPICS.status, part.model_dump_json())
            await asyncio.sleep(0.2)
            assert engine.ready_workers[0].parties == tuple(range(8))
            assert dict(engine.rejections.counts) == {"signature": 1, "replay": 1}  # the first part replayed
            await worker.publish(TOPICS.status, parts[2].model_dump_json())
            await asyncio.sleep(0.1)
            joined = engine.ready_workers[0]
            assert joined.parties == tuple(range(roster.k))
            assert joined.signatures == parts[0].signatures + parts[1].signatures + parts[2].signatures


async def test_ready_parts_stamped_after_the_observer_opened_join_though_read_after_their_expiry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 10^6-party run: the starved observer read two of worker 1's parts after their lifetime and refused
    them ("expired"), so their parties' answers were refused and round 1 closed only at its timeout. A part
    stamped after the engine opened is judged by its sequence: it joins, late as it is; sent again it is a
    replay; a part stamped before the engine opened still expires."""
    monkeypatch.setattr(worker_module, "STATUS_PARTIES", 2)
    broker = InMemoryBroker()
    roster, keys = Roster.generate((RR,) * 4)
    spec = WorkerSpec(0, broker, SESSION, COORD_PUBLIC, tuple(
        PartySpec(i, np.array([1], np.int8), RR, keys[i]) for i in range(4)))
    parts = list(status_reports(spec, "ready"))
    ahead = 20 * 10**9  # stamped 20 s after now: after the engine opened, beyond its 10 s clock margin

    def restamped(part: WorkerStatus, sequence: int) -> str:
        stale = part.model_copy(update={"sequence": sequence, "expires_ms": int(time.time() * 1000) - 1000})
        signers = keys[stale.parties[0]:stale.parties[-1] + 1]
        return stale.model_copy(update={"signatures": tuple(signature_text(stale.digest(), k) for k in signers)
                                        }).model_dump_json()

    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(SESSION, roster.k, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        early = restamped(parts[0], time.time_ns() - 10**9)  # stamped before the engine opened, expired
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1,
                               round_timeout=1.0) as engine, broker.connect("worker") as worker:
            first, second = restamped(parts[0], time.time_ns() + ahead), restamped(parts[1], time.time_ns() + ahead + 1)
            for text in (early, first, second, second):
                await worker.publish(TOPICS.status, text)
            await asyncio.sleep(0.2)
            assert engine.ready_workers[0].parties == (0, 1, 2, 3)
            assert dict(engine.rejections.counts) == {"expired": 1, "replay": 1}


# --- announcements at a party ---------------------------------------------------------------------------


def _party(record: AnswerRecord | None = None, bits: tuple[int, ...] = (1, 0, 1)) -> tuple[Party, InMemoryBroker]:
    spec = PartySpec(1, np.array(bits, np.int8), RR, generate_key_pair()[0], np.random.SeedSequence(3), None,
                     PrivacyLedger(1e-6))
    broker = InMemoryBroker()
    return Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=2.0, record=record), broker


async def test_a_party_refuses_forged_replayed_expired_and_out_of_order_announcements() -> None:
    party, broker = _party()
    early_end = _end(3)  # signed before round 0's: replayed later, it is stale
    r0, r2 = _round(0).model_dump_json(), _round(2).model_dump_json()
    texts = [
        r0,
        _round(1, key=STRANGER).model_dump_json(),  # forged
        json.dumps({k: v for k, v in json.loads(_round(1).model_dump_json()).items() if k != "signature"}),
        _expired(_round(1), COORD_PRIVATE),  # genuinely signed, stale
        _round(1, session="other").model_dump_json(),
        r0,  # replayed: gets nothing (not even the recorded answer)
        early_end,  # a replayed end: ignored, the party stays
        r2,
        _round(1).model_dump_json(),  # fresh, but round 2 is answered already: a missed round stays missed
    ]
    answered, replies = await _serve(party, broker, *texts)
    assert answered == 2 and [m.round for m in replies] == [0, 2]
    assert party.rejections.counts == {"signature": 1, "schema": 1, "expired": 1, "session": 1, "replay": 2,
                                       "out-of-order": 1}
    assert party.ledger.rounds == (0, 2)


async def test_after_a_restart_replays_get_nothing_and_a_re_announcement_the_recorded_answer(tmp_path: Path) -> None:
    """Issue 9: replaying captured announcements to a restarted party host made it release every bit
    again, and the replayed end made it exit. With the record, a restarted party refuses both (their
    sequences are not above what it acted on) and answers the coordinator's fresh re-announcement with
    the very message it recorded."""
    with AnswerRecord(tmp_path / "answers.sqlite") as record:
        party, broker = _party(record)
        r0, r1 = _round(0).model_dump_json(), _round(1).model_dump_json()
        end = _end(2)
        async with broker.connect("coordinator") as coordinator:
            await coordinator.subscribe(TOPICS.all_parties)
            ready = asyncio.Event()
            task = asyncio.create_task(party.run(ready.set))
            await ready.wait()
            for text in (r0, r1, end):
                await coordinator.publish(TOPICS.rounds, text)
            await task
            first = await _drain(coordinator)
        assert [m.round for m in first] == [0, 1]

        restarted, broker = _party(record)
        assert sorted(restarted._loop.sent) == [0, 1]
        answered, replies = await _serve(restarted, broker, r0, r1, end, _round(1).model_dump_json())
        assert answered == 2
        assert replies == [first[1]]  # only the fresh re-announcement, answered with the recorded message
        assert restarted.rejections.counts == {"replay": 3}


# --- transcripts at a deciding party --------------------------------------------------------------------


def test_forged_expired_replayed_and_foreign_transcripts_are_refused() -> None:
    spec = PartyDecisionSpec((RR,) * 3, "majority")
    decider = PartyDecider(spec, SESSION, COORD_PUBLIC)

    def transcript(key: bytes = COORD_PRIVATE, session: str = SESSION, participants: tuple[int, ...] = (0, 1, 2),
                   ) -> TranscriptMessage:
        return TranscriptMessage.signed(key, session=session, round=0, participants=np.array(participants),
                                        symbols=np.zeros((2, len(participants)), np.uint8))

    older, newer = transcript(), transcript()
    assert decider.transcript(newer.model_dump_json().encode()) is not None
    refused = {
        "signature": transcript(STRANGER),
        "session": transcript(session="other"),
        "unknown-party": transcript(participants=(0, 5)),
        "replay": older,
    }
    for message in refused.values():
        assert decider.transcript(message.model_dump_json().encode()) is None
    assert decider.transcript(_expired(transcript(), COORD_PRIVATE).encode()) is None
    assert decider.transcript(b"{}") is None
    assert decider.rejections.counts == {"signature": 1, "session": 1, "unknown-party": 1, "replay": 1,
                                         "expired": 1, "schema": 1}
