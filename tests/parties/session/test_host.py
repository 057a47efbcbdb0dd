"""A party host's configuration: which rows it keeps, which mode, which generators."""

import asyncio
import dataclasses
import time
from pathlib import Path

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import Announcement, WorkerStatus
from mpdp.broker.signing import generate_key_pair, public_key_of
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker, next_delivery
from mpdp.parties.rounds.session_files import write_session
from mpdp.parties.session.datasets import Dataset
from mpdp.parties.session.external_broker import deployment_endpoint
from mpdp.parties.session.host import HostConfig, _ReadyBeacon, host_bits
from mpdp.protocols import ParameterError, RandomizedResponse

K = 5
ENDPOINT = BrokerEndpoint("external", "127.0.0.1", 1883)


def _dataset(rows: int) -> Dataset:
    bits = np.arange(rows * 2, dtype=np.int8).reshape(rows, 2) % 3 - 1
    return Dataset("t", ("a", "b"), bits, ("",) * rows)


def test_host_keeps_only_its_rows() -> None:
    full = _dataset(K)
    assert host_bits(full, (1, 3), K).tolist() == full.bits[[1, 3]].tolist()
    own = _dataset(2)
    assert host_bits(own, (1, 3), K).tolist() == own.bits.tolist()
    with pytest.raises(ParameterError, match="5 rows .* or 2 .*it has 3"):
        host_bits(_dataset(3), (1, 3), K)


def _config(tmp_path: Path, **changes: object) -> HostConfig:
    facts = write_session(tmp_path, "h-1", [RandomizedResponse(1.0)] * K)
    fields: dict[str, object] = dict(facts=facts, parties=(1, 3), bits=np.array([[1, 0], [-1, 1]]),
                                     private_keys=(b"a" * 32, b"b" * 32), endpoint=ENDPOINT)
    fields.update(changes)
    return HostConfig(**fields)  # type: ignore[arg-type]


def test_deployment_mode_by_default_and_seeded_simulation(tmp_path: Path) -> None:
    spec = _config(tmp_path).worker_spec()
    assert spec.secure and spec.index == 1 and [p.seed for p in spec.parties] == [None, None]
    assert [p.party for p in spec.parties] == [1, 3] and spec.parties[1].bits.tolist() == [-1, 1]
    simulated = _config(tmp_path / "s", seed=7).worker_spec()
    expected = np.random.SeedSequence(7).spawn(K)
    assert not simulated.secure
    # party i draws what it would draw in `mpdp simulate --seed 7`
    for party in simulated.parties:
        assert party.seed.spawn_key == expected[party.party].spawn_key and party.seed.entropy == 7


@pytest.mark.parametrize("change, needle", [
    (dict(parties=()), "at least one"), (dict(parties=(3, 1)), "ascending"), (dict(parties=(1, 5)), "0..4"),
    (dict(bits=np.zeros((3, 2))), r"shape \(2, R\)"), (dict(bits=np.full((2, 2), 2)), "values 0, 1, -1"),
    (dict(private_keys=(b"a" * 32,)), "one per hosted party"), (dict(seed=-1), "seed"),
    (dict(idle_timeout=float("inf")), "idle_timeout"), (dict(observer_grace=1.0), "at least 2 s"),
])
def test_config_is_validated(tmp_path: Path, change: dict[str, object], needle: str) -> None:
    with pytest.raises(ParameterError, match=needle):
        _config(tmp_path, **change)


def test_deployed_roles_need_a_running_broker() -> None:
    assert deployment_endpoint("mqtt://broker.example:1884", {}).port == 1884
    assert deployment_endpoint(None, {"MPDP_BROKER_URL": "mqtt://b"}).host == "b"
    with pytest.raises(ParameterError, match=r"MPDP_BROKER_URL='\(unset\)'.*running broker"):
        deployment_endpoint(None, {})
    with pytest.raises(ParameterError, match="--broker='embedded'"):
        deployment_endpoint("embedded", {})


