"""The ``topology`` section of a run's results (issue 24): the brokers without their passwords, the observer's only
when it is not the parties', the executor, the connections and why, the processes; read back as it was written,
and valid under the schema."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from mpdp.broker.settings import BrokerSettings
from mpdp.parties.api.schemas import TopologySection
from mpdp.parties.api.topology import Topology
from mpdp.parties.rounds.config import RunConfig
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


def _config(tmp_path: Path, **fields: object) -> RunConfig:
    return RunConfig(**{  # type: ignore[arg-type]
        "session": "s", "round_names": ("a",), "bits": np.ones((3, 1), np.int8),
        "mechanisms": (RandomizedResponse(0.5), RandomizedResponse(1.0), RandomizedResponse(math.inf)),
        "repetitions": 1, "seed": 1, "function": parse_function("majority"), "measure": accuracy_measure("zero-one", 2),
        "broker": BrokerSettings.from_url("embedded", environ={}), "workers": 8, "store_path": tmp_path / "t.sqlite",
        "connections": "per-party", **fields})


def test_a_local_run_on_its_own_broker(tmp_path: Path) -> None:
    config = _config(tmp_path)
    assert Topology.of_run(config, "asked for") == Topology("embedded", None, "local", "per-party", "asked for", 3, 0)
    ran = Topology.of_run(config, "asked for", "mqtt://127.0.0.1:40001")  # the broker the run started
    assert (ran.party_broker, ran.observer_broker, ran.workers) == ("mqtt://127.0.0.1:40001", None, 3)  # 3 parties


def test_brokers_by_url_keep_no_password_and_name_the_observers_when_it_is_another(tmp_path: Path) -> None:
    observer = BrokerSettings.from_url("mqtts://obs:s3cret@broker.example:8883", environ={})
    edge = BrokerSettings.from_url("mqtt://alice:hunter2@edge.example:1884", environ={})
    config = _config(tmp_path, broker=observer, party_broker=edge, executor="dask://10.0.0.5:8786",
                     connections="per-worker", workers=2, validators=0)
    topology = Topology.of_run(config, "more parties than sockets")
    assert topology == Topology("mqtt://alice@edge.example:1884", "mqtts://obs@broker.example:8883",
                                "dask://10.0.0.5:8786", "per-worker", "more parties than sockets", 2, 0)
    section = topology.to_json()
    assert "s3cret" not in str(section) and "hunter2" not in str(section)
    assert Topology.from_json(section) == topology and TopologySection.model_validate(section).workers == 2
    # a URL given with a password in it (redacted, never written)
    assert Topology.of_run(_config(tmp_path, broker=edge), "x", "mqtt://alice:hunter2@edge.example:1884"
                           ).party_broker == "mqtt://alice:***@edge.example:1884"
