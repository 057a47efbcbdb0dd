"""The worker's answer bundler (parties/session/bundling.py): the parties answering in one event-loop turn share one
signed bundle and each returns once it is acknowledged; a party cancelled while it waits leaves the others' answers
in the bundle and their acknowledgement; a failed publication reaches every party of the bundle."""

from __future__ import annotations

import asyncio

import pytest

from mpdp.broker.bundle import decode_bundle
from mpdp.broker.signing import generate_key_pair, load_private_key, load_public_key
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, MemoryTransport
from mpdp.parties.session.bundling import BUNDLE_BYTES, AnswerBundler
from mpdp.protocols.errors import TransportError

pytestmark = pytest.mark.timeout(20)

TOPICS = Topics("bundler")
PRIVATE, PUBLIC = generate_key_pair()
KEY = load_private_key(PRIVATE)


class Failing:
    """An in-memory client whose publications fail as a lost broker's would."""

    def __init__(self, transport: MemoryTransport) -> None:
        self.client_id = transport.client_id

    async def publish(self, topic: str, payload: bytes | str) -> None:
        raise TransportError("broker gone")


async def test_a_turns_answers_share_one_bundle_and_a_cancelled_party_leaves_the_others_be() -> None:
    broker = InMemoryBroker()
    async with broker.connect("observer") as observer, broker.connect("worker") as worker:
        await observer.subscribe(TOPICS.all_bundles)
        async with AnswerBundler(worker, TOPICS, 2, KEY, size=64) as bundler:
            parties = [asyncio.create_task(bundler.publish(TOPICS.party(p), bytes([2, p]))) for p in range(5)]
            await asyncio.sleep(0)  # every party has joined the pending bundle
            parties[1].cancel()  # cancelled while it waits: its entry is in the bundle already
            done, _ = await asyncio.wait(parties, timeout=5)
            delivery = await asyncio.wait_for(observer.deliveries().__anext__(), 5)
        assert len(done) == 5 and bundler.bundles == 1
        assert [task.cancelled() for task in parties] == [False, True, False, False, False]
        assert all(task.result() is None for task in parties if not task.cancelled())
        assert delivery.topic == TOPICS.bundle(2)
        assert decode_bundle(delivery.payload, load_public_key(PUBLIC), session="bundler", worker=2) == [
            (p, bytes([2, p])) for p in range(5)]


async def test_a_failed_bundle_fails_every_party_in_it_and_a_full_bundle_goes_at_once() -> None:
    async with InMemoryBroker().connect("worker") as worker, \
            AnswerBundler(Failing(worker), TOPICS, 0, KEY, size=3) as bundler:
        parties = [asyncio.create_task(bundler.publish(TOPICS.party(p), b"\x02a")) for p in range(4)]
        results = await asyncio.gather(*parties, return_exceptions=True)
    assert [type(r) for r in results] == [TransportError] * 4
    assert bundler.bundles == 2  # 3 answers (full: sent at once), then the turn's last one


async def test_a_bundle_goes_once_its_answers_hold_bundle_bytes() -> None:
    """Answers of 400 kB (10^6 repetitions would be 250 kB each): the third takes the bundle past BUNDLE_BYTES (1 MiB),
    so it goes with three, well under a broker's packet limit; the turn's last two share the next."""
    broker = InMemoryBroker()
    big = [bytes([2, p]) + bytes(400_000) for p in range(5)]
    async with broker.connect("observer") as observer, broker.connect("worker") as worker:
        await observer.subscribe(TOPICS.all_bundles)
        async with AnswerBundler(worker, TOPICS, 1, KEY) as bundler:
            await asyncio.gather(*(bundler.publish(TOPICS.party(p), big[p]) for p in range(5)))
            sizes = [len(decode_bundle((await asyncio.wait_for(observer.deliveries().__anext__(), 5)).payload,
                                       load_public_key(PUBLIC), session="bundler", worker=1)) for _ in range(2)]
    assert 3 * 400_002 >= BUNDLE_BYTES > 2 * 400_002 and sizes == [3, 2] and bundler.bundles == 2
