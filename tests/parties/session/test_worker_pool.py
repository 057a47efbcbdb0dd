"""The worker pool reports our own processes' failures as WorkerError, not as a broker failure."""

from __future__ import annotations

import asyncio
import dataclasses
import time

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import WorkerStatus
from mpdp.broker.signing import generate_key_pair
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.session.pool import WorkerPool
from mpdp.parties.session.worker import WorkerSpec, WorkerSpecs
from mpdp.protocols.errors import MpdpError, TransportError, WorkerError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


def _spec(index: int, parties: range) -> WorkerSpec:
    return WorkerSpec(index=index, endpoint=BrokerEndpoint("embedded", "127.0.0.1", 1), session="s",
                      coordinator_key=bytes(32),
                      parties=tuple(PartySpec(p, np.zeros(1, np.int8), RandomizedResponse(1.0), bytes(32),
                                              np.random.SeedSequence(p)) for p in parties))


def test_a_failed_worker_is_a_worker_error_naming_it_its_parties_and_when() -> None:
    pool = WorkerPool([_spec(0, range(3)), _spec(1, range(3, 6))])
    failed = {1: WorkerStatus.signed([generate_key_pair()[0]] * 3, session="s", worker=1, state="failed",
                                    parties=(3, 4, 5), detail="TransportError: x")}
    with pytest.raises(WorkerError) as info:
        pool.check(failed, "during round 2")
    assert str(info.value) == "worker 1 (parties 3-5) failed: TransportError: x during round 2"
    assert isinstance(info.value, MpdpError) and not isinstance(info.value, TransportError)
    pool.check({}, "nothing failed")  # no dead process, no failure report: no error


async def test_a_dead_worker_is_named_with_its_exit_code_and_its_reported_cause() -> None:
    """Two real worker processes that cannot reach their broker (port 1) exit with code 1: one reported
    its cause (a signed "failed" status), one did not; each line names the worker, its parties and its
    exit code, and the cause when reported. Each process's end wakes the event loop once (its sentinel)."""
    unreachable = BrokerEndpoint("mosquitto", "127.0.0.1", 1, timeout=1.0, reconnect_window=0.0)
    specs = [dataclasses.replace(_spec(w, range(2 * w, 2 * w + 2)), endpoint=unreachable) for w in (0, 1)]
    async with WorkerPool(specs, grace=0.0) as pool:
        ended: list[list[int]] = []
        pool.on_exit(lambda: ended.append(pool.exited()))
        deadline = time.monotonic() + 60
        while len(pool.problems()) < 2 and time.monotonic() < deadline:  # both processes exited
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.2)
        assert len(ended) == 2 and ended[-1] == [0, 1], ended
        failed = {0: WorkerStatus.signed([generate_key_pair()[0]] * 2, session="s", worker=0, state="failed",
                                         parties=(0, 1), detail="TransportError: cannot reach the broker")}
        assert pool.problems(failed) == [
            "worker 0 (parties 0-1) failed: TransportError: cannot reach the broker; its process exited with code 1",
            "worker process 1 (parties 2-3) exited with code 1 without reporting a cause"]
        assert pool.problems(failed, processes=False) == pool.problems(failed)[:1]
        with pytest.raises(WorkerError, match=r"worker process 1 \(parties 2-3\) exited with code 1 .* during round 0$"):
            pool.check(failed, "during round 0")


async def test_the_pool_takes_each_workers_spec_once_as_it_spawns_it_and_keeps_its_party_ids() -> None:
    """10^6 parties: the main process held every worker's party specs while it pickled them (2.4 GB). With
    WorkerSpecs each worker's spec is built as the pool spawns that worker, once, and dropped; the pool
    answers for the workers' parties from the ids it kept (no spec is built again)."""
    unreachable = BrokerEndpoint("mosquitto", "127.0.0.1", 1, timeout=1.0, reconnect_window=0.0)
    built: list[int] = []

    def build(w: int) -> WorkerSpec:
        built.append(w)
        return dataclasses.replace(_spec(w, range(3 * w, 3 * w + 3)), endpoint=unreachable)

    specs = WorkerSpecs(2, build)
    assert len(specs) == 2 and built == []
    assert [s.index for s in specs[1:]] == [1] and built == [1]  # a slice builds what it covers
    built.clear()
    async with WorkerPool(specs, grace=0.0) as pool:
        assert built == [0, 1]
        assert (pool.parties_of(0), pool.parties_of(1)) == ((0, 1, 2), (3, 4, 5)) and built == [0, 1]
    with pytest.raises(IndexError):
        specs[2]
