"""Shared fixtures of the transport tests: a real mosquitto on a free loopback port (configured from
broker/mosquitto.conf), and a brute-force majority decision to check the observer against.

Without the mosquitto binary the broker tests skip locally but FAIL under CI (``CI`` set, as every CI
service sets it, and not ``0``/``false``/``no``), so a CI image that lacks mosquitto cannot pass green
with its integration tests silently skipped."""

from __future__ import annotations

import itertools
import os
from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest
import pytest_asyncio

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.mosquitto import run_mosquitto
from mpdp.broker.settings import find_mosquitto
from mpdp.protocols.mechanisms import RandomizedResponse


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
    async with run_mosquitto(timeout=5.0) as endpoint:
        yield endpoint


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
