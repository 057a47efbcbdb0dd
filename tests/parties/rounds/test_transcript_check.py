"""Re-verifying a stored transcript offline (parties/rounds/transcript_check.py) with real Ed25519 keys: a round
collected by the engine from a worker's bundles of unsigned answers, a party's own signed answer and a double
release in a bundle is proven answer by answer from the store and the roster's public keys alone; one changed byte
(in a stored bundle, in a stored answer, in the stored "ready"), a missing endorsement, or a bundle under a key
the party did not endorse (another worker's) is refused naming the answer. What readers use besides the payloads
(parties/rounds/record_check.py too): a stored column that says otherwise than its proven answer is named with the
column; a deleted answer, a round record or decision row that disagrees with the proven answers is named."""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.bundle import encode_bundle
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import generate_key_pair, load_private_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.broker.wire import sign_answer
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.record_check import check_round_records
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rounds.transcript_check import verify_transcript
from mpdp.parties.rr.observer import Observer
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

pytestmark = pytest.mark.timeout(30)

SESSION = "proofs"
TOPICS = Topics(SESSION)
COORD_PRIVATE, _ = generate_key_pair()
ROSTER, KEYS = Roster.generate((RandomizedResponse(0.7),) * 4)
BUNDLE_PRIVATE, BUNDLE_PUBLIC = generate_key_pair()
OTHER_PRIVATE, OTHER_PUBLIC = generate_key_pair()  # worker 1's bundle key, endorsed by party 3 only


def _answer(key: bytes | None, party: int, symbol: int) -> bytes:
    return sign_answer(key, session=SESSION, round=0, party=party, repetitions=1,
                       symbols=np.array([symbol], dtype=np.uint8)).to_wire()


def _bundle(entries: list[tuple[int, bytes]], key: bytes = BUNDLE_PRIVATE, worker: int = 0) -> bytes:
    return encode_bundle(entries, load_private_key(key), session=SESSION, worker=worker)


