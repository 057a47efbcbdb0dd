"""mpdp end to end against the raw broker ceiling measured in the same run.

Before and after each session, one mosquitto child: ``mosquitto_pub -l`` -> ``mosquitto_sub`` at QoS 1 and
QoS 0 with payloads as long as the session's messages on a party's answer topic (their mean is the
ceiling: the machine's load moves during a run); the sessions: mpdp sessions (their own mosquitto child, same configuration), k parties over 2 workers,
signatures on, majority with the optimal average rule, SQLite store: unbatched (1 repetition per message)
and batched (1,000 repetitions per message). Printed: steady-state messages/s (rounds after the first),
privatized bits/s (party-repetitions/s), mpdp's messages/s as a ratio of the QoS 1 ceiling, and the CPU per
steady-state message of the observer, the parties' workers and mosquitto (microseconds); then the answers/s over
the whole run (``run msg/s``: every round's answers over the run's wall time, broker start, worker spawn and the
parties' connections included) and its ratio of the QoS 1 ceiling. A message is one party's answer, also when a
worker sends its parties' answers in bundles (``--connections per-worker``: :mod:`mpdp.broker.bundle`, the answers
unsigned inside the worker's signed bundle).

With ``--validators 0,1,2`` each kind runs once per count of the observer's validator processes (MQTT 5
shared subscription, :mod:`mpdp.parties.session.validators`; 0 = the observer verifies alone: each answer's
signature, or with ``--connections per-worker`` each bundle's, :mod:`mpdp.broker.bundle`).

Run: python benchmarks/bench_end_to_end.py [K] [ROUNDS] [--validators N,N,...] [--kinds unbatched,batched]
[--batch REPETITIONS] [--connections per-party|per-worker]
(default 1,000 parties, 6 rounds, 0 validators, both kinds, 1,000 repetitions batched, one connection per party).
Issue 23's target: ``bench_end_to_end.py 1000 20 --kinds unbatched --connections per-worker`` at >= 0.25 of QoS 1,
and ``--kinds batched --batch 10000 --connections per-worker`` at 2.5e6 bits/s. The connections are named: a run's
``auto`` keeps per-party connections (the deployed shape) at 1,000 parties, and an answer on its own MQTT message costs the
workers several times the CPU of a bundled one (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
from collections.abc import Callable

from broker_ceiling import Ceiling, measure_ceiling, party_message_bytes
from session_timing import SessionTiming, timed_session

from mpdp.broker.mosquitto import run_mosquitto


async def ceilings(messages: int, repetitions: int) -> dict[int, Ceiling]:
    """The QoS 1 and QoS 0 ceilings (``mosquitto_pub -l``) for answers of ``repetitions`` symbols."""
    found = {}
    async with run_mosquitto(anonymous=True) as endpoint:  # the C clients connect without a login
        for qos in (1, 0):
            found[qos] = await measure_ceiling(endpoint, qos, messages, party_message_bytes(repetitions))
    return found


def bracketed(messages: int, repetitions: int, session: Callable[[], SessionTiming]
              ) -> tuple[SessionTiming, dict[int, Ceiling]]:
    """Run ``session`` between two ceiling measurements; the ceilings' mean rate (the load moves)."""
    before = asyncio.run(ceilings(messages, repetitions))
    timing = session()
    after = asyncio.run(ceilings(messages, repetitions))
    mean = {qos: Ceiling(qos, 2 * messages, before[qos].payload_bytes, before[qos].seconds + after[qos].seconds)
            for qos in (1, 0)}
    return timing, mean


def main(parties: int, rounds: int, validators: list[int], kinds: list[str], batch: int, connections: str) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine); "
          f"{parties} parties x {rounds} rounds, connections {connections}; ceilings: mosquitto_pub -l, "
          f"20,000 messages before and after each session (mean)")
    print(f"{'kind':<10} {'reps':>5} {'valid.':>6} {'msg B':>6} {'QoS1 raw/s':>10} {'QoS0 raw/s':>10} "
          f"{'mpdp msg/s':>10} {'bits/s':>10} {'/QoS1':>6} {'/QoS0':>6} {'peak MB':>8} "
          f"{'CPU us/msg: obs.':>16} {'workers':>7} {'broker':>6} {'load':>5} {'run msg/s':>9} {'/QoS1':>6}")
    for kind, repetitions in (("unbatched", 1), ("batched", batch)):
        for count in validators if kind in kinds else ():
            timing, raw = bracketed(20_000, repetitions, functools.partial(
                timed_session, parties, rounds, repetitions, validators=count, connections=connections))
            q1, q0 = raw[1], raw[0]
            print(f"{kind:<10} {repetitions:>5} {count:>6} {q1.payload_bytes:>6} {q1.rate:>10.0f} {q0.rate:>10.0f} "
                  f"{timing.messages_per_s:>10.0f} {timing.bits_per_s:>10.3g} {timing.messages_per_s / q1.rate:>6.3f} "
                  f"{timing.messages_per_s / q0.rate:>6.3f} {timing.peak_bytes / 2**20:>8.0f} "
                  f"{timing.cpu_us_per_message('observer'):>16.0f} {timing.cpu_us_per_message('workers'):>7.0f} "
                  f"{timing.cpu_us_per_message('broker'):>6.0f} {os.getloadavg()[0]:>5.1f} "
                  f"{timing.run_messages_per_s:>9.0f} {timing.run_messages_per_s / q1.rate:>6.3f}", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parties", type=int, nargs="?", default=1000)
    parser.add_argument("rounds", type=int, nargs="?", default=6)
    parser.add_argument("--validators", default="0", help="comma-separated validator counts (default: 0)")
    parser.add_argument("--kinds", default="unbatched,batched", help="which sessions (default: unbatched,batched)")
    parser.add_argument("--batch", type=int, default=1000, help="repetitions per batched message (default: 1,000)")
    parser.add_argument("--connections", default="per-party", choices=("per-party", "per-worker"),
                        help="the parties' MQTT connections (default: per-party, as deployed)")
    args = parser.parse_args()
    main(args.parties, args.rounds, [int(n) for n in args.validators.split(",")], args.kinds.split(","),
         args.batch, args.connections)
