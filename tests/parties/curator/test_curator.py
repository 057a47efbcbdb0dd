"""The curator on a real mosquitto: a spy subscribed to '#' sees only ciphertexts, signed
announcements and the release; forged, tampered or misaddressed ballots are counted, never recorded."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path

import aiomqtt
import numpy as np
import pytest

from mpdp.broker.curator_messages import (
    CuratorAnnouncement,
    CuratorRelease,
    SealedBallot,
    encode_key,
)
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, sign_message, verify_message
from mpdp.broker.topics import Topics
from mpdp.parties.ballots.party import BallotParty
from mpdp.parties.ballots.store import BallotStore
from mpdp.parties.curator.curator import Curator
from mpdp.parties.curator.party import SealedBallots
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.protocols.errors import ProtocolViolation
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]
REPS = 16
BITS = np.array([[1], [0], [1], [-1]], dtype=np.int8)  # party 3 takes no part
K = BITS.shape[0]


def _flip_base64(text: str) -> str:
    raw = bytearray(__import__("base64").b64decode(text))
    raw[0] ^= 1
    return encode_key(bytes(raw))


async def _collect(client: aiomqtt.Client, seen: list[tuple[str, str]]) -> None:
    async for message in client.messages:
        seen.append((message.topic.value, bytes(message.payload).decode()))  # type: ignore[arg-type]


async def _next_announcement(client: aiomqtt.Client) -> CuratorAnnouncement:
    async with asyncio.timeout(10):
        async for message in client.messages:
            return CuratorAnnouncement.model_validate_json(message.payload)  # type: ignore[arg-type]
    raise AssertionError("no announcement")


async def test_spy_sees_only_ciphertexts_and_bad_ballots_are_rejected(
    mosquitto: BrokerEndpoint, tmp_path: Path
) -> None:
    session = f"cur-spy-{tmp_path.name[-8:].replace('_', '')}"
    topics = Topics(session)
    mechanisms = (RandomizedResponse(math.inf),) * K
    roster, private_keys = Roster.generate(mechanisms)
    signing_private, signing_public = generate_key_pair()
    stranger_private, _ = generate_key_pair()
    other_private, other_public = generate_x25519_key_pair()
    seen: list[tuple[str, str]] = []
    with BallotStore(tmp_path / "c.sqlite") as store:
        store.open_central_session(session, K, REPS, ["bill"], math.inf, 0.0, mode="simulation (seeded generators)")
        curator = Curator(topics, roster, seed=np.random.SeedSequence(1))
        async with mosquitto.client(f"{session}-spy") as spy, mosquitto.client(f"{session}-forger") as forger:
            await spy.subscribe("#", qos=1)
            await forger.subscribe(topics.rounds, qos=1)
            spying = asyncio.create_task(_collect(spy, seen))
            async with open_engine(mosquitto, topics, roster, store, signing_private, curator,
                                   repetitions=REPS, round_timeout=10.0) as engine:
                ready = asyncio.Semaphore(0)
                parties = [BallotParty(PartySpec(i, BITS[i], mechanisms[i], private_keys[i]), mosquitto, topics,
                                       signing_public, SealedBallots(), idle_timeout=20.0) for i in (1, 2, 3)]
                running = [asyncio.create_task(p.run(ready.release)) for p in parties]
                for _ in parties:
                    await ready.acquire()
                closing = asyncio.create_task(engine.run_round(0, "bill"))
                key = (await _next_announcement(forger)).key_bytes
                slot = dict(session=session, round=0, party=0, repetitions=REPS)
                good = SealedBallot.signed(private_keys[0], curator_key=key, bit=1, **slot)  # type: ignore[arg-type]
                tampered = good.model_copy(update={"ciphertext": _flip_base64(good.ciphertext)})
                misaddressed = SealedBallot.signed(private_keys[0], curator_key=other_public, bit=1, **slot)  # type: ignore[arg-type]
                forged = [
                    tampered,                                               # signature
                    sign_message(tampered, private_keys[0]),                # decrypt (tampered ciphertext)
                    sign_message(misaddressed.model_copy(update={"curator_key": encode_key(key)}),
                                 private_keys[0]),                          # decrypt (sealed to another key)
                    misaddressed,                                           # curator-key
                    sign_message(good, stranger_private),                   # signature (a stranger)
                ]
                for message in [*forged, good]:
                    await forger.publish(topics.party(0), message.model_dump_json(), qos=1)
                outcome = await closing
                await engine.finish(1)
                assert [await task for task in running] == [1, 1, 1]
            await asyncio.sleep(0.2)
            spying.cancel()
        # the release: the majority of (1, 0, 1) every time at eps = inf; nothing recorded from the forgeries
        assert outcome.participants.tolist() == [0, 1, 2] and outcome.abstained.tolist() == [3]
        assert outcome.decisions.tolist() == [1] * REPS and outcome.messages_rejected == 5
        assert store.rejects(session) == {(0, "signature"): 2, (0, "decrypt"): 2, (0, "curator-key"): 1}
        ballots = list(store.ballots(session))
        assert [(b["party"], b["kind"]) for b in ballots] == [(0, "sealed"), (1, "sealed"), (2, "sealed"), (3, "abstain")]
        assert ballots[0]["payload"] == good.model_dump_json()
        releases = store.release_payloads(session)
    # what the broker carried: per party topic a signed ciphertext that reveals nothing without the key
    party_payloads = {topic: text for topic, text in seen if topics.party_of(topic) in (1, 2)}
    assert len(party_payloads) == 2
    headers = []
    for topic, text in party_payloads.items():
        ballot = SealedBallot.model_validate_json(text)
        party = topics.party_of(topic)
        assert ballot.kind == "sealed" and verify_message(ballot, roster.public_keys[party])
        with pytest.raises(ProtocolViolation):
            ballot.open(other_private)  # only the round's curator key opens it (discarded since)
        fields = json.loads(text)
        for name in ("ciphertext", "ephemeral_key", "nonce", "signature", "party"):
            fields.pop(name)
        headers.append(fields)
    assert headers[0] == headers[1]  # party 1 holds 0, party 2 holds 1: same header, same sizes
    assert len({len(t) for t in party_payloads.values()}) == 1
    announcements = [CuratorAnnouncement.model_validate_json(t) for topic, t in seen if topic == topics.rounds]
    assert [a.kind for a in announcements] == ["round", "end"]
    assert all(verify_message(a, signing_public) for a in announcements)
    published = [t for topic, t in seen if topic == topics.release]
    assert published == releases
    release = CuratorRelease.model_validate_json(published[0])
    assert set(json.loads(published[0])) == {"version", "session", "round", "voters", "repetitions", "outputs",
                                             "nonce", "signature", "sequence", "expires_ms"}
    assert release.voters == 3 and release.output_array().tolist() == [1] * REPS
    assert verify_message(release, signing_public)
