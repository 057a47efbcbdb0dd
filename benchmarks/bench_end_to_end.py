"""mpdp end to end against the raw broker ceiling measured in the same run.

One mosquitto child: mosquitto_pub -> mosquitto_sub at QoS 1 and QoS 0 with payloads as long as mpdp's
messages; then mpdp sessions (their own mosquitto child, same configuration), k parties over 2 workers,
signatures on, majority with the optimal average rule, SQLite store: unbatched (1 repetition per message)
and batched (1,000 repetitions per message). Printed: steady-state messages/s (rounds after the first),
privatized bits/s (party-repetitions/s), mpdp's messages/s as a ratio of the QoS 1 ceiling, and the CPU per
steady-state message of the observer, the parties' workers and mosquitto (microseconds).

With ``--validators 0,1,2`` each kind runs once per count of the observer's validator processes (MQTT 5
shared subscription, :mod:`mpdp.parties.session.validators`; 0 = the observer verifies every message alone).

Run: python benchmarks/bench_end_to_end.py [K] [ROUNDS] [--validators N,N,...] [--kinds unbatched,batched]
(default 1,000 parties, 6 rounds, 0 validators, both kinds)
"""

from __future__ import annotations

import argparse
import asyncio
import os

from broker_ceiling import Ceiling, measure_ceiling, party_message_bytes
from session_timing import timed_session

from mpdp.broker.mosquitto import run_mosquitto


async def ceilings(messages: int) -> dict[tuple[int, int], Ceiling]:
    found = {}
    async with run_mosquitto(anonymous=True) as endpoint:  # the C clients connect without a login
        for repetitions in (1, 1000):
            for qos in (1, 0):
                found[repetitions, qos] = await measure_ceiling(endpoint, qos, messages,
                                                                party_message_bytes(repetitions))
    return found


def main(parties: int, rounds: int, validators: list[int], kinds: list[str]) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)")
    raw = asyncio.run(ceilings(20_000))
    print(f"{'kind':<10} {'reps':>5} {'valid.':>6} {'msg B':>6} {'QoS1 raw/s':>10} {'QoS0 raw/s':>10} "
          f"{'mpdp msg/s':>10} {'bits/s':>10} {'/QoS1':>6} {'/QoS0':>6} {'peak MB':>8} "
          f"{'CPU us/msg: obs.':>16} {'workers':>7} {'broker':>6}")
    for kind, repetitions in (("unbatched", 1), ("batched", 1000)):
        for count in validators if kind in kinds else ():
            timing = timed_session(parties, rounds, repetitions, validators=count)
            q1, q0 = raw[repetitions, 1], raw[repetitions, 0]
            print(f"{kind:<10} {repetitions:>5} {count:>6} {q1.payload_bytes:>6} {q1.rate:>10.0f} {q0.rate:>10.0f} "
                  f"{timing.messages_per_s:>10.0f} {timing.bits_per_s:>10.3g} {timing.messages_per_s / q1.rate:>6.3f} "
                  f"{timing.messages_per_s / q0.rate:>6.3f} {timing.peak_bytes / 2**20:>8.0f} "
                  f"{timing.cpu_us_per_message('observer'):>16.0f} {timing.cpu_us_per_message('workers'):>7.0f} "
                  f"{timing.cpu_us_per_message('broker'):>6.0f}", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("parties", type=int, nargs="?", default=1000)
    parser.add_argument("rounds", type=int, nargs="?", default=6)
    parser.add_argument("--validators", default="0", help="comma-separated validator counts (default: 0)")
    parser.add_argument("--kinds", default="unbatched,batched", help="which sessions (default: unbatched,batched)")
    args = parser.parse_args()
    main(args.parties, args.rounds, [int(n) for n in args.validators.split(",")], args.kinds.split(","))
