"""A mosquitto child process on a free loopback port, as an async context manager.

The configuration is ``broker/mosquitto.conf`` (loopback only, bounded queues) with its
``listener`` line replaced by ``listener PORT 127.0.0.1``, ``user`` set to ours, a login of its own
(below), and ``log_type information`` added (its start-up lines tell whether the child holds the port or lost it to another
process, which is then retried on a new port: :func:`run_mosquitto`). The child gets its own session
(a Ctrl-C at the terminal reaches us, and we stop it) and, on Linux, dies with its parent
(``PR_SET_PDEATHSIG``; kept because the child never changes user), so no broker outlives the run. Its
temporary folder records our PID: one left by a run killed with SIGKILL is removed when the next child
broker starts (:func:`mpdp.broker.scratch.owned_temporary_directory`).

Login: each child gets a fresh random user name and password (:func:`mpdp.broker.passwords.new_password`;
a ``mosquitto_passwd``-format file, mode 0600, in the child's temporary directory) and
``allow_anonymous false``: another local user's process cannot read or inject the run's messages. The
credentials travel only inside the yielded :class:`BrokerEndpoint` (picklable: the run's worker processes
get it; its repr and :attr:`BrokerEndpoint.url` leave the password out). ``anonymous=True`` keeps the
shipped anonymous listener (tests whose processes are given a bare ``mqtt://`` URL).
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import pwd
import re
import secrets
import signal
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from mpdp.broker.connectivity import wait_until_accepting
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.passwords import new_password, password_line
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.reconnect_window import DEFAULT_RECONNECT_WINDOW
from mpdp.broker.scratch import owned_temporary_directory
from mpdp.broker.settings import find_mosquitto
from mpdp.protocols.errors import TransportError

__all__ = ["CONFIG_TEMPLATE", "PORT_ATTEMPTS", "SCRATCH_PREFIX", "persistence_config", "render_config",
           "run_configured_mosquitto", "run_mosquitto"]

#: The configuration shipped in broker/.
CONFIG_TEMPLATE = Path(__file__).with_name("mosquitto.conf")
_PR_SET_PDEATHSIG = 1
#: The name prefix of the child's temporary folder (configuration, log) under the system's temporary
#: directory; a killed run's folder is removed by the next start (:mod:`mpdp.broker.scratch`).
SCRATCH_PREFIX = "mpdp-mosquitto-"


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


def persistence_config(directory: Path) -> str:
    """mosquitto lines that keep the persistent sessions and their queued QoS 1 messages in ``directory``
    (which must exist), saved on every change: a broker restarted with the same lines after a SIGKILL
    brings back what it had acknowledged, and its clients' sessions."""
    return f"persistence true\npersistence_location {directory}/\nautosave_on_changes true\nautosave_interval 1\n"


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


