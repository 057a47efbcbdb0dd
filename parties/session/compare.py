"""Three models side by side, live (issue 14): randomized response (no one trusted), the trusted curator and
secure computation (mpc) on the same data, the same epsilon and the same seed, over one real broker.

:func:`compare_live` runs the three sessions one after the other on one broker (started once), with a spy
client subscribed to the sessions' topics that counts the bytes every party publishes, and returns per
protocol the evaluated rounds (measured accuracy, its interval and the exact theory: the observer's
optimal rule for rr, the central mechanism of 001 for curator and mpc) and the cost: wall seconds per
round (median time between round closes), bytes each party publishes per round and, for mpc, each
server's bytes in (its job) and out (its MPyC messages) and CPU seconds per round
(:meth:`mpdp.parties.mpc.store.MpcStore.server_costs`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mpdp.analysis.reports.evaluation import RoundEvaluation
from mpdp.broker.launch import open_broker
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.mpc.store import MpcStore
from mpdp.parties.rounds.config import RunConfig
from mpdp.parties.rounds.seeds import SeedTree
from mpdp.parties.session.datasets import Dataset
from mpdp.parties.session.evaluate import evaluate_run
from mpdp.parties.session.runner import run_async, surfacing_errors
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache, zero_one_rules

__all__ = ["COMPARED", "ProtocolComparison", "ProtocolCost", "compare_live"]

#: The protocols compared, in order.
COMPARED = ("rr", "curator", "mpc")


@dataclass(frozen=True, slots=True)
class ProtocolCost:
    """What one protocol's run cost.

    Attributes:
        seconds_per_round: median wall seconds between two round closes (the first round: from the start).
        wall_time: seconds of the whole run (broker already up; parties', servers' start included).
        party_bytes: mean bytes one party published per round (its signed answer or abstention, JSON).
        server_bytes_in, server_bytes_out, server_cpu: mpc only (else None): mean per server and round of
            the bytes of its job, the bytes it sent to the other servers, its CPU seconds.
    """

    seconds_per_round: float
    wall_time: float
    party_bytes: float
    server_bytes_in: float | None = None
    server_bytes_out: float | None = None
    server_cpu: float | None = None


@dataclass(frozen=True, slots=True)
class ProtocolComparison:
    """One protocol's run: its evaluated rounds (in round order) and its cost."""

    protocol: str
    rounds: tuple[RoundEvaluation, ...]
    cost: ProtocolCost


def compare_live(dataset: Dataset, epsilon: float, *, delta: float = 0.0, repetitions: int = 50,
                 seed: int | None = None, servers: int = 3, threshold: int = 1,
                 broker: BrokerSettings | None = None, workers: int | None = None, round_timeout: float = 60.0,
                 alpha: float = 0.05, progress: Callable[[str, int], None] | None = None,
                 ) -> tuple[ProtocolComparison, ...]:
    """Run rr, curator and mpc on ``dataset`` (the majority, every party at (epsilon, delta)) and evaluate.

    Args:
        dataset: the parties' bits (k, R); epsilon, delta: every party's level; repetitions: per round.
        seed: the root seed of the data draws of rr and the curator (None: OS entropy); the mpc servers'
            draws are secret and never seeded.
        servers, threshold: mpc's m and T; broker: where (None: start our own); workers: per run;
        round_timeout: seconds per round; alpha: family-wise level of each protocol's consistency tests.
        progress: called as ``progress(protocol, rounds_done)``.

    Returns:
        one :class:`ProtocolComparison` per protocol of :data:`COMPARED`.

    Raises:
        ParameterError: what a protocol refuses (e.g. an infinite epsilon is fine, a bad m/T is not).
        TransportError, WorkerError: the broker, a party process or a compute server failed.
    """
    return asyncio.run(surfacing_errors(_compare(dataset, epsilon, delta, repetitions, seed, servers, threshold,
                                                 broker or BrokerSettings.from_url(None), workers, round_timeout,
                                                 alpha, progress or (lambda protocol, done: None))))


async def _compare(dataset: Dataset, epsilon: float, delta: float, repetitions: int, seed: int | None,
                   servers: int, threshold: int, broker: BrokerSettings, workers: int | None,
                   round_timeout: float, alpha: float,
                   progress: Callable[[str, int], None]) -> tuple[ProtocolComparison, ...]:
    seeds = SeedTree.from_seed(seed)
    mechanisms = (RandomizedResponse(epsilon, delta),) * dataset.num_parties
    function = parse_function("majority")
    rules = RuleCache()
    sent: collections.Counter[str] = collections.Counter()
    results = []
    with tempfile.TemporaryDirectory(prefix="mpdp-compare-") as tmp:
        async with open_broker(broker) as endpoint, endpoint.client(f"mpdp-compare-{uuid.uuid4().hex[:8]}") as spy:
            await spy.subscribe("mpdp/+/party/+", qos=1)

            async def count() -> None:
                async for message in spy.messages:
                    sent[message.topic.value.split("/")[1]] += len(bytes(message.payload))

            counting = asyncio.create_task(count())
            reached = endpoint.reached()  # each run reaches this broker as an external one, with its login
            try:
                for protocol in COMPARED:
                    config = RunConfig(
                        session=f"cmp-{protocol}-{uuid.uuid4().hex[:10]}", round_names=dataset.round_names,
                        bits=dataset.bits, mechanisms=mechanisms, repetitions=repetitions, seed=seeds.seed,
                        function=function, measure=accuracy_measure("zero-one", 2),
                        rule_factory=zero_one_rules("average", engine="posterior", cache=rules) if protocol == "rr"
                        else None, broker=reached, workers=workers,
                        store_path=Path(tmp) / f"{protocol}.sqlite", round_timeout=round_timeout,
                        protocol=protocol, servers=servers, threshold=threshold)
                    closes: list[float] = [time.perf_counter()]

                    def tick(done: int, messages: int, protocol: str = protocol, closes: list[float] = closes) -> None:
                        if done >= len(closes):
                            closes.append(time.perf_counter())
                            progress(protocol, done)

                    outcome = await run_async(config, tick)
                    await asyncio.sleep(0.3)  # the spy's last messages
                    evaluated = evaluate_run(outcome, dataset.bits, mechanisms, function,
                                             rule="average" if protocol == "rr" else "curator", alpha=alpha,
                                             rng=seeds.theory(), rules=rules)
                    cost = ProtocolCost(float(np.median(np.diff(closes))), outcome.wall_time,
                                        sent[config.session] / (config.k * len(outcome.rounds)))
                    if protocol == "mpc":
                        cost = _server_costs(config, cost)
                    results.append(ProtocolComparison(protocol, tuple(evaluated), cost))
            finally:
                counting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await counting
    return tuple(results)


def _server_costs(config: RunConfig, cost: ProtocolCost) -> ProtocolCost:
    with MpcStore(config.store_path) as store:
        rows = [c for per_round in store.server_costs(config.session).values() for c in per_round]
    if not rows:
        return cost
    return ProtocolCost(cost.seconds_per_round, cost.wall_time, cost.party_bytes,
                        float(np.mean([c.received for c in rows])), float(np.mean([c.sent for c in rows])),
                        float(np.mean([c.cpu for c in rows])))
