"""The mpc protocol end to end: worker processes running mpc parties (BallotParty with SharedBallots), the coordinator, three MPyC compute
server processes (one MPyC session for the run), a real mosquitto and a spy subscribed to '#'.

eps = inf makes the central mechanism the exact majority, so every release is known: the servers computed
the participants' count from sealed shares. What the broker carried: signed ballots of one length whatever
the vote, the servers' signed releases. No process is left behind."""

from __future__ import annotations

import asyncio
import json
import math
import multiprocessing
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.mpc_messages import MpcAnnouncement, SharedBallot
from mpdp.broker.settings import BrokerSettings
from mpdp.broker.topics import Topics
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.session.runner import RunConfig, run_async
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled
from tests.integration.test_curator_run import assert_exact_majority
from tests.integration.test_mpc_cluster import _children

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
K, R, REPS = 9, 3, 20


def _config(tmp_path: Path, endpoint: BrokerEndpoint, **changes: object) -> RunConfig:
    bits = np.random.default_rng(4).integers(0, 2, size=(K, R)).astype(np.int8)
    bits[:5, 1], bits[5:, 1] = 1, 0  # round 1: 5 of 9, a margin of one vote
    bits[2, 2] = -1
    fields: dict[str, object] = dict(
        session=f"mpc-{tmp_path.name[-10:].replace('_', '')}", round_names=("bill a", "bill b", "bill c"),
        bits=bits, mechanisms=(RandomizedResponse(math.inf),) * K, repetitions=REPS, seed=5,
        function=parse_function("passed"), measure=accuracy_measure("zero-one", 2),
        broker=BrokerSettings.from_url(f"mqtt://127.0.0.1:{endpoint.port}", environ={}), workers=2,
        store_path=tmp_path / "m.sqlite", round_timeout=scaled(40.0), protocol="mpc",
    )
    fields.update(changes)
    return RunConfig(**fields)  # type: ignore[arg-type]


async def test_the_servers_release_the_exact_majority_and_the_broker_sees_only_ciphertexts(
    mosquitto: BrokerEndpoint, tmp_path: Path
) -> None:
    config = _config(tmp_path, mosquitto)
    topics = Topics(config.session)
    seen: list[tuple[str, str]] = []
    before = _children()
    async with mosquitto.client(f"{config.session}-spy") as spy:
        await spy.subscribe("#", qos=1)

        async def collect() -> None:
            async for message in spy.messages:
                seen.append((message.topic.value, bytes(message.payload).decode()))  # type: ignore[arg-type]

        spying = asyncio.create_task(collect())
        outcome = await run_async(config)
        await asyncio.sleep(scaled(0.3))  # the last messages reach the spy
        spying.cancel()
    assert outcome.protocol == "mpc"
    assert_exact_majority(config, outcome)
    # the broker's view: sealed ballots of one length (parties vote 0 and 1), each with 3 shares
    sealed = [SharedBallot.model_validate_json(t) for topic, t in seen if topics.party_of(topic) is not None]
    assert len(sealed) == K * R
    lengths = {len(b.model_dump_json()) - len(str(b.party)) - len(str(b.round)) for b in sealed if b.kind == "sealed"}
    assert len(lengths) == 1 and all(len(b.shares) == 3 for b in sealed if b.kind == "sealed")
    # each party's session key, signed in its worker's "ready" (the servers derive their keys from it before
    # round 0), is the key of every share it sealed, in every round
    ready: dict[int, bytes] = {}
    for status in (WorkerStatus.model_validate_json(t) for topic, t in seen if topic == topics.status):
        ready.update(status.sealing_key_map() if status.state == "ready" else {})
    assert sorted(ready) == list(range(K))
    assert all(key == ready[b.party] for b in sealed if b.kind == "sealed" for key, _ in b.sealed_pairs())
    announcements = [a for a in (MpcAnnouncement.model_validate_json(t) for topic, t in seen if topic == topics.rounds)
                     if a.kind != "heartbeat"]  # the engine's liveness signal between rounds
    assert [a.kind for a in announcements] == ["round"] * R + ["end"]
    assert len({tuple(a.server_keys) for a in announcements[:R]}) == 1 and announcements[0].threshold == 1
    released = [CuratorRelease.model_validate_json(t) for topic, t in seen if topic == topics.release]
    assert len(released) == 3 * R  # every server's signed copy
    with MpcStore(config.store_path) as store:
        costs = store.server_costs(config.session)
        assert sorted(costs) == list(range(R)) and all(len(c) == 3 for c in costs.values())
        assert all(c.sent > 0 and c.received > 0 and c.cpu > 0 for row in costs.values() for c in row)
        for index, payload in enumerate(store.release_payloads(config.session)):
            copies = [CuratorRelease.model_validate_json(text) for text in json.loads(payload)]
            assert len({c.signature for c in copies}) == 3
            assert all(c.output_array().tolist() == outcome.rounds[index].decisions.tolist() for c in copies)
        kinds = [entry["kind"] for entry in store.ballots(config.session)]
        assert kinds.count("abstain") == 1 and kinds.count("sealed") == K * R - 1
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in _children() - before]
    assert multiprocessing.active_children() == [] and not [c for c in commands if b"mpc.server" in c]


async def test_the_servers_release_the_sum(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """sum at eps = 30: the geometric table has no threshold >= 1 at L = 40 (e^-30 2^40 < 1/2), so the noise
    is 0 as drawn and every release is the participants' exact count, computed from the sealed shares."""
    config = _config(tmp_path, mosquitto, function=parse_function("sum"), mechanisms=(RandomizedResponse(30.0),) * K,
                     repetitions=3)
    outcome = await run_async(config)
    for index, got in enumerate(outcome.rounds):
        votes = config.bits[got.participants, index]
        assert got.decisions.tolist() == [int(votes.sum())] * 3


async def test_mpc_refuses_what_it_cannot_release(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    with pytest.raises(ParameterError, match="threshold"):
        await run_async(_config(tmp_path, mosquitto, threshold=2))
    with pytest.raises(ParameterError, match="protocol rr"):
        await run_async(_config(tmp_path, mosquitto, function=parse_function("xor")))
    with pytest.raises(ParameterError, match="finite epsilon"):
        await run_async(_config(tmp_path, mosquitto, function=parse_function("sum")))  # eps = inf
