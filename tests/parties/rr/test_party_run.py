"""A party's session on the in-memory transport: it answers announced rounds on its own topic,
abstains, keeps its budget, re-sends its answer to a re-announced round, ignores announcements it cannot trust,
survives a dropped connection, and gives up after its idle timeout. The curator party seals its bit."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger
from mpdp.broker.curator_messages import CuratorAnnouncement, SealedBallot
from mpdp.broker.messages import Announcement, PartyMessage
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, MemoryTransport, next_delivery
from mpdp.parties.ballots.party import BallotParty
from mpdp.parties.curator.party import SealedBallots
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rr.party import Party
from mpdp.protocols.errors import TransportError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("s")
COORD_PRIVATE, COORD_PUBLIC = generate_key_pair()
PARTY_PRIVATE, PARTY_PUBLIC = generate_key_pair()


def _announcement(index: int, repetitions: int = 8, key: bytes = COORD_PRIVATE, session: str = "s") -> str:
    return Announcement.signed(key, session=session, kind="round", round=index, repetitions=repetitions
                               ).model_dump_json()


def _end(rounds: int) -> str:
    return Announcement.signed(COORD_PRIVATE, session="s", kind="end", round=rounds, repetitions=1).model_dump_json()


RR = RandomizedResponse(0.7)


def _party(bits: list[int], mechanism: RandomizedResponse = RR, *, seed: int = 5,
           budget: Budget | None = None) -> tuple[Party, InMemoryBroker]:
    """Party 1 with ``bits``, on a fresh in-memory broker (returned with it)."""
    spec = PartySpec(1, np.array(bits, np.int8), mechanism, PARTY_PRIVATE, np.random.SeedSequence(seed),
                     budget, PrivacyLedger(1e-6))
    broker = InMemoryBroker()
    return Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=2.0), broker


async def _drain(coordinator: MemoryTransport) -> list[PartyMessage]:
    replies = []
    while (delivery := await next_delivery(coordinator, 0.05)) is not None:
        assert delivery.topic == TOPICS.party(1)
        replies.append(PartyMessage.from_wire(delivery.payload))
    return replies


async def _serve(party: Party, broker: InMemoryBroker, *announcements: str) -> tuple[int, list[PartyMessage]]:
    """Run ``party`` (connected to ``broker``) until the end announcement that follows ``announcements``;
    return (rounds answered, its messages on the wire)."""
    async with broker.connect("coordinator") as coordinator:
        await coordinator.subscribe(TOPICS.all_parties)
        ready = asyncio.Event()
        task = asyncio.create_task(party.run(ready.set))
        await ready.wait()
        for text in announcements:
            await coordinator.publish(TOPICS.rounds, text)
        await coordinator.publish(TOPICS.rounds, _end(len(announcements)))
        answered = await task
        return answered, await _drain(coordinator)


async def test_answers_each_announced_round_with_its_seeded_sample() -> None:
    mechanism = RandomizedResponse(0.7)
    answered, replies = await _serve(*_party([1, 0], mechanism), _announcement(0), _announcement(1))
    assert answered == 2
    assert [(m.round, m.party, m.kind, m.repetitions) for m in replies] == [(0, 1, "symbols", 8), (1, 1, "symbols", 8)]
    for index, bit in enumerate([1, 0]):
        rng = np.random.default_rng(np.random.SeedSequence(5).spawn(2)[index])
        assert np.array_equal(replies[index].symbol_array(), mechanism.sample(bit, 8, rng))
    assert all(verify_message(m, PARTY_PUBLIC) for m in replies)


async def test_abstains_in_a_round_it_does_not_vote_in() -> None:
    _, replies = await _serve(*_party([-1]), _announcement(0))
    assert [(m.kind, m.reason, m.symbols) for m in replies] == [("abstain", "did-not-vote", "")]


async def test_abstains_once_its_budget_is_spent() -> None:
    """(0.5, 0)-RR with 3 releases a round costs about 1.5 per round: a budget of 2 pays for one."""
    party, broker = _party([1, 1, 0], RandomizedResponse(0.5), budget=Budget(2.0, 1e-5))
    _, replies = await _serve(party, broker, *(_announcement(r, repetitions=3) for r in range(3)))
    assert [(m.kind, m.reason) for m in replies] == [
        ("symbols", None), ("abstain", "budget-exhausted"), ("abstain", "budget-exhausted")]
    assert party.ledger.rounds == (0,)


async def test_a_re_announced_round_gets_the_same_signed_message_again() -> None:
    """A second announcement of round 0 (a restarted observer's) is answered by the very message sent
    first (same symbols, nonce and signature), never by a fresh draw; the ledger charges it once. The
    first announcement replayed gets nothing (its sequence is not new)."""
    party, broker = _party([1, 0])
    first = _announcement(0)
    answered, replies = await _serve(party, broker, first, _announcement(0), first, _announcement(1))
    assert answered == 2
    assert [m.round for m in replies] == [0, 0, 1]
    assert replies[0] == replies[1] and replies[0].kind == "symbols"
    assert party.ledger.rounds == (0, 1)
    assert party.rejections.counts == {"replay": 1}


async def test_ignores_announcements_it_cannot_trust() -> None:
    stranger, _ = generate_key_pair()
    forged = _announcement(0, key=stranger)
    other_session = Announcement.signed(COORD_PRIVATE, session="t", kind="round", round=0, repetitions=8
                                        ).model_dump_json()
    tampered = _announcement(0).replace('"repetitions":8', '"repetitions":9')
    party, broker = _party([1, 0])
    answered, replies = await _serve(party, broker, forged, "not json", other_session, tampered, _announcement(1))
    assert answered == 1
    assert [m.round for m in replies] == [1]
    assert party.rejections.counts == {"signature": 2, "schema": 1, "session": 1}


async def test_keeps_serving_after_its_connection_drops() -> None:
    party, broker = _party([1, 0])
    async with broker.connect("coordinator") as coordinator:
        await coordinator.subscribe(TOPICS.all_parties)
        ready = asyncio.Event()
        task = asyncio.create_task(party.run(ready.set))
        await ready.wait()
        await broker.disconnect(party.client_id)
        await coordinator.publish(TOPICS.rounds, _announcement(0))  # lost: a clean session
        await broker.reconnect(party.client_id)
        await coordinator.publish(TOPICS.rounds, _announcement(1))
        await coordinator.publish(TOPICS.rounds, _end(2))
        assert await task == 1
        assert [m.round for m in await _drain(coordinator)] == [1]


async def test_gives_up_after_its_idle_timeout() -> None:
    spec = PartySpec(1, np.array([1], np.int8), RandomizedResponse(1.0), PARTY_PRIVATE, np.random.SeedSequence(1))
    party = Party(spec, InMemoryBroker(), TOPICS, COORD_PUBLIC, idle_timeout=0.05)
    with pytest.raises(TransportError, match="party 1: no announcement for 0.05 s"):
        await party.run()


async def test_a_failed_transport_ends_the_party_with_a_transport_error() -> None:
    party, broker = _party([1])
    ready = asyncio.Event()
    task = asyncio.create_task(party.run(ready.set))
    await ready.wait()
    await broker.fail(party.client_id, "reconnecting failed after 8 attempts")
    with pytest.raises(TransportError, match="reconnecting failed after 8 attempts"):
        await task


async def test_curator_party_seals_its_bit_to_the_round_key() -> None:
    broker = InMemoryBroker()
    round_private, round_public = generate_x25519_key_pair()
    spec = PartySpec(1, np.array([1, -1], np.int8), RandomizedResponse(1.0), PARTY_PRIVATE)
    party = BallotParty(spec, broker, TOPICS, COORD_PUBLIC, SealedBallots(), idle_timeout=2.0)
    async with broker.connect("curator") as curator:
        await curator.subscribe(TOPICS.all_parties)
        ready = asyncio.Event()
        task = asyncio.create_task(party.run(ready.set))
        await ready.wait()
        for index in range(2):
            await curator.publish(TOPICS.rounds, CuratorAnnouncement.signed(
                COORD_PRIVATE, session="s", kind="round", round=index, repetitions=4,
                curator_key=round_public).model_dump_json())
        await curator.publish(TOPICS.rounds, CuratorAnnouncement.signed(
            COORD_PRIVATE, session="s", kind="end", round=2, repetitions=4).model_dump_json())
        assert await task == 2
        ballots = [SealedBallot.model_validate_json(d.payload)
                   for d in [await next_delivery(curator, 1.0), await next_delivery(curator, 1.0)] if d]
    assert [(b.round, b.kind) for b in ballots] == [(0, "sealed"), (1, "abstain")]
    assert ballots[0].open(round_private) == 1 and ballots[1].reason == "did-not-vote"
    assert all(verify_message(b, PARTY_PUBLIC) for b in ballots)


def test_a_party_client_id_carries_a_random_suffix_kept_for_its_reconnects() -> None:
    """No other client can guess the id (and take the connection over); the party's own reconnects keep it."""
    (first, _), (second, _) = _party([1]), _party([1])
    prefix = f"mpdp-{TOPICS.session}-party-1-"
    for party in (first, second):
        suffix = party.client_id.removeprefix(prefix)
        assert party.client_id.startswith(prefix) and len(suffix) == 16 and int(suffix, 16) >= 0
    assert first.client_id != second.client_id and first.client_id == first.client_id
