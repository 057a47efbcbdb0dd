"""Per-party privacy accounting of a live run: ledgers from the transcript, the report of ``simulate``.

A party's ledger (:class:`mpdp.analysis.PrivacyLedger`) is a pure function of the rounds it answered and
the public parameters (its mechanism, the repetitions, delta_tilde): round r answered with symbols
charges ``repetitions`` releases of its (epsilon, delta) randomized response. So the runner can
recompute from the recorded transcript exactly the ledger each party kept in its own process
(:func:`ledgers_from_rounds`), and give it back to a party when a stored session is resumed.

Spent privacy is the composed guarantee at delta_tilde = ``delta_slack`` by the exact optimum
(000 Theorem 3.3) next to basic composition (000 Theorem 3.1).
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence

import numpy as np

from mpdp.analysis.privacy.accounting import Budget, PrivacyLedger, RoundCharge, Spent
from mpdp.analysis.privacy.composition import check_delta_slack
from mpdp.parties.rounds.outcome import RoundOutcome
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = [
    "DEFAULT_DELTA_SLACK",
    "check_privacy_options",
    "ledgers_from_rounds",
    "privacy_section",
    "privacy_summary",
]

#: delta_tilde of the exact optimum when none is given (``--delta-slack``).
DEFAULT_DELTA_SLACK = 1e-6


def check_privacy_options(
    budget: Budget | None, delta_slack: float, *, budget_name: str = "budget", slack_name: str = "delta_slack"
) -> float:
    """Validate a budget and delta_tilde together; return ``float(delta_slack)``.

    Raises:
        ParameterError: delta_slack outside [0, 1); budget not a :class:`mpdp.analysis.Budget`; a budget
            delta below delta_slack (every answer would exceed it: the composed delta is at least
            delta_tilde).
    """
    slack = check_delta_slack(delta_slack, slack_name)
    if budget is not None:
        if not isinstance(budget, Budget):
            raise ParameterError(budget_name, budget, "an analysis.Budget (Budget.parse('EPS,DELTA')) or None")
        if budget.delta < slack:
            raise ParameterError(
                budget_name, f"{budget.epsilon:g},{budget.delta:g}",
                f"a delta >= {slack_name} {slack:g} (the spent delta is at least delta_tilde, so a "
                "smaller budget delta refuses every round)",
            )
    return slack


def ledgers_from_rounds(
    rounds: Sequence[RoundOutcome], mechanisms: Sequence[RandomizedResponse], repetitions: int,
    delta_slack: float,
) -> list[PrivacyLedger]:
    """Each party's ledger as the transcript shows it: one charge per round it sent symbols in, of
    ``repetitions`` releases per answer with symbols (a double release, :attr:`RoundOutcome.double_released`,
    is charged as the further releases it is).

    Args:
        rounds: recorded rounds (any order; a party's charges follow it).
        mechanisms: k public mechanisms, party id = index.
        repetitions: releases per answer.
        delta_slack: delta_tilde of the ledgers, in [0, 1).

    Returns:
        k ledgers, party 0 first (those of parties that never answered are empty).

    Raises:
        ParameterError: a participant id outside 0..k-1, or a bad delta_slack.
    """
    charges: list[list[RoundCharge]] = [[] for _ in mechanisms]
    for outcome in sorted(rounds, key=lambda r: r.index):
        answers = collections.Counter(outcome.participants.tolist() + outcome.double_released.tolist())
        for party, count in sorted(answers.items()):
            if not 0 <= party < len(mechanisms):
                raise ParameterError("participants", party, f"a party id in 0..{len(mechanisms) - 1}")
            m = mechanisms[party]
            charges[party].append(RoundCharge(outcome.index, m.epsilon, m.delta, repetitions * count))
    return [PrivacyLedger(delta_slack, tuple(c)) for c in charges]


def _number(value: float) -> float | str:
    return "inf" if math.isinf(value) else value


def privacy_section(
    spent: Sequence[Spent], rounds: Sequence[RoundOutcome], budget: Budget | None, delta_slack: float,
    repetitions: int,
) -> dict[str, object]:
    """The ``privacy`` section of ``results.json``: a summary and one entry per party.

    Per party: ``id, rounds_answered, releases`` (= rounds_answered x repetitions), ``epsilon_optimal``
    (exact optimum at delta_slack), ``epsilon_basic``, ``delta`` (composed, exact optimum),
    ``delta_basic``, ``rounds_refused`` (abstained for budget), ``first_refused`` (round index or
    None) and ``rounds_double_released`` (the rounds it answered twice with symbols, charged in the
    releases; the summary's ``parties_double_released`` lists those parties). inf is written as the string
    ``"inf"``.
    """
    refused: list[list[int]] = [[] for _ in spent]
    doubled: list[list[int]] = [[] for _ in spent]
    for outcome in sorted(rounds, key=lambda r: r.index):
        for party in outcome.exhausted.tolist():
            refused[party].append(outcome.index)
        for party in sorted(set(outcome.double_released.tolist())):
            doubled[party].append(outcome.index)
    parties = [
        {"id": i, "rounds_answered": s.rounds, "releases": s.mechanisms,
         "epsilon_optimal": _number(s.epsilon), "epsilon_basic": _number(s.epsilon_basic),
         "delta": s.delta, "delta_basic": s.delta_basic, "method": s.method,
         "rounds_refused": len(refused[i]), "first_refused": refused[i][0] if refused[i] else None,
         "rounds_double_released": doubled[i]}
        for i, s in enumerate(spent)
    ]
    optimal = np.array([s.epsilon for s in spent])
    basic = np.array([s.epsilon_basic for s in spent])
    stopped = [i for i, r in enumerate(refused) if r]
    return {
        "delta_slack": delta_slack,
        "budget": None if budget is None else {"epsilon": _number(budget.epsilon), "delta": budget.delta},
        "releases_per_answer": repetitions,
        "note": f"each answered round is {repetitions} release(s) of the party's randomized response "
                "(repetitions are a simulation device; a deployment answers once per round)",
        "summary": {
            "parties": len(spent),
            "epsilon_optimal": {"median": _number(float(np.median(optimal))), "max": _number(float(optimal.max()))},
            "epsilon_basic": {"median": _number(float(np.median(basic))), "max": _number(float(basic.max()))},
            "delta_max": max(s.delta for s in spent),
            "parties_out_of_budget": len(stopped),
            "parties_double_released": [i for i, d in enumerate(doubled) if d],
            "median_rounds_answered_by_those": (
                float(np.median([spent[i].rounds for i in stopped])) if stopped else None
            ),
        },
        "parties": parties,
    }


def privacy_summary(section: dict[str, object]) -> str:
    """One line for the terminal from :func:`privacy_section`."""
    summary = section["summary"]
    assert isinstance(summary, dict)

    def fmt(value: object) -> str:
        return value if isinstance(value, str) else f"{value:.4g}"

    opt, basic = summary["epsilon_optimal"], summary["epsilon_basic"]
    line = (
        f"privacy spent per party (exact optimum at delta_tilde {section['delta_slack']:g}; each repetition "
        f"is a release, {section['releases_per_answer']} per answered round): epsilon median "
        f"{fmt(opt['median'])}, max {fmt(opt['max'])} (basic composition: median {fmt(basic['median'])}, "
        f"max {fmt(basic['max'])}); delta <= {summary['delta_max']:.3g}"
    )
    doubled = summary["parties_double_released"]
    assert isinstance(doubled, list)
    if doubled:
        line += f"; {len(doubled)} part{'y' if len(doubled) == 1 else 'ies'} released twice (charged)"
    budget = section["budget"]
    if budget is None:
        return line + "; no budget (nobody stopped)."
    assert isinstance(budget, dict)
    stopped = summary["parties_out_of_budget"]
    line += f"; budget ({fmt(budget['epsilon'])}, {budget['delta']:g}): {stopped}/{summary['parties']} {noun(summary['parties'], 'party', 'parties')} ran out"
    if stopped:
        line += f" (median {fmt(summary['median_rounds_answered_by_those'])} rounds answered)"
    return line + "."