@contextlib.asynccontextmanager
async def run_mosquitto(
    binary: Path | None = None, *, timeout: float = 10.0, start_timeout: float = 10.0, port: int | None = None,
    extra_config: str = "", anonymous: bool = False, reconnect_window: float = DEFAULT_RECONNECT_WINDOW,
    persistence: Path | None = None, watch: bool = False,
) -> AsyncIterator[BrokerEndpoint]:
    """Start mosquitto on a loopback port; yield its endpoint; stop it on exit.

    A free port is picked, then mosquitto binds it: another process may take it in between. The child
    logs at ``information`` level, so its log says which happened: ``... running`` once it holds every
    listener, ``Address already in use`` (and exit) when it lost the race; then a new port is tried, up
    to :data:`PORT_ATTEMPTS` times. Only after "running" are MQTT connections probed, so the endpoint
    yielded is this child's, never another broker's that took the port.

    Args:
        binary: the mosquitto executable; found on PATH or /usr/sbin when None.
        port: the port to listen on; a free one when None (a given port lets a test restart a
            broker where its clients reconnect; it is not retried).
        timeout, reconnect_window: the clients' timeout and reconnect window (seconds) recorded in the endpoint.
        start_timeout: seconds to wait until the broker accepts MQTT connections.
        extra_config: lines appended to the configuration, e.g. a bridge to another broker
            (``connection NAME`` / ``address HOST:PORT`` / ``topic mpdp/# both 1``; docs/deploy.md).
        anonymous: accept clients without a login (default: a fresh random login, module docstring).
        persistence: a folder (created if missing) where the broker keeps its sessions and queued messages,
            saved on every change (:func:`persistence_config`); a broker started again on the same port with
            the same folder resumes them (its clients log in again only with ``anonymous=True``: each start
            draws a fresh login). None: nothing on disk (the configuration's ``persistence false``).
        watch: the child exiting while the body runs fails the body at once (it is cancelled, and a
            TransportError naming the broker's pid, port and exit code is raised in its place): for a run whose
            own broker is nobody else's to restart (``mpdp simulate``), instead of clients waiting out their
            reconnect window and the run its ready timeout. False: the clients reconnect (a test restarts it).

    Raises:
        TransportError: no binary, the child exited early (its log is quoted; for a given port in use,
            or :data:`PORT_ATTEMPTS` lost races), or it never accepted a connection within ``start_timeout``;
            with ``watch``, it exited while the body ran.
    """
    exe = binary or find_mosquitto()
    if exe is None:
        raise TransportError("mosquitto binary not found on PATH or in /usr/sbin; use --broker embedded")
    if persistence is not None:
        persistence.mkdir(parents=True, exist_ok=True)
        extra_config = persistence_config(persistence) + extra_config
    with owned_temporary_directory(SCRATCH_PREFIX) as tmp:
        username, password = (None, None) if anonymous else (f"mpdp-run-{secrets.token_hex(4)}", new_password())
        login = "" if username is None or password is None else _login(Path(tmp), username, password)
        deadline = time.monotonic() + start_timeout
        for attempt in range(1, PORT_ATTEMPTS + 1):
            chosen = port or free_loopback_port()
            log_path = Path(tmp, f"mosquitto-{attempt}.log")
            proc = await _spawn(exe, Path(tmp, "mosquitto.conf"), chosen, log_path, login + extra_config)
            endpoint = BrokerEndpoint("mosquitto", LOOPBACK, chosen, timeout=timeout, username=username,
                                      password=password, reconnect_window=reconnect_window)
            try:
                if await _bound(proc, log_path, deadline):
                    await _accepting(exe, proc, endpoint, log_path, deadline)
                    break
                if port is not None or attempt == PORT_ATTEMPTS or _IN_USE not in _log(log_path):
                    what = ("exited before it listened" if proc.returncode is not None
                            else f"no 'running' line in its log within {start_timeout:g} s")
                    raise _start_error(exe, proc, endpoint, log_path, what)
            except BaseException:
                await _stop(proc)
                raise
        try:
            if watch:
                async with _fatal_exit(proc, endpoint):
                    yield endpoint
            else:
                yield endpoint
        finally:
            await _stop(proc)


@contextlib.asynccontextmanager
async def _fatal_exit(proc: asyncio.subprocess.Process, endpoint: BrokerEndpoint) -> AsyncIterator[None]:
    """Cancel the body's task when ``proc`` (the broker) exits, and raise a TransportError naming it instead
    of the cancellation (another cancellation of the task propagates as it is)."""
    task = asyncio.current_task()
    assert task is not None
    exited = asyncio.Event()

    async def watch() -> None:
        await proc.wait()
        exited.set()
        task.cancel()

    watcher = asyncio.create_task(watch(), name=f"mosquitto-{proc.pid}-watch")
    try:
        yield
    except asyncio.CancelledError:
        if exited.is_set() and task.uncancel() == 0:
            code = proc.returncode or 0
            how = f"was killed by {signal.Signals(-code).name}" if code < 0 else f"exited with code {code}"
            raise TransportError(f"the MQTT broker (mosquitto pid {proc.pid}, port {endpoint.port}) {how} while the "
                                 "run needed it") from None
        raise
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher


