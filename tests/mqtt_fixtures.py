"""Shared fixtures of the transport tests: a real mosquitto on a free loopback port (configured from
broker/mosquitto.conf), and a brute-force majority decision to check the observer against.

Without the mosquitto binary the broker tests skip locally but FAIL under CI (``CI`` set, as every CI
service sets it, and not ``0``/``false``/``no``), so a CI image that lacks mosquitto cannot pass green
with its integration tests silently skipped."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import getpass
import itertools
import os
import shlex
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
import pytest_asyncio

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.launch import external_endpoint
from mpdp.broker.lockdown import Limits, write_broker_config
from mpdp.broker.mosquitto import run_configured_mosquitto, run_mosquitto
from mpdp.broker.ports import LOOPBACK, free_loopback_port
from mpdp.broker.settings import BrokerSettings, find_mosquitto
from mpdp.broker.transport import Delivery, Transport
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from tests.calibration import scaled


def on_ci() -> bool:
    """True when the ``CI`` environment variable is set to anything but empty, ``0``, ``false`` or ``no``."""
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def require(present: bool, message: str) -> None:
    """Skip the calling test when ``present`` is false (``message`` says what is missing and how to get
    it), or fail it under CI (:func:`on_ci`): CI installs what the broker tests need."""
    if not present:
        if on_ci():
            pytest.fail(f"{message}; under CI the broker tests must run", pytrace=False)
        pytest.skip(message)


def require_mosquitto() -> None:
    """Skip the calling test when the mosquitto binary is missing, or fail it under CI (:func:`on_ci`)."""
    require(find_mosquitto() is not None,
            "mosquitto binary not installed (apt-get install mosquitto: on PATH or in /usr/sbin)")


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def mosquitto() -> AsyncIterator[BrokerEndpoint]:
    """A mosquitto child for the whole test session (skipped without the binary, failed under CI)."""
    require_mosquitto()
    # its tests pass bare mqtt:// URLs
    async with run_mosquitto(timeout=scaled(5.0), start_timeout=scaled(10.0), anonymous=True) as endpoint:
        yield endpoint


def child_mosquitto(port: int) -> int:
    """The pid of this process's mosquitto child listening on ``port`` (by /proc: our children only, and
    the one whose configuration names the port; never by name)."""
    children: list[str] = []
    for task in os.listdir(f"/proc/{os.getpid()}/task"):
        with contextlib.suppress(OSError):
            children += Path(f"/proc/{os.getpid()}/task/{task}/children").read_text().split()
    found = []
    for pid in children:
        with contextlib.suppress(OSError):  # a child that exited meanwhile
            args = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if Path(args[0].decode()).name != "mosquitto" or b"-c" not in args:  # e.g. a `python -c` helper
                continue
            if f"listener {port} " in Path(args[args.index(b"-c") + 1].decode()).read_text():
                found.append(int(pid))
    assert len(found) == 1, found
    return found[0]


def read_env_file(path: Path) -> dict[str, str]:
    """The ``KEY=value`` lines (shell-quoted values) of a ``broker.env`` as a dict."""
    return {key: value for line in path.read_text().splitlines() if line.strip()
            for key, _, value in [shlex.split(line)[0].partition("=")]}


@dataclass(frozen=True)
class LockedBroker:
    """A mosquitto running the configuration that ``mpdp broker config`` wrote into ``directory``."""

    directory: Path

    def env(self, identity: str) -> dict[str, str]:
        """``identity``'s broker.env (URL, login, TLS files)."""
        return read_env_file(self.directory / "clients" / identity / "broker.env")

    def endpoint(self, identity: str, timeout: float | None = None) -> BrokerEndpoint:
        """How ``identity`` connects (its own listener, login and certificate; ``timeout``: 5 s, scaled)."""
        endpoint = external_endpoint(BrokerSettings.from_url(None, self.env(identity)))
        assert endpoint is not None
        return dataclasses.replace(endpoint, timeout=scaled(5.0) if timeout is None else timeout, reconnect_window=1.0)


def locked_ports() -> tuple[int, int]:
    """Two distinct free loopback ports: the party hosts' and the observer's listener."""
    party_port = free_loopback_port()
    return party_port, next(p for p in iter(free_loopback_port, None) if p != party_port)


def broker_user() -> str | None:
    """The account a generated configuration names for mosquitto: the current one when that is root
    (mosquitto would switch to ``mosquitto``, who cannot read root's 0600 files), else None."""
    return getpass.getuser() if os.geteuid() == 0 else None


@contextlib.asynccontextmanager
async def serve_locked(directory: Path, probe: str) -> AsyncIterator[LockedBroker]:
    """Run mosquitto with ``directory/broker/mosquitto.conf`` until exit; ready once identity ``probe`` connects."""
    require_mosquitto()
    broker = LockedBroker(directory)
    async with run_configured_mosquitto(directory / "broker" / "mosquitto.conf", broker.endpoint(probe),
                                        start_timeout=scaled(10.0)):
        yield broker


@contextlib.asynccontextmanager
async def locked_mosquitto(directory: Path, session: str, hosts: Mapping[str, Sequence[int]], *,
                           party_decisions: bool = False, limits: Limits = Limits(),
                           servers: int = 0, persistence: Path | None = None,
                           validators: int = 0) -> AsyncIterator[LockedBroker]:
    """A real mosquitto from a fresh :func:`mpdp.broker.lockdown.write_broker_config` on two free loopback
    ports (``servers``: logins for that many mpc compute servers; ``persistence``: an existing directory where
    it keeps its sessions; ``validators``: logins for that many observer validators; skipped without the
    binary, failed under CI)."""
    require_mosquitto()
    party_port, observer_port = locked_ports()
    write_broker_config(directory, session, hosts, party_port=party_port, observer_port=observer_port,
                        bind=LOOPBACK, party_decisions=party_decisions, user=broker_user(), limits=limits,
                        servers=servers, persistence=None if persistence is None else str(persistence),
                        validators=validators)
    async with serve_locked(directory, next(iter(hosts))) as broker:
        yield broker


def brute_force_majority(mechanisms: Sequence[RandomizedResponse], symbols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The optimal zero-one decision for majority by enumerating all 2^n inputs (n <= 14).

    P(f = y | tau) is proportional to sum over x with f(x) = y of prod_i M_i[x_i, tau_i] (uniform
    prior, 002 eq. 2). Returns (decisions int64 (repetitions,), clear: bool mask of the repetitions
    whose two scores differ by more than 1e-9 relative, where any tie-break is moot)."""
    n = len(mechanisms)
    inputs = np.array(list(itertools.product([0, 1], repeat=n)), dtype=np.intp).reshape(2**n, n)
    likelihood = np.ones((2**n, symbols.shape[0]))
    for i, mechanism in enumerate(mechanisms):
        likelihood *= mechanism.channel[inputs[:, i][:, None], symbols[:, i][None, :].astype(np.intp)]
    passed = 2 * inputs.sum(axis=1) > n
    one, zero = likelihood[passed].sum(axis=0), likelihood[~passed].sum(axis=0)
    return (one > zero).astype(np.int64), np.abs(one - zero) > 1e-9 * (one + zero)


async def take(transport: Transport, n: int, timeout: float | None = None) -> list[Delivery]:
    """The next ``n`` deliveries of ``transport`` (TimeoutError after ``timeout`` seconds; default 5 s, scaled)."""
    out: list[Delivery] = []
    async with asyncio.timeout(scaled(5.0) if timeout is None else timeout):
        async for delivery in transport.deliveries():
            out.append(delivery)
            if len(out) == n:
                break
    return out
