"""A broker that restarts without persistence loses what it had acknowledged and not yet delivered: here a
round announcement that a party (offline then, clean session) never gets. Once the engine's own connection
was re-established it announces the open round again after a heartbeat interval (then at doubling
intervals), with a fresh signature and sequence, until a round completes: the party answers and the round completes. Without a reconnect nothing
is announced twice (a slow round in a healthy run costs no extra messages) and the round times out."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import PrivacyLedger
from mpdp.broker.control import DEFAULT_LIFETIME
from mpdp.broker.messages import Announcement
from mpdp.broker.signing import verify_message
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rounds.engine import HEARTBEAT_INTERVAL, open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.rr.party import Party
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule
from tests.calibration import scaled
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, TOPICS

pytestmark = pytest.mark.timeout(30)

TIMEOUT = 3 * HEARTBEAT_INTERVAL + 0.5  # the round stays open for three heartbeat ticks (or more, if slow: scaled)


@pytest.mark.parametrize("restart", [True, False], ids=["engine-reconnected", "no-reconnect"])
async def test_a_round_lost_in_a_broker_restart_is_announced_again(tmp_path: Path, restart: bool) -> None:
    roster, (private,) = Roster.generate((RandomizedResponse(1.0),))
    spec = PartySpec(0, np.array([1], np.int8), RandomizedResponse(1.0), private, np.random.SeedSequence(4),
                     None, PrivacyLedger(1e-6))
    broker = InMemoryBroker()
    party = Party(spec, broker, TOPICS, COORD_PUBLIC, idle_timeout=10.0)
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session("s", 1, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(TOPICS, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with broker.connect("watch") as watch, open_engine(
                broker, TOPICS, roster, store, COORD_PRIVATE, observer, repetitions=1,
                round_timeout=scaled(TIMEOUT) if restart else TIMEOUT) as engine:
            await watch.subscribe(TOPICS.rounds)
            ready = asyncio.Event()
            serving = asyncio.create_task(party.run(ready.set))
            await ready.wait()
            await broker.disconnect(party.client_id)  # a clean session: its subscription is gone
            running = asyncio.create_task(engine.run_round(0, "r0"))
            await asyncio.sleep(0.1)  # the announcement went out while the party was offline
            await broker.reconnect(party.client_id)
            if restart:
                await broker.disconnect("mpdp-s-observer")
                await broker.reconnect("mpdp-s-observer")
            outcome = await running
            seen = []
            while (delivery := await next_delivery(watch, 0.05)) is not None:
                seen.append(Announcement.model_validate_json(delivery.payload))
            serving.cancel()
    rounds = [a for a in seen if a.kind == "round"]
    assert all(a.round == 0 and verify_message(a, COORD_PUBLIC) for a in rounds)
    if restart:
        assert outcome.status == "complete"
        assert len(rounds) == 2  # the first, lost; again at the next heartbeat tick, answered
        assert rounds[1].sequence > rounds[0].sequence
        # valid for minutes from its signing (sequence: the signer's clock in ns), not cut to a round deadline
        assert all(a.expires_ms - a.sequence // 10**6 >= 1000 * DEFAULT_LIFETIME for a in rounds)
        assert list(party.loop.sent) == [0] and party.ledger.rounds == (0,)  # answered once, charged once
    else:
        assert outcome.status == "failed" and len(rounds) == 1 and party.loop.sent == {}
