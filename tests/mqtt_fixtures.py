"""Shared fixtures of the transport tests: a real mosquitto on a free loopback port (configured from
broker/mosquitto.conf), and a stand-in decision rule until protocols.symmetric is merged."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import numpy as np
import pytest
import pytest_asyncio

from broker.endpoint import BrokerEndpoint
from broker.mosquitto import run_mosquitto
from broker.settings import find_mosquitto
from protocols.mechanisms import RandomizedResponse


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def mosquitto() -> AsyncIterator[BrokerEndpoint]:
    """A mosquitto child for the whole test session."""
    if find_mosquitto() is None:
        pytest.skip("mosquitto binary not installed")
    async with run_mosquitto(timeout=5.0) as endpoint:
        yield endpoint


def pointing_to_one(mechanisms: Sequence[RandomizedResponse], symbols: np.ndarray) -> np.ndarray:
    """bool (repetitions, n): the symbol points to bit 1 (symbol 1 of a pure party, 2 or 3 of a
    four-output party)."""
    four = np.array([m.four_output for m in mechanisms], dtype=bool)
    return np.where(four, symbols >= 2, symbols == 1)


class MajorityOfReports:
    """Stand-in for protocols.symmetric.observer_average_rule in tests: the majority of the reported
    bits (optimal for equal epsilons with majority and zero-one accuracy, 002 §4)."""

    def __init__(self, mechanisms: Sequence[RandomizedResponse], function: object, measure: np.ndarray) -> None:
        self.mechanisms = tuple(mechanisms)

    def decide(self, symbols: np.ndarray) -> np.ndarray:
        ones = pointing_to_one(self.mechanisms, symbols).sum(axis=1)
        return (2 * ones > symbols.shape[1]).astype(np.int64)
