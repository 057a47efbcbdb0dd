"""parties.session.runner.RunConfig: the checks of a simulation's configuration (budget, delta slack,
the parties' broker)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import Budget
from mpdp.broker.settings import BrokerSettings
from mpdp.parties.session.runner import RunConfig
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

MECHANISMS = (RandomizedResponse(0.5), RandomizedResponse(1.0, 1e-7), RandomizedResponse(math.inf))


def test_run_config_checks_budget_and_delta_slack(tmp_path: Path) -> None:
    fields: dict[str, object] = dict(
        session="s", round_names=("a",), bits=np.ones((3, 1), np.int8), mechanisms=MECHANISMS, repetitions=1,
        seed=1, function=parse_function("majority"), measure=accuracy_measure("zero-one", 2),
        broker=BrokerSettings.from_url("embedded", environ={}), workers=1, store_path=tmp_path / "t.sqlite",
    )
    assert RunConfig(**fields).delta_slack == 1e-6 and RunConfig(**fields).budget is None  # type: ignore[arg-type]
    edge = BrokerSettings.from_url("mqtt://edge:1884", environ={})
    assert RunConfig(**fields, party_broker=edge).party_broker == edge  # type: ignore[arg-type]
    for change in (dict(delta_slack=-0.1), dict(delta_slack=1.0), dict(budget=(1.0, 1e-5)),
                   dict(budget=Budget(1.0, 0.0)), dict(party_broker=BrokerSettings.from_url("mosquitto", environ={})),
                   dict(party_broker="mqtt://edge:1884")):
        with pytest.raises(ParameterError):
            RunConfig(**{**fields, **change})  # type: ignore[arg-type]
