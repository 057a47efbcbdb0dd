"""The raw broker ceiling: mosquitto's own C clients (``mosquitto_pub -l`` / ``mosquitto_sub``) on the broker
mpdp starts for a run (``broker/mosquitto.conf`` via :func:`mpdp.broker.mosquitto.run_mosquitto`).

Shared by the throughput benchmarks so that every mpdp figure is printed as a ratio of a ceiling measured
in the same run, on the same machine and load. The clients come from the Debian package
``mosquitto-clients``.

The publisher is ``mosquitto_pub -l`` reading one message per line from a file (issue 23 item 2; a long
sample: several, one after the other, :data:`PUBLISHER_LINES`): it sends as fast as the broker acknowledges (QoS 1: its window of in-flight messages), like mpdp's parties do.
``mosquitto_pub --repeat`` publishes one message per network-loop iteration and read 3.8-5.2x lower under
load, which made the ratios against it look 4-5x better than they are. The lines are as long as one party
answer and the topic is a party's answer topic (``mpdp/<session>/party/<id>``, the subscriber on
``mpdp/<session>/party/+``, as the observer).
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.messages import PartyMessage
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics

__all__ = ["Ceiling", "measure_ceiling", "party_message_bytes"]

#: The session id of the ceiling's topics: as long as the benchmarks' own (``bench-`` + 8 hex digits).
_SESSION = "bench-ce111111"


@dataclass(frozen=True)
class Ceiling:
    """Messages/s that mosquitto's C clients move through one broker, one publisher to one subscriber."""

    qos: int
    messages: int
    payload_bytes: int
    seconds: float

    @property
    def rate(self) -> float:
        """Messages per second."""
        return self.messages / self.seconds


def party_message_bytes(repetitions: int) -> int:
    """Length (bytes) of one signed party message of ``repetitions`` symbols as mpdp sends it today."""
    import numpy as np

    private, _ = generate_key_pair()
    message = PartyMessage.signed(private, session="bench-00000000", round=0, party=4999,
                                  repetitions=repetitions,
                                  symbols=np.zeros(repetitions, dtype=np.uint8))
    return len(message.to_wire())


def _clients() -> tuple[str, str]:
    pub, sub = shutil.which("mosquitto_pub"), shutil.which("mosquitto_sub")
    if pub is None or sub is None:
        raise SystemExit("mosquitto_pub/mosquitto_sub not found: apt-get install mosquitto-clients")
    return pub, sub


#: Lines one ``mosquitto_pub -l`` publishes at most: given 80,000-90,000 lines (9-10 MB on its stdin) it exited
#: (status 0) after sending a fraction of them (14,000-24,000 reached the subscriber), 60,000 went through. A longer
#: sample runs publishers one after the other (each one's connection costs ~1 ms of a 2-3 s sample).
PUBLISHER_LINES = 40_000


def _lines(first: int, messages: int, payload_bytes: int) -> bytes:
    """``messages`` lines of ``payload_bytes`` printable bytes each (``-l`` strips the newline), no two alike,
    numbered from ``first``."""
    lines = bytearray()
    for i in range(first, first + messages):
        stamp = f"{i:x}".encode()
        lines += stamp + b"x" * max(0, payload_bytes - len(stamp)) + b"\n"
    return bytes(lines)


async def measure_ceiling(endpoint: BrokerEndpoint, qos: int, messages: int, payload_bytes: int) -> Ceiling:
    """Time ``messages`` publications of ``payload_bytes`` each from ``mosquitto_pub -l`` (one message per line
    of a file on its stdin; :data:`PUBLISHER_LINES` at most per publisher, the publishers one after the other)
    to one ``mosquitto_sub`` (both at ``qos``), on a party's answer topic, from the first publisher's start to
    the subscriber's last message.

    Raises:
        RuntimeError: a client failed or the subscriber did not get every message within 120 s.
    """
    pub, sub = _clients()
    address = ["-h", endpoint.host, "-p", str(endpoint.port)]
    topics = Topics(_SESSION)
    receiver = await asyncio.create_subprocess_exec(
        sub, *address, "-t", topics.all_parties, "-q", str(qos), "-C", str(messages), "-W", "120",
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with tempfile.TemporaryDirectory(prefix="mpdp-ceiling-") as folder:
        sources = []
        for first in range(0, messages, PUBLISHER_LINES):
            sources.append(Path(folder, f"messages-{first}"))
            sources[-1].write_bytes(_lines(first, min(PUBLISHER_LINES, messages - first), payload_bytes))
        await asyncio.sleep(0.5)  # subscribed before the first publication
        start = time.perf_counter()
        for source in sources:
            with source.open("rb") as stdin:
                sender = await asyncio.create_subprocess_exec(
                    pub, *address, "-t", topics.party(499), "-q", str(qos), "-l",
                    stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
                _, pub_err = await sender.communicate()
            if sender.returncode:
                break
        _, sub_err = await receiver.communicate()
        seconds = time.perf_counter() - start
    if sender.returncode or receiver.returncode:
        raise RuntimeError(f"mosquitto clients failed: pub {sender.returncode} {pub_err.decode()!r}, "
                           f"sub {receiver.returncode} {sub_err.decode()!r}")
    return Ceiling(qos, messages, payload_bytes, seconds)
