"""Many hosts on existing clustered brokers (issue 13 item 4): the observer on one broker, the parties'
workers on another (``--party-broker``), every message crossing a mosquitto bridge or a NATS cluster
route. Each (round, party) is recorded exactly once and the transcript is the seeded one (the checks of
tests/integration/test_run.py)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.session.runner import RunConfig, run_async
from tests.calibration import scaled
from tests.cluster_brokers import bridged_mosquitto, nats_cluster
from tests.integration.test_run import K, R, _check, _config

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]


def _settings(endpoint: BrokerEndpoint) -> BrokerSettings:
    return BrokerSettings.from_url(f"mqtt://{endpoint.host}:{endpoint.port}?timeout={scaled(10):.1f}", environ={})


async def _run_across(observer: BrokerEndpoint, parties: BrokerEndpoint, tmp_path: Path) -> None:
    config: RunConfig = _config(tmp_path, _settings(observer), party_broker=_settings(parties))
    outcome = await run_async(config)
    assert (outcome.broker_kind, outcome.broker_url) == ("external", observer.url)
    _check(config, outcome)
    with TranscriptStore(config.store_path) as store:
        seen = collections.Counter((m["round"], m["party"]) for m in store.messages(config.session))
    assert seen == {(r, p): 1 for r in range(R) for p in range(K)}


async def test_parties_on_an_edge_mosquitto_bridged_to_the_observers(tmp_path: Path) -> None:
    async with bridged_mosquitto(edges=1) as (center, (edge,)):
        await _run_across(center, edge, tmp_path)


@pytest.mark.slow
async def test_parties_and_observer_on_two_nodes_of_a_nats_cluster(tmp_path: Path) -> None:
    async with nats_cluster(nodes=3) as nodes:
        await _run_across(nodes[0], nodes[1], tmp_path)
