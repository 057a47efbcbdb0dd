"""Evaluate every round of a finished run (randomized response or curator) with
:func:`mpdp.analysis.reports.evaluation.evaluate_round`: what ``mpdp simulate`` and the Python API report."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.reports.evaluation import RoundEvaluation, evaluate_round
from mpdp.parties.rounds.outcome import RoundOutcome, RunOutcome
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.rule_factory import RuleCache

__all__ = ["evaluate_run"]


def evaluate_run(
    outcome: RunOutcome, bits: NDArray[np.int8], mechanisms: Sequence[RandomizedResponse],
    function: BooleanFunction, *, rule: str, alpha: float, rng: np.random.Generator, rules: RuleCache | None = None,
) -> list[RoundEvaluation]:
    """One :class:`mpdp.analysis.reports.evaluation.RoundEvaluation` per round, in round order (randomized response
    computing ``sum``: with the debiased count of the round's transcripts at level 1 - alpha).

    Args:
        outcome: the run (its protocol; its rounds' participants, decisions or the curator's releases,
            party decisions, status).
        bits: int8 (k, R), the dataset's true bits (-1 = takes no part).
        mechanisms: the k parties' randomized responses (curator: one level for all).
        function: f; rule: ``"average"`` / ``"worst-case"`` (randomized response) or ``"curator"``.
        alpha: family-wise level of the consistency tests (Bonferroni over the rounds).
        rng: the theory's Monte Carlo fallback, drawn from in round order.
        rules: the cache the run built its rules with.

    Raises:
        ParameterError, SizeLimitError: from :func:`mpdp.analysis.reports.evaluation.evaluate_round`.
    """
    evaluations = []
    played: Sequence[RoundOutcome] = outcome.rounds
    curator = outcome.protocol in ("curator", "mpc")  # mpc releases the curator's mechanism, securely
    central = "geometric" if function.name == "sum" else "curator"  # mpc's sum: 000's geometric mechanism
    kind, level = (central, mechanisms[0]) if curator else (rule, None)
    for j, rnd in enumerate(played):
        ids = rnd.participants
        evaluations.append(dataclasses.replace(evaluate_round(
            rnd.name, [mechanisms[i] for i in ids], bits[ids, j], rnd.decisions, function, rule=kind,
            rounds=len(played), alpha=alpha, rng=rng, rules=rules, level=level, party_decisions=rnd.party_decisions,
            symbols=rnd.symbols, participants=ids, status=rnd.status, absent=int(rnd.absent.size),
            messages_received=rnd.messages_received, messages_rejected=rnd.messages_rejected),
            lost=tuple(rnd.lost.tolist())))
    return evaluations
