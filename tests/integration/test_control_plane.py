"""The control plane over a real mosquitto: an outsider's forged "failed" and "ready", a replayed genuine
"ready" and replayed announcements change nothing at the observer or at a party; each is rejected,
counted by reason; the genuine messages still work."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, PartyMessage, WorkerStatus
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import Party
from mpdp.parties.session.observe import wait_for_parties
from mpdp.protocols.errors import WorkerError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.calibration import scaled

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60), pytest.mark.asyncio(loop_scope="session")]


async def test_forged_and_replayed_control_messages_change_nothing(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    session = f"ctl{tmp_path.name[-8:].replace('_', '')}"
    topics = Topics(session)
    mechanisms = (RandomizedResponse(1.0),) * 2
    roster, keys = Roster.generate(mechanisms)
    coord_private, coord_public = generate_key_pair()
    stranger, _ = generate_key_pair()
    spec = PartySpec(0, np.array([1, 0], np.int8), mechanisms[0], keys[0], np.random.SeedSequence(1), None,
                     PrivacyLedger(1e-6))
    party = Party(spec, mosquitto, topics, coord_public, idle_timeout=scaled(10.0))
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(session, 2, 1, ["r0", "r1"], mode="simulation (seeded generators)")
        observer = Observer(topics, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(mosquitto, topics, roster, store, coord_private, observer, repetitions=1,
                               round_timeout=scaled(2.0)) as engine, mosquitto.client(f"{session}-outsider") as outsider:
            await outsider.subscribe(topics.rounds, qos=1)
            await outsider.subscribe(topics.party(0), qos=1)
            # the outsider's messages: an unsigned "failed" (what stopped `mpdp observe` in issue 9),
            # a "ready" for both parties under its own key, a host holding party 0's key that claims party 1
            # too (signed by party 0 only), and party 0's genuine "ready" sent twice
            unsigned = (f'{{"version":1,"session":"{session}","worker":0,"state":"failed","parties":[0,1],'
                        '"detail":"attacker"}')
            forged = WorkerStatus.signed([stranger] * 2, session=session, worker=0, state="ready", parties=(0, 1))
            claimed = WorkerStatus.signed([keys[0]] * 2, session=session, worker=0, state="ready", parties=(0, 1))
            genuine = WorkerStatus.signed(keys[:1], session=session, worker=0, state="ready", parties=(0,))
            for message in (unsigned, forged, claimed, genuine, genuine):
                await outsider.publish(topics.status, message if isinstance(message, str)
                                       else message.model_dump_json(), qos=1)
            with pytest.raises(WorkerError, match=r"parties 1 did not report ready"):
                await wait_for_parties(engine, 2, scaled(1.5))  # and the five are handled
            assert engine.failed_workers == {} and list(engine.ready_workers) == [0]
            assert engine.ready_workers[0].parties == (0,)
            assert dict(engine.rejections.counts) == {"schema": 1, "signature": 2, "replay": 1}

            running = asyncio.create_task(party.run())
            await asyncio.sleep(scaled(0.5))  # subscribed
            round_0 = asyncio.create_task(engine.run_round(0, "r0"))
            # round 0's announcement and answer; heartbeats come between, one a second (many after the scaled waits)
            announcement = answer = None
            async with asyncio.timeout(scaled(20)):
                async for m in _messages(outsider, 10_000):
                    if m.topic.value == topics.rounds and Announcement.model_validate_json(m.payload).kind == "round":
                        announcement = m.payload
                    elif m.topic.value == topics.party(0):
                        answer = m.payload
                    if announcement is not None and answer is not None:
                        break
            assert announcement is not None and answer is not None
            for _ in range(3):  # replayed while the round is open: unexpired, but not new -> nothing
                await outsider.publish(topics.rounds, announcement, qos=1)
            outcome = await round_0
            assert outcome.participants.tolist() == [0] and outcome.absent.tolist() == [1]
            end = Announcement.signed(coord_private, session=session, kind="end", round=1, repetitions=1)
            await outsider.publish(topics.rounds, end.model_dump_json(), qos=1)
            assert await asyncio.wait_for(running, scaled(5.0)) == 1
            assert dict(party.rejections.counts) == {"replay": 3}
            seen = [m async for m in _messages(outsider, 10, timeout=0.5)]
            assert [m.payload for m in seen if m.topic.value == topics.party(0)] == []
            assert PartyMessage.from_wire(answer).round == 0


async def _messages(client, count: int, timeout: float | None = None):  # type: ignore[no-untyped-def]
    """Up to ``count`` messages the raw aiomqtt ``client`` receives within ``timeout`` seconds each (default:
    5 s, scaled)."""
    iterator = aiter(client.messages)
    for _ in range(count):
        try:
            yield await asyncio.wait_for(anext(iterator), scaled(5.0) if timeout is None else timeout)
        except TimeoutError:
            return
