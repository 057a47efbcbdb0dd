"""The party host's answer record (SQLite) and the party-enforced privacy policy, on the in-memory broker:
the repetition cap, the budget across a restart, and a re-announced round answered with the recorded
message (never a fresh draw) after the host restarts."""

from __future__ import annotations

import asyncio
import base64
import math
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from mpdp.analysis.privacy.accounting import Budget, RoundCharge
from mpdp.broker.curator_messages import CuratorAnnouncement, SealedBallot
from mpdp.broker.messages import Announcement, PartyMessage
from mpdp.broker.packing import pack_symbols
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import (
    PLACEHOLDER_SIGNATURE,
    canonical_bytes,
    generate_key_pair,
    public_key_of,
    verify_message,
)
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.curator.party import start_curator_party
from mpdp.parties.rounds.answer_record import AnswerRecord, RecordedAnswer
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.session.worker import WorkerSpec, serve_parties
from mpdp.protocols.errors import ParameterError, ProtocolViolation
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("rec")
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()
PARTY_PRIVATE, _ = generate_key_pair()


async def test_the_record_keeps_answers_and_ledger_across_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "host" / "answers.sqlite"
    first = RecordedAnswer("s", 3, 0, b'{"a": 0}', RoundCharge(0, 0.5, 0.0, 2))
    with AnswerRecord(path) as record:
        # saved together: one group commit; the abstention is charged nothing
        await asyncio.gather(record.save(first), record.save(RecordedAnswer("s", 3, 1, b'{"a": 1}', None)))
        await record.save(first)  # the same again: a no-op
        with pytest.raises(ProtocolViolation, match="different answer"):
            await record.save(RecordedAnswer("s", 3, 0, b'{"a": "fresh"}', RoundCharge(0, 0.5, 0.0, 2)))
        # in one transaction, a conflicting slot is refused and the others are written
        outcomes = record.write([RecordedAnswer("s", 3, 0, b"other", None), RecordedAnswer("s", 4, 0, b"\x02b", None)])
        assert isinstance(outcomes[0], ProtocolViolation) and outcomes[1] is None
    with AnswerRecord(path) as record:
        assert record.answers("s", 3) == {0: b'{"a": 0}', 1: b'{"a": 1}'}
        assert record.answers("s", 4) == {0: b"\x02b"} and record.answers("t", 3) == {}
        ledger = record.ledger("s", 3, 1e-6)
        assert ledger.charges == (RoundCharge(0, 0.5, 0.0, 2),) and ledger.delta_slack == 1e-6


def test_an_unusable_record_path_is_a_one_line_parameter_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ParameterError, match="record"):
        AnswerRecord(tmp_path / "file" / "answers.sqlite")


def _announce(index: int, repetitions: int = 1, kind: str = "round") -> str:
    return Announcement.signed(COORD_PRIVATE, session="rec", kind=kind, round=index,  # type: ignore[arg-type]
                               repetitions=repetitions).model_dump_json()


async def _host(broker: InMemoryBroker, spec: PartySpec, record: Path | None,
                announcements: list[str]) -> list[PartyMessage]:
    """One host (deployment mode: the CSPRNG sampler) with party ``spec`` serving ``announcements`` then the
    end; the messages it published."""
    worker = WorkerSpec(index=spec.party, endpoint=broker, session="rec", coordinator_key=COORD_PUBLIC,
                        parties=(spec,), secure=True, idle_timeout=2.0, record=record)
    async with broker.connect(f"observer-{len(announcements)}") as observer:
        await observer.subscribe(TOPICS.status, TOPICS.all_parties)
        task = asyncio.create_task(serve_parties(worker))
        assert (await next_delivery(observer, 2.0)) is not None  # "ready"
        for text in announcements:
            await observer.publish(TOPICS.rounds, text)
        await observer.publish(TOPICS.rounds, _announce(99, kind="end"))
        await task
        replies = []
        while (delivery := await next_delivery(observer, 0.05)) is not None:
            if delivery.topic == TOPICS.party(spec.party):
                replies.append(PartyMessage.from_wire(delivery.payload))
        return replies


def _spec(bits: list[int], epsilon: float = 0.5, **policy: object) -> PartySpec:
    return PartySpec(2, np.array(bits, np.int8), RandomizedResponse(epsilon), PARTY_PRIVATE, None,
                     **policy)  # type: ignore[arg-type]


async def test_a_round_above_the_repetition_cap_gets_a_policy_abstention(tmp_path: Path) -> None:
    replies = await _host(InMemoryBroker(), _spec([1, 0], max_repetitions=1), tmp_path / "a.sqlite",
                          [_announce(0, repetitions=500), _announce(1, repetitions=1)])
    assert [(m.round, m.kind, m.reason, m.repetitions) for m in replies] == [
        (0, "abstain", "policy", 500), (1, "symbols", None, 1)]
    with AnswerRecord(tmp_path / "a.sqlite") as record:
        assert record.ledger("rec", 2, 1e-6).rounds == (1,)  # the refused round cost nothing


