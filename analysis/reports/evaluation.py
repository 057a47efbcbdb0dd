"""Evaluate one round of a live run: measured accuracy with its interval, the exact theory, the test.

:func:`evaluate_round` is the one entry point, for both protocols (the CLI and the Python API call it):

* randomized response, ``rule="average"``: the observer's posterior rule; theory
  :func:`mpdp.analysis.theory.theory.observer_accuracy_on_input` (exact, or Monte Carlo with ``rng`` when the
  count classes are too many);
* randomized response, ``rule="worst-case"``: the worst-case rule (LP, 002 eq. (6)) of ``rules``; theory
  its exact accuracy on the true input (:func:`mpdp.analysis.theory.party_theory.round_rule_theory`); when no
  exact engine holds the round, the average rule's theory as above;
* ``rule="curator"``: the curator's released outputs; theory
  :func:`mpdp.analysis.theory.central_vs_distributed.curator_accuracy_on_input`, and beside it the
  randomized-response protocol's exact accuracy on the same votes at the same (epsilon, delta);
* ``rule="geometric"`` (mpc, ``sum``): the noisy counts clamp(s + Z, 0, n) of 000's geometric mechanism as
  the servers draw it; theory P(release = s) exactly from the integer table
  (:meth:`mpdp.protocols.randomization.threshold_release.GeometricTable.release_pmf`), and the rr protocol's beside it.

For ``sum`` under randomized response, given the round's transcripts (``symbols``), the round also carries
the debiased count local-DP tools report (:func:`mpdp.analysis.theory.debiased.debiased_round`: estimate, standard
error, normal interval at level 1 - alpha, the clipped value labelled post-processed; parties with epsilon
0 left out and listed).

With the parties' own decisions (``party_decisions``, randomized response) the round also gets their
mean measured accuracy, the exact theory of their rules on x and the 002 law check
(:class:`PartyEvaluation`). The measured-against-theory comparison itself is
:func:`mpdp.analysis.reports.report.evaluate_decisions` (Clopper-Pearson interval, exact binomial test with a
Bonferroni correction over ``rounds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.reports.report import RoundResult, evaluate_decisions
from mpdp.analysis.theory.central_vs_distributed import curator_accuracy_on_input
from mpdp.analysis.theory.debiased import DebiasedRound, debiased_round
from mpdp.analysis.theory.party_theory import RoundRuleTheory, round_rule_theory
from mpdp.analysis.theory.theory import AccuracyOnInput, observer_accuracy_on_input
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.randomization.threshold_release import geometric_table
from mpdp.protocols.rules.rule_factory import RuleCache, zero_one_measure
from mpdp.protocols.rules.rules import RULE_KINDS

__all__ = ["EVALUATED_RULES", "MEASURED", "UNDECIDED", "PartyEvaluation", "RoundEvaluation", "evaluate_round",
           "geometric_accuracy_on_input"]

#: What decided a round: the observer's rule of a kind (randomized response), the curator's (or mpc's)
#: central mechanism for the majority, or mpc's geometric mechanism for the sum.
EVALUATED_RULES = (*RULE_KINDS, "curator", "geometric")


@dataclass(frozen=True, slots=True)
class PartyEvaluation:
    """The parties' own decisions in one round (randomized response with party decisions).

    Attributes:
        accuracy: mean measured accuracy over the participants that sent every decision, or None.
        theoretical_accuracy, theoretical_min: mean and minimum over the parties of their rule's exact
            accuracy on x, or None (no exact engine).
        decisions_missing: participants whose decisions did not all arrive.
        law_holds: the 002 law for the accuracy the rules optimize (every party's >= the observer's),
            or None when unknown.
    """

    accuracy: float | None = None
    theoretical_accuracy: float | None = None
    theoretical_min: float | None = None
    decisions_missing: int = 0
    law_holds: bool | None = None

    def to_json(self) -> dict[str, object]:
        """The ``party_*`` fields of a round in ``results.json``."""
        return {"party_accuracy": self.accuracy, "party_theoretical_accuracy": self.theoretical_accuracy,
                "party_theoretical_min": self.theoretical_min,
                "party_decisions_missing": self.decisions_missing, "party_law_holds": self.law_holds}


#: The statuses of a round that was not decided: no answer at all, or every party heard from abstained.
UNDECIDED = ("failed", "no-answers")
#: The figures of ``results.json`` measured from a round's decisions (null for an undecided round).
MEASURED = ("correct", "empirical_accuracy", "ci_low", "ci_high", "p_value", "consistent")


@dataclass(frozen=True, slots=True)
class RoundEvaluation:
    """One evaluated round: the figures, how it closed and the protocol's extra columns.

    Attributes:
        result: measured against theory (:class:`mpdp.analysis.reports.report.RoundResult`).
        status: ``"complete"``, ``"timeout"``, ``"failed"`` (no answer) or ``"no-answers"`` (every party heard
            from abstained; the last two were not decided); absent: parties not heard; lost: the ids of those
            whose answer was expected but never received (:attr:`mpdp.parties.rounds.outcome.RoundOutcome.lost`).
        rr_theoretical_accuracy: curator rounds: randomized response's exact accuracy on the same votes.
        parties: randomized response with party decisions: :class:`PartyEvaluation`.
        debiased: randomized response computing ``sum``: the debiased count of the round's transcripts
            (:class:`mpdp.analysis.theory.debiased.DebiasedRound`).
    """

    result: RoundResult
    status: str = "complete"
    absent: int = 0
    lost: tuple[int, ...] = ()
    rr_theoretical_accuracy: float | None = None
    parties: PartyEvaluation | None = None
    debiased: DebiasedRound | None = None

    def to_json(self) -> dict[str, object]:
        """The round's entry of ``results.json``: the result's fields, status, absent, lost, then the extras. A round
        not decided (:data:`UNDECIDED`) has null measured figures (``correct``, ``empirical_accuracy``, its
        interval, ``p_value``, ``consistent``): nothing was measured."""
        entry = self.result.to_json() | {"status": self.status, "absent": self.absent, "lost": list(self.lost)}
        if self.status in UNDECIDED:
            entry |= dict.fromkeys(MEASURED)
        if self.rr_theoretical_accuracy is not None:
            entry["rr_theoretical_accuracy"] = self.rr_theoretical_accuracy
        if self.parties is not None:
            entry |= self.parties.to_json()
        if self.debiased is not None:
            entry["debiased"] = self.debiased.as_dict()
        return entry


def _party_evaluation(decisions: NDArray[np.int64], truth: int | None,
                      theory: RoundRuleTheory | None) -> PartyEvaluation:
    """Measured mean accuracy of the participants that answered (decisions (n, repetitions), -1 =
    missing), the exact theory of their rules on x, and the law check."""
    if truth is None:
        return PartyEvaluation()
    answered = (decisions >= 0).all(axis=1)
    accuracy = float((decisions[answered] == truth).mean()) if answered.any() else None
    if theory is None or theory.parties is None:
        return PartyEvaluation(accuracy, decisions_missing=int((~answered).sum()))
    return PartyEvaluation(accuracy, float(theory.parties.mean()), float(theory.parties.min()),
                           int((~answered).sum()), theory.law_holds)


def geometric_accuracy_on_input(x: NDArray[np.integer[Any]], epsilon: float) -> AccuracyOnInput:
    """Exact P(release = s | x) of the sum released by 000's geometric mechanism clamped to 0..n, as the
    mpc servers draw it (L = 40 integer table; :class:`mpdp.protocols.randomization.threshold_release.GeometricTable`).

    Raises:
        ParameterError: epsilon not finite and > 0.
    """
    votes = np.asarray(x, dtype=np.int64)
    if votes.size == 0:
        value = 1.0  # the sum of nobody is 0, released without noise
    else:
        value = float(geometric_table(epsilon).release_pmf(int(votes.sum()), int(votes.size))[int(votes.sum())])
    return AccuracyOnInput(value, True, value, value, "exact: the geometric mechanism (000) clamped to 0..n, L = 40")


def evaluate_round(
    name: str,
    mechanisms: Sequence[RandomizedResponse],
    x: NDArray[np.integer],
    decisions: NDArray[np.integer],
    function: BooleanFunction,
    *,
    rule: str,
    rounds: int,
    alpha: float,
    rng: np.random.Generator,
    rules: RuleCache | None = None,
    level: RandomizedResponse | None = None,
    party_decisions: NDArray[np.int64] | None = None,
    symbols: NDArray[np.integer] | None = None,
    participants: Sequence[int] | NDArray[np.integer] | None = None,
    status: str = "complete",
    absent: int = 0,
    messages_received: int = 0,
    messages_rejected: int = 0,
) -> RoundEvaluation:
    """Evaluate one round's decisions (or the curator's releases) against f(x) and the exact theory.

    Args:
        name: the round's name.
        mechanisms: the n participants' randomized responses (curator: all with one (epsilon, delta)).
        x: int (n,), the participants' true bits; decisions: int (repetitions,), the observer's
            decisions or the curator's released outputs.
        function: the symmetric f the round computes (curator: a binary symmetric f, released by its optimal
            central mechanism).
        rule: ``"average"``, ``"worst-case"`` or ``"curator"`` (module docstring).
        rounds, alpha: Bonferroni over ``rounds`` consistency tests at family-wise level ``alpha``.
        rng: the theory's Monte Carlo fallback (used only when the exact sum is too large).
        rules: the cache the run built its rules with (worst-case and party theory read the same rules).
        level: curator: the (epsilon, delta) of its mechanism, every party's (required).
        party_decisions: int64 (n, repetitions), each participant's own decisions, -1 = missing.
        symbols: int (repetitions, n), the round's transcripts (randomized response): with ``sum``, the
            debiased count at level 1 - alpha.
        participants: the n participants' party ids (labels of the parties the debiased count leaves out).
        status, absent, messages_received, messages_rejected: how the round closed, for the record.

    Returns:
        the :class:`RoundEvaluation`.

    Raises:
        ParameterError: an unknown rule, the curator without ``level`` or with party decisions, no
            repetitions.
        SizeLimitError: a worst-case rule no engine holds.
    """
    if rule not in EVALUATED_RULES:
        raise ParameterError("rule", rule, "one of " + ", ".join(EVALUATED_RULES))
    if rule in ("curator", "geometric") and party_decisions is not None:
        raise ParameterError("party_decisions", "given", "None with the curator (parties do not decide)")
    if rule in ("curator", "geometric") and level is None:
        raise ParameterError("level", None, "the curator's (epsilon, delta) as a RandomizedResponse")
    mechs = tuple(mechanisms)
    x = np.asarray(x, dtype=np.int64)
    counts: dict[str, Any] = {"rounds": rounds, "alpha": alpha, "messages_received": messages_received,
              "messages_rejected": messages_rejected}
    if level is not None and rule in ("curator", "geometric"):
        central = (curator_accuracy_on_input(x, level.epsilon, level.delta, function.name) if rule == "curator"
                   else geometric_accuracy_on_input(x, level.epsilon))
        result = evaluate_decisions(name, x, decisions, function, central, **counts)
        rr = observer_accuracy_on_input(mechs, x, function, zero_one_measure(function, len(mechs)), rng=rng)
        return RoundEvaluation(result, status, absent, rr_theoretical_accuracy=rr.value)
    cache = rules if rules is not None else RuleCache()
    theory = None
    if x.size and (rule == "worst-case" or party_decisions is not None):
        theory = round_rule_theory(mechs, x, function, rule, cache, central=rule == "worst-case",
                                   parties=party_decisions is not None)
    if rule == "worst-case" and theory is not None and theory.observer is not None:
        exact = AccuracyOnInput(theory.observer, True, theory.observer, theory.observer,
                                "exact: the worst-case rule (LP, 002 eq. 6) on the true input")
    else:
        exact = observer_accuracy_on_input(mechs, x, function, zero_one_measure(function, len(mechs)), rng=rng)
    result = evaluate_decisions(name, x, decisions, function, exact, **counts)
    parties = None
    if party_decisions is not None:
        parties = _party_evaluation(np.asarray(party_decisions), function(x) if x.size else None, theory)
    debiased = None
    if function.name == "sum" and symbols is not None and x.size:
        debiased = debiased_round(mechs, np.asarray(symbols), x, 1.0 - alpha, participants)
    return RoundEvaluation(result, status, absent, parties=parties, debiased=debiased)
