"""The mpc parties' session sealing keys travel in their worker's signed "ready" (issue 23 item 5): each part
of the report lists its parties' keys, each party's signature covers its own, and the coordinator hands
exactly the verified keys to the compute servers ahead of the first round; a key swapped in a signed report,
a stranger's report or a replayed one hands nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import generate_key_pair, signature_text
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.mpc.cluster import ServerCluster
from mpdp.parties.mpc.coordinator import MpcCoordinator
from mpdp.parties.mpc.sealed_shares import ShareSealer
from mpdp.parties.rounds.engine import open_engine
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session import worker as worker_module
from mpdp.parties.session.worker import WorkerSpec, status_reports
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.parties.rr.test_party_run import COORD_PRIVATE, COORD_PUBLIC, TOPICS

pytestmark = pytest.mark.timeout(20)

RR = RandomizedResponse(1.0)
STRANGER, _ = generate_key_pair()


class _Handed(ServerCluster):
    """A cluster that records what it is handed ahead and starts no process."""

    def __init__(self) -> None:
        super().__init__(3, 1, session=TOPICS.session)
        self.handed: list[dict[int, bytes]] = []

    def expect(self, keys: Mapping[int, bytes]) -> None:
        self.handed.append(dict(keys))


async def test_the_coordinator_hands_the_servers_exactly_the_keys_the_parties_signed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(worker_module, "STATUS_PARTIES", 2)
    roster, keys = Roster.generate((RR,) * 5)
    sealers = [ShareSealer() for _ in range(5)]
    spec = WorkerSpec(0, InMemoryBroker(), TOPICS.session, COORD_PUBLIC, tuple(
        PartySpec(i, np.array([1], np.int8), RR, keys[i]) for i in range(5)))
    parts = list(status_reports(spec, "ready", sealing_keys=[s.public_key for s in sealers]))
    assert [p.parties for p in parts] == [(0, 1), (2, 3), (4,)]
    assert [p.sealing_key_map() for p in parts] == [{0: sealers[0].public_key, 1: sealers[1].public_key},
                                                    {2: sealers[2].public_key, 3: sealers[3].public_key},
                                                    {4: sealers[4].public_key}]
    swapped = parts[1].model_copy(update={"sealing_keys": (parts[1].sealing_keys[0], parts[0].sealing_keys[0])})
    stranger = parts[2].model_copy(update={"signatures": (signature_text(parts[2].digest(), STRANGER),)})
    broker = InMemoryBroker()
    cluster = _Handed()
    with TranscriptStore(tmp_path / "t.sqlite") as store:
        store.open_session(TOPICS.session, roster.k, 1, ["r0"], mode="simulation (seeded generators)")
        coordinator = MpcCoordinator(TOPICS, cluster, 1.0, 0.0)
        async with open_engine(broker, TOPICS, roster, store, COORD_PRIVATE, coordinator, repetitions=1,
                               round_timeout=1.0) as engine, broker.connect("worker") as worker:
            for part in (parts[0], swapped, stranger, parts[0], parts[1], parts[2]):
                await worker.publish(TOPICS.status, part.model_dump_json())
            await asyncio.sleep(0.2)
            assert engine.ready_workers[0].parties == tuple(range(5))
            assert dict(engine.rejections.counts) == {"signature": 2, "replay": 1}
    assert cluster.handed == [p.sealing_key_map() for p in parts]


def test_sealing_keys_are_one_per_party_of_a_ready_report() -> None:
    """A report lists no sealing key or one 32-byte key per party, and only when ready."""
    key, _ = generate_key_pair()
    sealing = ShareSealer().public_key
    for state, sealing_keys in (("ready", (sealing, sealing)), ("failed", (sealing,)), ("ready", (sealing[:31],))):
        with pytest.raises(ValidationError):
            WorkerStatus.signed([key], session=TOPICS.session, worker=0, state=state,  # type: ignore[arg-type]
                                parties=(0,), sealing_keys=sealing_keys)
    plain = WorkerStatus.signed([key], session=TOPICS.session, worker=0, state="ready", parties=(0,))
    assert plain.sealing_keys == () and plain.sealing_key_map() == {}