async def test_the_curator_party_keeps_the_cap_too() -> None:
    broker = InMemoryBroker()
    spec = _spec([1], max_repetitions=3)
    _, round_public = generate_x25519_key_pair()
    party = start_curator_party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=2.0,
                                connect_gate=asyncio.Semaphore(1), secure=True, decider=None)
    ballot = party.respond(CuratorAnnouncement.signed(COORD_PRIVATE, session="rec", kind="round", round=0,
                                                      repetitions=4, curator_key=round_public))
    assert isinstance(ballot, SealedBallot) and (ballot.kind, ballot.reason) == ("abstain", "policy")
    assert party.ledger.rounds == ()


def _hockey_stick(epsilon: float, k: int, eps_tilde: float) -> float:
    """delta(eps_tilde) of k-fold (epsilon, 0)-RR: sum over l flips of (P_l - e^eps_tilde Q_l)^+ (000 §3)."""
    norm = (1 + math.exp(epsilon)) ** k
    return sum(max(0.0, math.comb(k, l) * (math.exp(epsilon * (k - l)) - math.exp(eps_tilde + epsilon * l)))
               for l in range(k + 1)) / norm


async def test_a_restarted_host_re_sends_its_answers_and_keeps_its_budget(tmp_path: Path) -> None:
    """Budget (1.0, 1e-5) with (0.5, 0)-RR: two rounds cost 1.0 (basic = exact here), a third would need
    delta(1.0) > 1e-5 (checked by the hockey stick below): budget-exhausted, also after a restart."""
    assert _hockey_stick(0.5, 2, 1.0) == 0.0 and _hockey_stick(0.5, 3, 1.0) > 1e-5
    path, broker = tmp_path / "host.sqlite", InMemoryBroker()
    spec = _spec([1, 0, 1, 1], budget=Budget(1.0, 1e-5), max_repetitions=1)
    before = await _host(broker, spec, path, [_announce(0), _announce(1)])
    assert [(m.round, m.kind) for m in before] == [(0, "symbols"), (1, "symbols")]
    # the host restarts (a fresh process: same spec, empty ledger); the observer re-announces round 1
    after = await _host(broker, spec, path, [_announce(1), _announce(2), _announce(1)])
    assert after[0] == before[1] == after[2]  # the same signed message: same symbols, nonce and signature
    assert (after[1].round, after[1].kind, after[1].reason) == (2, "abstain", "budget-exhausted")
    with AnswerRecord(path) as record:
        assert record.ledger("rec", 2, 1e-6).rounds == (0, 1)
        assert sorted(record.answers("rec", 2)) == [0, 1, 2]
        # the record holds the bytes the party published (built without pydantic: the binary form), and
        # the re-sent round is those bytes again
        recorded = record.answers("rec", 2)
        assert recorded[1][:1] == b"\x02" and recorded[1] == before[1].to_wire() == after[0].to_wire()
        assert recorded[2] == after[1].to_wire()


async def test_a_record_from_before_the_binary_form_is_migrated_and_its_json_answer_re_sent(tmp_path: Path) -> None:
    """An answer record written when ``payload`` was TEXT, holding a version-1 JSON answer signed by the
    ``cryptography`` backend: opened now, the column is BLOB and a re-announced round gets the same JSON
    bytes again (never a fresh draw), which still verifies."""
    draft = PartyMessage(version=1, session="rec", round=0, party=2, kind="symbols", repetitions=1,
                         symbols=pack_symbols(np.array([1], np.uint8)), nonce="ab" * 16,
                         signature=PLACEHOLDER_SIGNATURE)
    signature = Ed25519PrivateKey.from_private_bytes(PARTY_PRIVATE).sign(canonical_bytes(draft))
    text = draft.model_copy(update={"signature": base64.b64encode(signature).decode()}).model_dump_json()
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(f"""
            CREATE TABLE answers (
                session TEXT NOT NULL, party INTEGER NOT NULL, round INTEGER NOT NULL, payload TEXT NOT NULL,
                epsilon REAL, delta REAL, repetitions INTEGER, answered REAL NOT NULL,
                sequence INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (session, party, round)) WITHOUT ROWID;
            INSERT INTO answers VALUES ('rec', 2, 0, '{text}', 0.5, 0.0, 1, 1.0, 0);
        """)
    with AnswerRecord(path) as record:
        assert record.answers("rec", 2) == {0: text.encode()}
    replies = await _host(InMemoryBroker(), _spec([0, 0]), path, [_announce(0)])
    assert replies == [PartyMessage.from_wire(text)] and replies[0].version == 1
    assert verify_message(replies[0], public_key_of(PARTY_PRIVATE))
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT typeof(payload) FROM answers").fetchall() == [("blob",)]