UNSIGNED = [_answer(None, p, p % 2) for p in range(4)]
SECOND_0 = _answer(None, 0, 1)  # party 0's second, different answer (double release)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Round 0 as the engine records it: parties 0 and 1 in worker 0's bundle (unsigned), party 2's own signed
    answer on its topic (after its unsigned one there, refused), party 0's double release in a second bundle,
    party 3 absent."""
    path = tmp_path_factory.mktemp("proofs") / "t.sqlite"

    async def run() -> None:
        broker = InMemoryBroker()
        with TranscriptStore(path) as store:
            store.open_session(SESSION, ROSTER.k, 1, ["r0"], mode="simulation (seeded generators)")
            observer = Observer(TOPICS, ROSTER, store, function=parse_function("majority"),
                                measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
            async with open_engine(broker, TOPICS, ROSTER, store, COORD_PRIVATE, observer, repetitions=1,
                                   round_timeout=0.5, bundles=True) as engine, broker.connect("worker") as worker:
                reports = [WorkerStatus.signed(KEYS[:3], session=SESSION, worker=0, state="ready", parties=(0, 1, 2),
                                               bundle_key=BUNDLE_PUBLIC),
                           WorkerStatus.signed(KEYS[3:], session=SESSION, worker=1, state="ready", parties=(3,),
                                               bundle_key=OTHER_PUBLIC)]
                for report in reports:
                    await worker.publish(TOPICS.status, report.model_dump_json())
                await asyncio.sleep(0.05)
                round_0 = asyncio.create_task(engine.run_round(0, "r0"))
                await asyncio.sleep(0.05)
                await worker.publish(TOPICS.bundle(0), _bundle([(0, UNSIGNED[0]), (1, UNSIGNED[1])]))
                await worker.publish(TOPICS.party(2), UNSIGNED[2])  # unsigned on a party topic: signature
                await worker.publish(TOPICS.party(2), _answer(KEYS[2], 2, 0))
                await worker.publish(TOPICS.bundle(0), _bundle([(0, SECOND_0)]))  # double release
                outcome = await round_0
            assert dict(engine.rejections.counts) == {"signature": 1, "double-release": 1}
            assert outcome.participants.tolist() == [0, 1, 2] and outcome.absent.tolist() == [3]
            assert outcome.double_released.tolist() == [0]

    asyncio.run(run())
    return path


def _tampered(recorded: Path, tmp_path: Path, change: Callable[[sqlite3.Connection], object]) -> Path:
    copy = tmp_path / f"copy-{len(list(tmp_path.glob('copy-*.sqlite')))}.sqlite"  # each a fresh file (no stale WAL)
    shutil.copy(recorded, copy)
    with sqlite3.connect(copy) as db:
        change(db)
    return copy


def _refusal(path: Path) -> ProtocolViolation:
    with TranscriptStore(path) as store, pytest.raises(ProtocolViolation) as caught:
        verify_transcript(store, SESSION, ROSTER.public_keys)
    return caught.value


def test_every_stored_answer_is_proven_from_the_store_and_the_roster_keys(recorded: Path) -> None:
    with TranscriptStore(recorded) as store:
        assert [store.recorded_payload(SESSION, 0, p) for p in (0, 1)] == UNSIGNED[:2]  # stored as they came
        assert store.recorded_payload(SESSION, 0, 3) is None  # absent
        # 3 answers (parties 0, 1 unsigned in a bundle; party 2 signed) and the double release (in a bundle)
        assert verify_transcript(store, SESSION, ROSTER.public_keys) == 4
        assert len(store.query("SELECT 1 FROM bundles")) == 2 and len(store.query("SELECT 1 FROM worker_reports")) == 2


def test_a_changed_byte_of_a_stored_bundle_unproves_its_entries(recorded: Path, tmp_path: Path) -> None:
    def flip(db: sqlite3.Connection) -> None:
        digest, payload = db.execute("SELECT digest, payload FROM bundles ORDER BY length(payload) DESC").fetchone()
        changed = bytearray(payload)  # the bundle of parties 0 and 1
        changed[20] ^= 1  # a byte of party 0's entry: the bundle's signature no longer verifies
        db.execute("UPDATE bundles SET payload = ? WHERE digest = ?", (bytes(changed), digest))

    refused = _refusal(_tampered(recorded, tmp_path, flip))
    assert (refused.reason, refused.detail.split(":")[0]) == ("signature", "messages round 0 party 0")


def test_a_changed_byte_of_a_stored_answer_is_refused(recorded: Path, tmp_path: Path) -> None:
    for party, signed in ((1, "unsigned"), (2, "its signature does not verify")):
        def flip(db: sqlite3.Connection, party: int = party) -> None:
            payload = bytearray(db.execute("SELECT payload FROM messages WHERE party = ?", (party,)).fetchone()[0])
            payload[-1 if party == 1 else -65] ^= 0x40  # the symbol byte: 1 -> 0 (party 1), 0 -> 1 (party 2)
            db.execute("UPDATE messages SET payload = ? WHERE party = ?", (bytes(payload), party))

        refused = _refusal(_tampered(recorded, tmp_path, flip))
        assert refused.reason == "signature" and refused.detail.startswith(f"messages round 0 party {party}: {signed}")


def test_without_the_parties_endorsement_no_bundle_proves_anything(recorded: Path, tmp_path: Path) -> None:
    refused = _refusal(_tampered(recorded, tmp_path, lambda db: db.execute("DELETE FROM worker_reports")))
    assert (refused.reason, refused.detail.split(":")[0]) == ("signature", "messages round 0 party 0")

    def unsigned_by_1(db: sqlite3.Connection) -> None:  # party 1's signature replaced by a stranger's
        forged = WorkerStatus.signed((KEYS[0], generate_key_pair()[0], KEYS[2]), session=SESSION, worker=0,
                                     state="ready", parties=(0, 1, 2), bundle_key=BUNDLE_PUBLIC)
        db.execute("UPDATE worker_reports SET payload = ? WHERE worker = 0", (forged.model_dump_json(),))

    refused = _refusal(_tampered(recorded, tmp_path, unsigned_by_1))
    assert (refused.reason, refused.detail.split(":")[0]) == ("signature", "messages round 0 party 1")


def test_a_bundle_under_another_workers_key_proves_nothing_for_a_party_that_did_not_endorse_it(
        recorded: Path, tmp_path: Path) -> None:
    """Party 1's answer replaced by another answer in a bundle of worker 1, validly signed with worker 1's key
    (endorsed by party 3 only): refused."""
    other = _answer(None, 1, 0)

    def swap(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO bundles VALUES (?, ?, ?, ?, ?)", (SESSION, b"x" * 32, 1,
                                                                  _bundle([(1, other)], OTHER_PRIVATE, worker=1), 0.0))
        db.execute("UPDATE messages SET payload = ? WHERE party = 1", (other,))

    refused = _refusal(_tampered(recorded, tmp_path, swap))
    assert (refused.reason, refused.detail.split(":")[0]) == ("signature", "messages round 0 party 1")


def test_an_answer_stored_under_another_party_or_round_is_refused(recorded: Path, tmp_path: Path) -> None:
    refused = _refusal(_tampered(recorded, tmp_path, lambda db: db.execute(
        "UPDATE messages SET payload = ? WHERE party = 1", (UNSIGNED[0],))))
    assert refused.reason == "schema" and refused.detail.startswith("messages round 0 party 1: the answer names")


def test_the_stored_columns_readers_use_must_say_what_the_proven_answer_says(recorded: Path, tmp_path: Path) -> None:
    """mpdp export reads ``messages.symbols`` (and kind, reason), not the payload: each is checked against it."""
    for change, detail in (
            ("UPDATE messages SET symbols = X'00' WHERE party = 1",  # party 1 answered 1
             "messages round 0 party 1: column symbols is '0' but the signed answer says '1'"),
            ("UPDATE messages SET kind = 'abstain', reason = 'did-not-vote', symbols = X'' WHERE party = 2",
             "messages round 0 party 2: column kind is 'abstain' but the signed answer says 'symbols'"),
            ("UPDATE messages SET repetitions = 2 WHERE party = 0",
             "messages round 0 party 0: column repetitions is 2 but the signed answer says 1"),
            ("UPDATE double_releases SET kind = 'abstain'",
             "double_releases round 0 party 0: column kind is 'abstain' but the signed answer says 'symbols'"),
            ("UPDATE messages SET kind = 'symbols', symbols = X'01' WHERE party = 3",  # the absent party
             "messages round 0 party 3: kind 'symbols' without a stored answer (only 'absent', with no reason and "
             "no symbols, has none)")):
        refused = _refusal(_tampered(recorded, tmp_path, lambda db, sql=change: db.execute(sql)))
        assert (refused.reason, refused.detail) == ("column", detail)


def test_the_round_record_and_decisions_agree_with_the_proven_answers(recorded: Path) -> None:
    with TranscriptStore(recorded) as store:
        assert store.query("SELECT participants, abstained, absent, status FROM rounds") == [
            ("[0, 1, 2]", "[]", "[3]", "timeout")]
        assert len(store.query("SELECT decision FROM decisions WHERE decision >= 0")) == 1
        check_round_records(store, SESSION)  # raises nothing


def test_a_deleted_answer_or_an_edited_round_record_or_decision_row_is_named(recorded: Path, tmp_path: Path) -> None:
    for change, reason, detail in (
            ("DELETE FROM messages WHERE party = 1", "missing",
             "round 0 party 1: the round record lists it in participants but messages holds no stored answer"),
            ("UPDATE messages SET kind = 'absent', payload = NULL, symbols = X'' WHERE party = 2", "missing",
             "round 0 party 2: the round record lists it in participants but messages holds no stored answer"),
            ("UPDATE rounds SET participants = '[0, 1]'", "round-record",
             "rounds round 0: party 2 is in none of participants, abstained, absent"),
            ("UPDATE rounds SET participants = '[0, 1, 2, 3]'", "missing",  # the absent party 3 listed answering
             "round 0 party 3: the round record lists it in participants but messages holds no stored answer"),
            ("UPDATE rounds SET abstained = '[2]'", "round-record",
             "rounds round 0: party 2 in abstained is also in participants"),
            ("UPDATE rounds SET absent = '[3, 7]'", "round-record",
             "rounds round 0: party 7 in absent is outside the roster's parties 0..3"),
            ("UPDATE rounds SET participants = '[0, 1]', absent = '[2, 3]'", "round-record",
             "round 0 party 2: the round record lists it in absent but messages holds a stored answer of kind "
             "'symbols'"),
            ("UPDATE rounds SET status = 'failed'", "round-record",
             "rounds round 0: status 'failed', its answers give 'timeout'"),
            ("UPDATE rounds SET status = 'complete'", "round-record",
             "rounds round 0: status 'complete', its answers give 'timeout'"),
            ("UPDATE decisions SET decision = -1", "decisions",
             "decisions round 0 repetition 0: -1, an output (>= 0) expected"),
            ("DELETE FROM decisions", "decisions",
             "decisions round 0: repetitions [] stored, 0..0 expected (missing [0])"),
            ("INSERT INTO decisions VALUES ('proofs', 0, 1, 0)", "decisions",
             "decisions round 0: repetitions [0, 1] stored, 0..0 expected (extra [1])"),
            ("INSERT INTO decisions VALUES ('proofs', 5, 0, 1)", "decisions",
             "decisions round 5: no round record holds that round")):
        with TranscriptStore(_tampered(recorded, tmp_path, lambda db, sql=change: db.execute(sql))) as store, \
                pytest.raises(ProtocolViolation) as caught:
            check_round_records(store, SESSION)
        assert (caught.value.reason, caught.value.detail) == (reason, detail), change
