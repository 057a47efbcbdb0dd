"""``--executor dask://HOST:PORT``: the parties' workers as tasks on a Dask cluster (a local scheduler and two
worker processes on free ports), the observer here, one mosquitto by URL: the same transcript bit for bit as
the local run with the same seed."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.rounds.seeds import round_generator
from mpdp.parties.session import runner
from mpdp.parties.session.dask_pool import DaskWorkerPool
from mpdp.parties.session.runner import RunConfig, run_async
from mpdp.protocols import ParameterError, RandomizedResponse, accuracy_measure, parse_function
from tests.calibration import scaled

distributed = pytest.importorskip("distributed")
pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]
K, R, REPS, SEED = 10, 3, 16, 77
FIELDS = ("participants", "abstained", "absent", "symbols", "decisions")


def _config(tmp_path: Path, broker: BrokerSettings, name: str, **changes: Any) -> RunConfig:
    bits = np.random.default_rng(3).integers(0, 2, size=(K, R)).astype(np.int8)
    bits[4, 1] = -1
    fields: dict[str, Any] = dict(
        session=f"dask-{name}", round_names=tuple(f"r{r}" for r in range(R)), bits=bits,
        mechanisms=tuple(RandomizedResponse(0.4 + 0.2 * i) for i in range(K)), repetitions=REPS, seed=SEED,
        function=parse_function("majority"), measure=accuracy_measure("zero-one", 2), broker=broker, workers=2,
        store_path=tmp_path / f"{name}.sqlite", round_timeout=scaled(20.0), ready_timeout=scaled(60.0))
    fields.update(changes)
    return RunConfig(**fields)


async def test_a_dask_placed_simulation_equals_the_local_one(mosquitto: BrokerEndpoint, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    settings = BrokerSettings.from_url(f"mqtt://127.0.0.1:{mosquitto.port}", environ={})
    pools: list[DaskWorkerPool] = []

    class Recorded(DaskWorkerPool):
        async def __aenter__(self) -> Recorded:
            pools.append(self)
            return await super().__aenter__()

    monkeypatch.setattr(runner, "DaskWorkerPool", Recorded)
    local = await run_async(_config(tmp_path, settings, "local"))
    # a scheduler (its HTTP server too) and two worker processes (nannies) on free loopback ports
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  scheduler_port=0, dashboard_address="127.0.0.1:0", protocol="tcp") as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        workers = sorted(cluster.scheduler_info["workers"])
        placed = await run_async(_config(tmp_path, settings, "dask", executor=f"dask://{address}"))
    assert len(workers) == 2 and multiprocessing.active_children() == []
    # each of the run's two workers ran on its own Dask worker process, to the end
    (pool,) = pools
    assert pool.placed == pool.ran == {0: workers[0], 1: workers[1]}
    seeds = np.random.SeedSequence(SEED).spawn(K)
    for index, (here, there) in enumerate(zip(local.rounds, placed.rounds, strict=True)):
        assert (here.status, there.status) == ("complete", "complete")
        for field in FIELDS:
            assert np.array_equal(getattr(here, field), getattr(there, field)), (index, field)
        # and both are each party's own draws (an independent computation of the same symbols)
        for j, party in enumerate(there.participants):
            mechanism = RandomizedResponse(0.4 + 0.2 * party)
            bit = int(np.random.default_rng(3).integers(0, 2, size=(K, R))[party, index])
            expected = mechanism.sample(bit, REPS, round_generator(seeds[party], index))
            assert np.array_equal(there.symbols[:, j], expected)
    assert placed.rounds[1].abstained.tolist() == [4]


@pytest.mark.parametrize("broker", ["embedded", "mosquitto", "auto"])
def test_a_broker_this_process_starts_cannot_serve_dask_workers(tmp_path: Path, broker: str) -> None:
    with pytest.raises(ParameterError, match=r"executor=.*a broker given by URL"):
        _config(tmp_path, BrokerSettings.from_url(broker, environ={}), "refused", executor="dask://127.0.0.1:8786")


@pytest.mark.parametrize("url", ["tcp://127.0.0.1:8786", "dask://nohost", "dask://:8786"])
def test_the_executor_must_be_a_dask_address(tmp_path: Path, url: str) -> None:
    with pytest.raises(ParameterError, match="dask://HOST:PORT"):
        _config(tmp_path, BrokerSettings.from_url("mqtt://127.0.0.1:1", environ={}), "bad", executor=url)
