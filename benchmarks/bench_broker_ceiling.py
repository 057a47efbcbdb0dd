"""The raw broker ceiling: messages/s of mosquitto's own C clients, QoS 1 and QoS 0, one publisher to one
subscriber, on a mosquitto started on a free loopback port with mpdp's configuration. The payload is as
long as one signed party message of 1 repetition (unbatched) and of 1,000 repetitions (batched).

Run: python benchmarks/bench_broker_ceiling.py [MESSAGES]   (default 50,000)
"""

from __future__ import annotations

import asyncio
import os
import sys

from broker_ceiling import measure_ceiling, party_message_bytes

from mpdp.broker.mosquitto import run_mosquitto


async def main(messages: int) -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"{'qos':>3} {'payload B':>9} {'messages':>8} {'seconds':>8} {'msg/s':>8}")
    async with run_mosquitto(anonymous=True) as endpoint:  # the C clients connect without a login
        for repetitions in (1, 1000):
            size = party_message_bytes(repetitions)
            for qos in (1, 0):
                ceiling = await measure_ceiling(endpoint, qos, messages, size)
                print(f"{qos:>3} {size:>9} {messages:>8} {ceiling.seconds:>8.2f} {ceiling.rate:>8.0f}")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 50_000))
