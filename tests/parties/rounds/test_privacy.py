"""Per-party accounting from a transcript, and the privacy section of ``mpdp simulate``."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger, RoundCharge
from mpdp.analysis.privacy.composition import optimal_epsilon
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.parties.rounds.privacy import (
    check_privacy_options,
    ledgers_from_rounds,
    privacy_section,
    privacy_summary,
)
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

MECHANISMS = (RandomizedResponse(0.5), RandomizedResponse(1.0, 1e-7), RandomizedResponse(math.inf))


def _round(index: int, participants: list[int], exhausted: tuple[int, ...] = ()) -> RoundOutcome:
    ids = np.array(participants, np.int64)
    return RoundOutcome(name=f"r{index}", participants=ids, symbols=np.zeros((2, ids.size), np.uint8),
                        decisions=np.zeros(2, np.int64), messages_received=3, messages_rejected=0, index=index,
                        abstained=np.array(exhausted, np.int64), exhausted=np.array(exhausted, np.int64))


ROUNDS = [_round(2, [0], (1, 2)), _round(0, [0, 1, 2]), _round(1, [1])]  # out of order on purpose


def test_ledgers_are_one_charge_per_round_answered_in_round_order() -> None:
    ledgers = ledgers_from_rounds(ROUNDS, MECHANISMS, 2, 1e-6)
    assert ledgers[0] == PrivacyLedger(1e-6, (RoundCharge(0, 0.5, 0.0, 2), RoundCharge(2, 0.5, 0.0, 2)))
    assert ledgers[1].charges == (RoundCharge(0, 1.0, 1e-7, 2), RoundCharge(1, 1.0, 1e-7, 2))
    assert ledgers[2].rounds == (0,) and ledgers[2].spent().epsilon == math.inf
    assert ledgers_from_rounds([], MECHANISMS, 2, 0.0) == [PrivacyLedger(0.0)] * 3
    with pytest.raises(ParameterError, match="participants"):
        ledgers_from_rounds([_round(0, [3])], MECHANISMS, 2, 1e-6)


def test_a_double_release_is_charged_as_the_further_releases_it_is() -> None:
    doubled = dataclasses.replace(_round(0, [0, 1]), double_released=np.array([0, 0, 2], np.int64))
    ledgers = ledgers_from_rounds([doubled], MECHANISMS, 2, 1e-6)
    # party 0: its answer and two more (6 releases); party 2 abstained first, then released (2 releases)
    assert [ledger.charges for ledger in ledgers] == [
        (RoundCharge(0, 0.5, 0.0, 6),), (RoundCharge(0, 1.0, 1e-7, 2),), (RoundCharge(0, math.inf, 0.0, 2),)]
    section = privacy_section([ledger.spent() for ledger in ledgers], [doubled], None, 1e-6, 2)
    assert [p["rounds_double_released"] for p in section["parties"]] == [[0], [], [0]]  # type: ignore[attr-defined]
    assert section["summary"]["parties_double_released"] == [0, 2]  # type: ignore[index]
    assert "2 parties released twice (charged)" in privacy_summary(section)


def test_privacy_section_and_summary_line() -> None:
    spent = [ledger.spent() for ledger in ledgers_from_rounds(ROUNDS, MECHANISMS, 2, 1e-6)]
    section = privacy_section(spent, ROUNDS, Budget(5.0, 1e-5), 1e-6, 2)
    json.dumps(section, allow_nan=False)  # valid JSON: inf is the string "inf"
    first, second, third = section["parties"]  # type: ignore[misc]
    assert first == {"id": 0, "rounds_answered": 2, "releases": 4,
                     "epsilon_optimal": pytest.approx(optimal_epsilon(0.5, 4, 1e-6), rel=1e-12),
                     "epsilon_basic": 2.0, "delta": pytest.approx(1e-6), "delta_basic": 0.0, "method": "exact",
                     "rounds_refused": 0, "first_refused": None, "rounds_double_released": []}
    assert (second["rounds_refused"], second["first_refused"], second["releases"]) == (1, 2, 4)
    assert (third["epsilon_optimal"], third["epsilon_basic"], third["first_refused"]) == ("inf", "inf", 2)
    summary = section["summary"]
    assert summary["parties_out_of_budget"] == 2 and summary["median_rounds_answered_by_those"] == 1.5
    assert summary["epsilon_optimal"]["max"] == "inf"
    assert summary["epsilon_basic"]["median"] == pytest.approx(4.0)  # basic of party 1: 4 releases of 1.0
    line = privacy_summary(section)
    assert "2/3 parties ran out" in line and "basic composition: median 4, max inf" in line
    assert "2 per answered round" in line and "budget (5, 1e-05)" in line
    free = privacy_summary(privacy_section(spent[:2], ROUNDS[1:2], None, 1e-6, 2))
    assert free.endswith("no budget (nobody stopped).")


def test_check_privacy_options() -> None:
    assert check_privacy_options(None, 0) == 0.0 and check_privacy_options(Budget(1, 1e-6), 1e-6) == 1e-6
    with pytest.raises(ParameterError, match=r"--delta-slack.*\[0, 1\)"):
        check_privacy_options(None, 1.0, slack_name="--delta-slack")
    with pytest.raises(ParameterError, match=r"--budget.*1,1e-07.*>= --delta-slack 1e-06"):
        check_privacy_options(Budget(1, 1e-7), 1e-6, budget_name="--budget", slack_name="--delta-slack")
    with pytest.raises(ParameterError, match="budget"):
        check_privacy_options("1,1e-5", 1e-6)  # type: ignore[arg-type]
