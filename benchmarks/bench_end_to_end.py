"""mpdp end to end against the raw broker ceiling measured in the same run, interleaved with mpdp's runs.

The ceiling: ``mosquitto_pub -l`` -> ``mosquitto_sub`` at QoS 1 and QoS 0, :data:`CEILING_MESSAGES` messages per
sample (2-5 s at QoS 1 on the shared 2-core machine; 20,000 messages, 0.3-0.5 s, swung 38,900-61,900 msg/s
between runs 10 s apart) with payloads as long as the session's messages on a party's answer topic, each sample on its
own mosquitto child; a sample before every mpdp run and one after the last (``--runs`` runs: runs + 1 samples),
so the load is sampled across the whole measurement. Printed: every sample, and their median (the ceiling every
ratio is taken of) and spread (min-max). The mpdp runs: k parties over 2 workers, signatures on, majority with the
optimal average rule, SQLite store, each on its own mosquitto child (same configuration): unbatched (1 repetition
per message) and batched (1,000 repetitions per message). Printed per run: steady-state messages/s (rounds after
the first), privatized bits/s (party-repetitions/s), mpdp's messages/s as a ratio of the QoS 1 and QoS 0 ceiling
medians, and the CPU per steady-state message of the observer, the parties' workers and mosquitto
(microseconds); then the answers/s over the whole run (``run msg/s``: every round's answers over the run's wall
time, broker start, worker spawn and the parties' connections included) and its ratio of the QoS 1 median; then
the median of the runs. A message is one party's answer, also when a worker sends its parties' answers in bundles
(``--connections per-worker``: :mod:`mpdp.broker.bundle`, the answers unsigned inside the worker's signed bundle).

With ``--validators 0,1,2`` each kind runs once per count of the observer's validator processes (MQTT 5
shared subscription, :mod:`mpdp.parties.session.validators`; 0 = the observer verifies alone: each answer's
signature, or with ``--connections per-worker`` each bundle's, :mod:`mpdp.broker.bundle`).

Run: python benchmarks/bench_end_to_end.py [K] [ROUNDS] [--validators N,N,...] [--kinds unbatched,batched]
[--batch REPETITIONS] [--connections per-party|per-worker] [--runs N]
(default 1,000 parties, 6 rounds, 0 validators, both kinds, 1,000 repetitions batched, one connection per party,
3 runs). Issue 23's target: ``bench_end_to_end.py 1000 20 --kinds unbatched --connections per-worker`` at >= 0.25
of QoS 1, and ``--kinds batched --batch 10000 --connections per-worker`` at 2.5e6 bits/s. The connections are
named: a run's ``auto`` keeps per-party connections (the deployed shape) at 1,000 parties, and an answer on its
own MQTT message costs the workers several times the CPU of a bundled one (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import statistics
from collections.abc import Callable

from broker_ceiling import Ceiling, measure_ceiling, party_message_bytes
from session_timing import SessionTiming, timed_session

from mpdp.broker.mosquitto import run_mosquitto

#: Messages of one ceiling sample: long enough (2 s at 60,000 msg/s) that a publisher's start and the machine's
#: moments do not make the figure (:func:`broker_ceiling.measure_ceiling` runs publishers of
#: :data:`broker_ceiling.PUBLISHER_LINES` lines one after the other).
CEILING_MESSAGES = 120_000


async def ceilings(messages: int, repetitions: int) -> dict[int, Ceiling]:
    """One sample of the QoS 1 and QoS 0 ceilings (``mosquitto_pub -l``) for answers of ``repetitions`` symbols."""
    found = {}
    async with run_mosquitto(anonymous=True) as endpoint:  # the C clients connect without a login
        for qos in (1, 0):
            found[qos] = await measure_ceiling(endpoint, qos, messages, party_message_bytes(repetitions))
    return found


def interleaved(runs: int, repetitions: int, session: Callable[[], SessionTiming]
                ) -> tuple[list[SessionTiming], dict[int, list[float]]]:
    """``runs`` runs of ``session``, a ceiling sample before each and after the last; the sessions' timings and
    each QoS's sampled rates (messages/s), in order."""
    timings: list[SessionTiming] = []
    rates: dict[int, list[float]] = {1: [], 0: []}
    for run in range(runs + 1):
        for qos, ceiling in asyncio.run(ceilings(CEILING_MESSAGES, repetitions)).items():
            rates[qos].append(ceiling.rate)
            print(f"ceiling sample {run + 1}, QoS {qos}: {ceiling.rate:.0f} msg/s ({ceiling.seconds:.2f} s)", flush=True)
        if run < runs:
            timings.append(session())
    return timings, rates


def main(parties: int, rounds: int, validators: list[int], kinds: list[str], batch: int, connections: str,
         runs: int) -> None:
    print(f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores (shared machine); "
          f"{parties} parties x {rounds} rounds, connections {connections}; ceilings: mosquitto_pub -l, "
          f"{CEILING_MESSAGES:,} messages a sample, one before each of {runs} run(s) and one after (median)")
    for kind, repetitions in (("unbatched", 1), ("batched", batch)):
        for count in validators if kind in kinds else ():
            timings, rates = interleaved(runs, repetitions, functools.partial(
                timed_session, parties, rounds, repetitions, validators=count, connections=connections))
            q1, q0 = statistics.median(rates[1]), statistics.median(rates[0])
            for qos, rate in ((1, q1), (0, q0)):
                print(f"{kind} ceiling QoS {qos}: samples " + " ".join(f"{r:.0f}" for r in rates[qos])
                      + f" msg/s; median {rate:.0f}, spread {min(rates[qos]):.0f}-{max(rates[qos]):.0f}")
            print(f"{'kind':<10} {'run':>3} {'reps':>5} {'valid.':>6} {'mpdp msg/s':>10} {'bits/s':>10} "
                  f"{'/QoS1':>6} {'/QoS0':>6} {'peak MB':>8} {'CPU us/msg: obs.':>16} {'workers':>7} {'broker':>6} "
                  f"{'load':>5} {'run msg/s':>9} {'/QoS1':>6}")
            for run, timing in enumerate(timings, 1):
                print(f"{kind:<10} {run:>3} {repetitions:>5} {count:>6} {timing.messages_per_s:>10.0f} "
                      f"{timing.bits_per_s:>10.3g} {timing.messages_per_s / q1:>6.3f} {timing.messages_per_s / q0:>6.3f} "
                      f"{timing.peak_bytes / 2**20:>8.0f} {timing.cpu_us_per_message('observer'):>16.0f} "
                      f"{timing.cpu_us_per_message('workers'):>7.0f} {timing.cpu_us_per_message('broker'):>6.0f} "
                      f"{os.getloadavg()[0]:>5.1f} {timing.run_messages_per_s:>9.0f} "
                      f"{timing.run_messages_per_s / q1:>6.3f}", flush=True)
            median = statistics.median(t.messages_per_s for t in timings)
            print(f"{kind} median of {runs} run(s): {median:.0f} msg/s = {median / q1:.3f} of QoS 1 "
                  f"(runs {min(t.messages_per_s for t in timings) / q1:.3f}-{max(t.messages_per_s for t in timings) / q1:.3f})",
                  flush=True)
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
    parser.add_argument("--runs", type=int, default=3, help="mpdp runs of each kind, between ceiling samples (default: 3)")
    args = parser.parse_args()
    if args.runs < 1:
        parser.error(f"--runs must be >= 1, got {args.runs}")
    main(args.parties, args.rounds, [int(n) for n in args.validators.split(",")], args.kinds.split(","),
         args.batch, args.connections, args.runs)