@contextlib.asynccontextmanager
async def run_configured_mosquitto(config: Path, probe: BrokerEndpoint, *, binary: Path | None = None,
                                   start_timeout: float = 10.0) -> AsyncIterator[None]:
    """Start mosquitto with the configuration file ``config`` as it is (e.g. one ``mpdp broker config``
    wrote); return once ``probe`` (an endpoint of one of its listeners, with a login where one is needed)
    connects; stop it on exit.

    Raises:
        TransportError: no binary, the child exited early (its log is quoted), or ``probe`` did not
            connect within ``start_timeout``.
    """
    exe = binary or find_mosquitto()
    if exe is None:
        raise TransportError("mosquitto binary not found on PATH or in /usr/sbin; use --broker embedded")
    with owned_temporary_directory(f"{SCRATCH_PREFIX}log-") as tmp:
        log_path = Path(tmp, "mosquitto.log")
        proc = await _exec(exe, config, log_path)
        try:
            await _accepting(exe, proc, probe, log_path, time.monotonic() + start_timeout)
            yield
        finally:
            await _stop(proc)


#: Ports tried when another process takes the free port before mosquitto binds it.
PORT_ATTEMPTS = 8
_IN_USE = "Address already in use"
_RUNNING = re.compile(r"mosquitto version \S+ running")


def _login(directory: Path, username: str, password: str) -> str:
    """The configuration lines that admit only ``username`` (its password file written to ``directory``, 0600)."""
    path = directory / "passwords"
    path.touch(mode=0o600)
    path.write_text(password_line(username, password) + "\n")
    return f"allow_anonymous false\npassword_file {path}\n"


async def _spawn(exe: Path, config: Path, port: int, log_path: Path, extra: str) -> asyncio.subprocess.Process:
    # "information" adds the start-up lines (listeners opened, "running"), not one per client. "user":
    # started by root, mosquitto would switch to user "mosquitto", and a change of credentials clears
    # PR_SET_PDEATHSIG (the child would outlive a killed parent); it keeps the parent's user instead.
    user = pwd.getpwuid(os.geteuid()).pw_name
    text = render_config(CONFIG_TEMPLATE.read_text(), port) + f"log_type information\nuser {user}\n"
    config.write_text(text + extra.strip() + "\n" if extra.strip() else text)
    return await _exec(exe, config, log_path)


async def _exec(exe: Path, config: Path, log_path: Path) -> asyncio.subprocess.Process:
    """mosquitto -c ``config`` in its own session, dying with its parent, logging to ``log_path``."""
    with log_path.open("wb") as log:
        return await asyncio.create_subprocess_exec(
            str(exe), "-c", str(config), stdin=asyncio.subprocess.DEVNULL, stdout=log,
            stderr=log, start_new_session=True, preexec_fn=_die_with_parent,
        )


def _log(log_path: Path) -> str:
    return log_path.read_text(errors="replace")


async def _bound(proc: asyncio.subprocess.Process, log_path: Path, deadline: float) -> bool:
    """True once the child logged that it runs (it holds its listener); False once it exited."""
    while not _RUNNING.search(_log(log_path)):
        if proc.returncode is not None or time.monotonic() > deadline:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
                    await proc.wait()
            return False
        await asyncio.sleep(0.02)
    return True


async def _accepting(exe: Path, proc: asyncio.subprocess.Process, endpoint: BrokerEndpoint, log_path: Path,
                     deadline: float) -> None:
    try:
        await wait_until_accepting(endpoint, max(0.5, deadline - time.monotonic()),
                                   alive=lambda: proc.returncode is None)
    except TransportError as exc:
        raise _start_error(exe, proc, endpoint, log_path, str(exc)) from exc


def _start_error(exe: Path, proc: asyncio.subprocess.Process, endpoint: BrokerEndpoint, log_path: Path,
                 what: str) -> TransportError:
    lines = _log(log_path).strip().splitlines()
    tail = [line for line in lines if "Error" in line][-3:] or lines[-3:]
    return TransportError(
        f"mosquitto ({exe}) did not start on {endpoint.url}"
        + (f" (exit code {proc.returncode})" if proc.returncode is not None else "")
        + ": " + (" | ".join(tail) if tail else what)
    )


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
