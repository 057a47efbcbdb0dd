"""A mosquitto child process on a free loopback port, as an async context manager.

The configuration is ``broker/mosquitto.conf`` (the same file docker-compose.yml mounts) with its
``listener`` line replaced by ``listener PORT 127.0.0.1``. The child gets its own session (a Ctrl-C
at the terminal reaches us, and we stop it) and, on Linux, dies with its parent
(``PR_SET_PDEATHSIG``), so no broker outlives the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import signal
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

from mpdp.broker.connectivity import wait_until_accepting
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.settings import find_mosquitto
from mpdp.protocols.errors import TransportError

__all__ = ["CONFIG_TEMPLATE", "render_config", "run_configured_mosquitto", "run_mosquitto"]

#: The configuration shipped in broker/.
CONFIG_TEMPLATE = Path(__file__).with_name("mosquitto.conf")
_PR_SET_PDEATHSIG = 1


def render_config(template: str, port: int, host: str = LOOPBACK) -> str:
    """``template`` with every ``listener`` line replaced by one listener on ``host:port``.

    Raises:
        TransportError: the template has no ``listener`` line (it would listen on 1883).
    """
    lines = template.splitlines()
    listeners = [i for i, line in enumerate(lines) if line.split()[:1] == ["listener"]]
    if not listeners:
        raise TransportError(f"{CONFIG_TEMPLATE.name}: no 'listener' line to put the port on")
    lines = [line for i, line in enumerate(lines) if i not in listeners[1:]]
    lines[listeners[0]] = f"listener {port} {host}"
    return "\n".join(lines) + "\n"


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@contextlib.asynccontextmanager
async def run_mosquitto(
    binary: Path | None = None, *, timeout: float = 10.0, start_timeout: float = 10.0, port: int | None = None
) -> AsyncIterator[BrokerEndpoint]:
    """Start mosquitto on a loopback port; yield its endpoint; stop it on exit.

    Args:
        binary: the mosquitto executable; found on PATH or /usr/sbin when None.
        port: the port to listen on; a free one when None (a given port lets a test restart a
            broker where its clients reconnect).
        timeout: the clients' timeout (seconds) recorded in the endpoint.
        start_timeout: seconds to wait until the broker accepts MQTT connections.

    Raises:
        TransportError: no binary, the child exited early (its log is quoted), or it never
            accepted a connection within ``start_timeout``.
    """
    exe = binary or find_mosquitto()
    if exe is None:
        raise TransportError("mosquitto binary not found on PATH or in /usr/sbin; use --broker embedded")
    with tempfile.TemporaryDirectory(prefix="mpdp-mosquitto-") as tmp:
        port = port or free_loopback_port()
        config = Path(tmp, "mosquitto.conf")
        config.write_text(render_config(CONFIG_TEMPLATE.read_text(), port))
        endpoint = BrokerEndpoint("mosquitto", LOOPBACK, port, timeout=timeout)
        async with run_configured_mosquitto(config, endpoint, binary=exe, start_timeout=start_timeout):
            yield endpoint


@contextlib.asynccontextmanager
async def run_configured_mosquitto(config: Path, probe: BrokerEndpoint, *, binary: Path | None = None,
                                   start_timeout: float = 10.0) -> AsyncIterator[None]:
    """Start mosquitto with the configuration file ``config`` as it is; return once ``probe`` (an
    endpoint of one of its listeners, with a login where one is needed) connects; stop it on exit.

    Raises:
        TransportError: as :func:`run_mosquitto`.
    """
    exe = binary or find_mosquitto()
    if exe is None:
        raise TransportError("mosquitto binary not found on PATH or in /usr/sbin; use --broker embedded")
    with tempfile.TemporaryDirectory(prefix="mpdp-mosquitto-log-") as tmp:
        log_path = Path(tmp, "mosquitto.log")
        with log_path.open("wb") as log:
            proc = await asyncio.create_subprocess_exec(
                str(exe), "-c", str(config), stdin=asyncio.subprocess.DEVNULL, stdout=log,
                stderr=log, start_new_session=True, preexec_fn=_die_with_parent,
            )
        try:
            try:
                await wait_until_accepting(probe, start_timeout, alive=lambda: proc.returncode is None)
            except TransportError as exc:
                tail = log_path.read_text(errors="replace").strip().splitlines()[-3:]
                raise TransportError(
                    f"mosquitto ({exe}) did not start on {probe.url}"
                    + (f" (exit code {proc.returncode})" if proc.returncode is not None else "")
                    + (": " + " | ".join(tail) if tail else f": {exc}")
                ) from exc
            yield
        finally:
            await _stop(proc)


async def _stop(proc: asyncio.subprocess.Process) -> None:
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            async with asyncio.timeout(5):
                await proc.wait()
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
