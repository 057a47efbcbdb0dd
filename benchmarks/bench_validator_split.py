"""Where the observer's time per party message goes with and without validator processes (one process,
no broker, no parties: only the observer's own work, so the figures do not move with the parties' load).

Baseline, measured in the same run: the single-process observer's :meth:`RoundEngine.handle` (parse, Ed25519
check, round/duplicate checks, payload) for k signed messages of one round. Then the same k messages split
as with ``--validators N``: a validator's work (:func:`check_delivery`, parse and signature, plus pickling
the records in batches as it sends them on its pipe) and the merger's work (unpickling the batches and
:func:`merge` into an engine). Printed: microseconds per message and messages/s per core for each part;
the merger's capacity bounds the observer once N validators cover its verification
(N >= merger rate / validator rate, cores permitting).

Run: python benchmarks/bench_validator_split.py [K]   (default 1,000 parties, best of 3)
"""

from __future__ import annotations

import asyncio
import os
import pickle
import sys
import time
from collections.abc import Callable

import numpy as np

from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import Delivery, InMemoryBroker
from mpdp.parties.rounds.engine import RoundEngine, SignedReader, open_engine
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rounds.store import TranscriptStore
from mpdp.parties.rr.observer import Observer
from mpdp.parties.session.validator import BATCH, check_delivery
from mpdp.parties.session.validators import merge
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.symmetric import observer_average_rule

Engine = RoundEngine[PartyMessage, object]


async def _timed_round(k: int, roster: Roster, topics: Topics, feed: Callable[[Engine], None]) -> float:
    """Seconds ``feed(engine)`` takes to hand one round's k messages to a fresh engine (then it closes)."""
    with TranscriptStore(None) as store:
        store.open_session(topics.session, k, 1, ["r0"], mode="simulation (seeded generators)")
        observer = Observer(topics, roster, store, function=parse_function("majority"),
                            measure=accuracy_measure("zero-one", 2), rule_factory=observer_average_rule)
        async with open_engine(InMemoryBroker(), topics, roster, store, generate_key_pair()[0], observer,
                               repetitions=1, round_timeout=600.0, party_topics=False) as engine:
            closing = asyncio.create_task(engine.run_round(0, "r0"))
            await asyncio.sleep(0.05)  # announced, open
            start = time.perf_counter()
            feed(engine)
            seconds = time.perf_counter() - start
            outcome = await closing
            assert outcome.messages_received == k and outcome.status == "complete"
    return seconds


async def main(k: int) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; k = {k}, one message per party")
    roster, keys = Roster.generate([RandomizedResponse(1.0)] * k)
    rng = np.random.default_rng(0)
    best = {"single observer (baseline)": np.inf, "validator: parse + verify + pickle": np.inf,
            "merger: unpickle + merge": np.inf}
    for trial in range(3):
        topics = Topics(f"split-{trial}")
        deliveries = [Delivery(topics.party(i), PartyMessage.signed(
            keys[i], session=topics.session, round=0, party=i, repetitions=1,
            symbols=rng.integers(0, 2, 1).astype(np.uint8)).model_dump_json().encode()) for i in range(k)]

        def single(engine: Engine) -> None:
            for delivery in deliveries:
                engine.handle(delivery.topic, delivery.payload)

        best["single observer (baseline)"] = min(best["single observer (baseline)"],
                                                 await _timed_round(k, roster, topics, single))
        reader = SignedReader(topics.session, roster)
        start = time.perf_counter()
        records = [check_delivery(reader, PartyMessage, topics, d) for d in deliveries]
        batches = [pickle.dumps(records[i:i + BATCH]) for i in range(0, k, BATCH)]
        best["validator: parse + verify + pickle"] = min(best["validator: parse + verify + pickle"],
                                                         time.perf_counter() - start)

        def merged(engine: Engine) -> None:
            for batch in batches:
                merge(engine, pickle.loads(batch))

        best["merger: unpickle + merge"] = min(best["merger: unpickle + merge"],
                                               await _timed_round(k, roster, topics, merged))
    baseline = best["single observer (baseline)"]
    for name, seconds in best.items():
        print(f"{name:<36} {seconds / k * 1e6:8.1f} us/message {k / seconds:9.0f} msg/s per core "
              f"({seconds / baseline:5.2f} x baseline)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
