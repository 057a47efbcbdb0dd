"""Many parties: rounds/s and peak memory of the whole process tree at k = 10, 100, 1,000, 5,000 and 10,000
(and 10^5 when asked: ``python benchmarks/bench_many_parties.py 100000``).

Each k runs a session of 3 rounds (2 above 10,000 parties) of 1 repetition over 2 workers on a mosquitto
child (signatures on, majority, optimal average rule, SQLite store), once with one MQTT connection per party
(as deployed; up to 10,000 parties, beyond which a 2-core machine runs out of sockets and time) and once with
one connection per worker (``--connections per-worker``). Each round may take thrice its estimated time
(:func:`mpdp.parties.session.estimate.round_timeout_floor`), at least 300 s. Printed: steady-state rounds/s and
messages/s (rounds after the first), wall time of the whole run, and the peak summed RSS of this process,
the workers and the broker (psutil, sampled every 0.1 s). The raw QoS 1 ceiling of mosquitto's own
clients is measured first in the same run (:mod:`broker_ceiling`).

Run: python benchmarks/bench_many_parties.py [K ...]   (default 10 100 1000 5000 10000)
"""

from __future__ import annotations

import asyncio
import os
import sys

from broker_ceiling import measure_ceiling, party_message_bytes
from session_timing import timed_session

from mpdp.broker.mosquitto import run_mosquitto
from mpdp.parties.session.estimate import round_timeout_floor

ROUNDS = 3
#: Above this many parties: 2 rounds (the first is not timed), and no run with one connection per party.
LARGE = 10_000


async def ceiling() -> float:
    async with run_mosquitto(anonymous=True) as endpoint:  # the C clients connect without a login
        return (await measure_ceiling(endpoint, 1, 20_000, party_message_bytes(1))).rate


def main(sizes: list[int]) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine)")
    raw = asyncio.run(ceiling())
    print(f"raw QoS 1 ceiling (mosquitto_pub -> mosquitto_sub): {raw:.0f} msg/s")
    print(f"{'parties':>7} {'connections':<11} {'rounds/s':>8} {'msg/s':>7} {'/raw':>6} {'wall s':>7} {'peak MB':>8}")
    for parties in sizes:
        for connections in ("per-party", "per-worker") if parties <= LARGE else ("per-worker",):
            timeout = max(300.0, round_timeout_floor(parties, 1, connections))
            t = timed_session(parties, ROUNDS if parties <= LARGE else 2, 1, connections=connections,
                              round_timeout=timeout)
            print(f"{parties:>7} {connections:<11} {t.rounds_per_s:>8.3f} {t.messages_per_s:>7.0f} "
                  f"{t.messages_per_s / raw:>6.3f} {t.wall_seconds:>7.1f} {t.peak_bytes / 2**20:>8.0f}", flush=True)
    print(f"load average at end {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 100, 1000, 5000, 10000])
