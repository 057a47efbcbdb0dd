"""A receiver process for the burst test: a persistent MQTT client (mpdp's transport, as the observer's)
subscribed to every party topic of a session; prints ``ready``, then the number of distinct messages
once it has ``expected`` of them (exit 0), or what it has after ``timeout`` s of silence (exit 1). The silence
is counted from the first message on: the test stops this process (SIGSTOP) for as long as the burst takes to
publish, and a wait begun before the stop expires when it ends, before the queued messages are read (the
test failed with 0 of 10,000 messages once a loaded machine took more than ``timeout`` s to publish them).

Usage: python -m tests.integration.burst_receiver PORT SESSION EXPECTED TIMEOUT
"""

from __future__ import annotations

import asyncio
import sys

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.topics import Topics
from mpdp.broker.transport import next_delivery


async def _receive(port: int, session: str, expected: int, timeout: float) -> int:
    endpoint = BrokerEndpoint("external", "127.0.0.1", port)
    topics = Topics(session)
    seen: set[bytes] = set()
    async with endpoint.connect(f"{session}-receiver", persistent=True) as transport:
        await transport.subscribe(topics.all_parties)
        print("ready", flush=True)
        seen.add((await anext(transport.deliveries())).payload)  # however long the test keeps us stopped
        while len(seen) < expected:
            delivery = await next_delivery(transport, timeout)
            if delivery is None:
                break
            seen.add(delivery.payload)
    print(len(seen), flush=True)
    return 0 if len(seen) == expected else 1


if __name__ == "__main__":
    port, session, expected, timeout = sys.argv[1:]
    sys.exit(asyncio.run(_receive(int(port), session, int(expected), float(timeout))))
