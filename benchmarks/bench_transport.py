"""End-to-end transport cost at House size: 435 parties, 16 rounds, 200 repetitions, 2 workers.

Prints one table: wall time of :func:`mpdp.parties.session.runner.run` (broker start, worker spawn, every round,
observer decisions with the real rule, SQLite) on the embedded amqtt broker and on a mosquitto child.
Bits are random (about 3% abstain, as in the House data). Run: python benchmarks/bench_transport.py
"""

from __future__ import annotations

import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from mpdp.broker.settings import BrokerSettings, find_mosquitto
from mpdp.parties.session.runner import RunConfig, run
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

K, ROUNDS, REPETITIONS, WORKERS = 435, 16, 200, 2


def _config(broker: str, store: Path) -> RunConfig:
    rng = np.random.default_rng(0)
    bits = rng.choice(np.array([-1, 0, 1], dtype=np.int8), size=(K, ROUNDS), p=[0.03, 0.47, 0.5])
    return RunConfig(
        session=f"bench-{uuid.uuid4().hex[:8]}", round_names=tuple(f"bill-{r}" for r in range(ROUNDS)),
        bits=bits, mechanisms=tuple(RandomizedResponse(e) for e in rng.uniform(0.5, 2.0, K)),
        repetitions=REPETITIONS, seed=1, function=parse_function("majority"),
        measure=accuracy_measure("zero-one", 2), broker=BrokerSettings.from_url(broker, environ={}),
        workers=WORKERS, store_path=store, round_timeout=60.0,
    )


def main() -> None:
    brokers = ["embedded"] + (["mosquitto"] if find_mosquitto() else [])
    print(f"{'broker':<10} {'parties':>7} {'rounds':>6} {'reps':>5} {'workers':>7} {'messages':>8} {'wall s':>7} {'msg/s':>7}")
    for broker in brokers:
        with tempfile.TemporaryDirectory() as tmp:
            start = time.perf_counter()
            outcome = run(_config(broker, Path(tmp, "t.sqlite")))
            total = time.perf_counter() - start
        messages = sum(r.messages_received for r in outcome.rounds)
        print(f"{outcome.broker_kind:<10} {K:>7} {ROUNDS:>6} {REPETITIONS:>5} {WORKERS:>7} {messages:>8} "
              f"{total:>7.2f} {messages / total:>7.0f}")


if __name__ == "__main__":
    main()