async def test_beacon_repeats_its_own_ready_until_a_signed_announcement(tmp_path: Path) -> None:
    coordinator_private, coordinator_public = generate_key_pair()
    stranger, _ = generate_key_pair()
    config = _config(tmp_path, ready_interval=0.02)
    config = dataclasses.replace(config, facts=dataclasses.replace(config.facts, coordinator_public_key=coordinator_public))
    topics, broker = Topics("h-1"), InMemoryBroker()

    def status(worker: int, keys: tuple[bytes, ...] = config.private_keys) -> str:
        return WorkerStatus.signed(keys, session="h-1", worker=worker, state="ready", parties=(1, 3)).model_dump_json()

    def announcement(key: bytes) -> str:
        return Announcement.signed(key, session="h-1", kind="round", round=0, repetitions=1).model_dump_json()

    async with broker.connect("watch") as watch:
        await watch.subscribe(topics.status)
        beacon = _ReadyBeacon(config, broker)
        task = asyncio.create_task(beacon.run())
        await beacon.subscribed.wait()
        assert await next_delivery(watch, 0.1) is None  # nothing to repeat before its own "ready"
        await watch.publish(topics.status, status(9))  # another host's: not repeated
        await watch.publish(topics.status, status(config.worker, (stranger, stranger)))  # not the host's: not repeated
        # party 1's key for both: party 3 did not sign it, so it is not the host's own either
        await watch.publish(topics.status, status(config.worker, (config.private_keys[0],) * 2))
        assert [await next_delivery(watch, 0.5) is not None for _ in range(3)] == [True] * 3  # the three above
        assert await next_delivery(watch, 0.1) is None
        await watch.publish(topics.status, status(config.worker))
        seen = [await next_delivery(watch, 0.5) for _ in range(5)]
        reports = [WorkerStatus.model_validate_json(d.payload) for d in seen if d]
        assert [(r.worker, r.state, r.parties) for r in reports] == [(1, "ready", (1, 3))] * 5
        # each repeat is signed afresh by each hosted party: the observer refuses a replayed one
        own_keys = {p: public_key_of(key) for p, key in zip(config.parties, config.private_keys, strict=True)}
        assert all(r.unsigned(own_keys) == [] for r in reports)
        assert [r.sequence for r in reports] == sorted({r.sequence for r in reports})
        await watch.publish(topics.rounds, announcement(stranger))  # not the coordinator's: keeps repeating
        assert await next_delivery(watch, 0.5) is not None
        await watch.publish(topics.rounds, announcement(coordinator_private))
        await asyncio.wait_for(task, 1.0)


async def test_other_reports_on_the_status_topic_do_not_starve_the_ready_beacon(tmp_path: Path) -> None:
    """Two hosts started before the observer each hear the other's "ready": the repeat keeps its clock."""
    config = _config(tmp_path, ready_interval=0.1)
    other, _ = generate_key_pair()
    topics, broker = Topics("h-1"), InMemoryBroker()
    own = WorkerStatus.signed(config.private_keys, session="h-1", worker=1, state="ready", parties=(1, 3))
    async with broker.connect("watch") as watch:
        await watch.subscribe(topics.status)
        beacon = _ReadyBeacon(config, broker)
        task = asyncio.create_task(beacon.run())
        await beacon.subscribed.wait()
        await watch.publish(topics.status, own.model_dump_json())
        repeats, end = 0, time.monotonic() + 1.0
        while time.monotonic() < end:  # another host's report at least every 20 ms, for a second
            await watch.publish(topics.status, WorkerStatus.signed(
                [other], session="h-1", worker=4, state="ready", parties=(4,)).model_dump_json())
            while (delivery := await next_delivery(watch, 0.02)) is not None:
                repeats += WorkerStatus.model_validate_json(delivery.payload).worker == 1
        task.cancel()
    # one repeat every 0.1 s by the clock: about 10 in the second (before: none, each report reset the wait)
    assert repeats >= 5
