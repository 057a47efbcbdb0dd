"""Accuracy of any decision rule: exact (average, worst case, one input) or, at large k, Monte Carlo.

Exact values follow 002 eqs. (1) and (3) (000 eqs. (9), (11)) through the engines of
:mod:`mpdp.protocols.decision.engines` (Kronecker transforms or count classes). For the posterior rule of many
parties with distinct parameters (:class:`mpdp.protocols.rules.symmetric.SymmetricAverageRule`) the exact sum has
2^k terms; :func:`monte_carlo_accuracy` estimates the average accuracy with a Hoeffding interval and says
so (``exact=False``). For a symmetric f it samples one count per group of equal parameters and decides by
a lookup table on count classes (:mod:`mpdp.analysis.statistics.monte_carlo`); otherwise one symbol per party.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.statistics.monte_carlo import count_table
from mpdp.protocols.decision.engines import (
    DecisionProblem,
    accuracy_summary,
    build_problem,
    input_class,
    view_accuracy,
)
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.rules.rules import DecisionRule
from mpdp.protocols.rules.table_rule import TableRule

__all__ = ["PROGRESS_STEPS", "RuleAccuracy", "input_accuracy", "monte_carlo_accuracy", "per_party_batch",
           "rule_accuracy", "rule_problem"]

#: The per-party Monte Carlo path (the slow one: a rule evaluated on every transcript) runs in at least
#: this many batches, so that a progress bar moves.
PROGRESS_STEPS = 32


@dataclass(frozen=True, slots=True)
class RuleAccuracy:
    """Accuracy of one rule.

    Attributes:
        average: average accuracy (002 eq. (1)); an estimate when ``exact`` is False.
        worst_case: worst-case accuracy (eq. (3)); None when not computed (Monte Carlo).
        exact: True for exact values.
        interval: (low, high) confidence interval of ``average`` for an estimate, else None.
        confidence: the interval's level.
        samples: number of Monte Carlo transcripts (0 when exact).
        successes: for an estimate under a 0/1-valued measure (zero-one), the number of samples whose
            decision scored 1 (the count a binomial test takes); else None.
    """

    average: float
    worst_case: float | None
    exact: bool = True
    interval: tuple[float, float] | None = None
    confidence: float | None = None
    samples: int = 0
    successes: int | None = None


def rule_problem(rule: TableRule, function: BooleanFunction, measure: NDArray[np.float64]) -> DecisionProblem:
    """The decision problem of ``rule`` (its views' likelihoods: a band of 10^5 parties takes 10-30 s), for
    :func:`rule_accuracy` and :func:`input_accuracy` of the same rule to share.

    Raises:
        ParameterError: a rule that does not match f (|Y|) or its engine's grouping.
    """
    problem = build_problem(rule.mechanisms, function, measure, rule.observer, rule.engine)
    groups = tuple(f.members for f in problem.views[0].factors)
    if groups != rule.groups:
        raise ParameterError("rule groups", rule.groups, f"{groups} for the {rule.engine} engine")
    return problem


def rule_accuracy(rule: TableRule, function: BooleanFunction, measure: NDArray[np.float64],
                  problem: DecisionProblem | None = None) -> RuleAccuracy:
    """Exact average and worst-case accuracy of ``rule`` for f and w (002 eqs. (1), (3)).

    Args:
        rule: any :class:`mpdp.protocols.rules.table_rule.TableRule` (its engine and groups fix the structure).
        function: f; measure: w, float64 (|Y|, |Y|).
        problem: :func:`rule_problem` of these three, built already; None: built here.

    Raises:
        ParameterError: a rule that does not match f (|Y|) or its engine's grouping.
    """
    problem = rule_problem(rule, function, measure) if problem is None else problem
    average, worst, _ = accuracy_summary(problem, rule.tables)
    return RuleAccuracy(average, worst)


def input_accuracy(rule: TableRule, function: BooleanFunction, measure: NDArray[np.float64],
                   bits: NDArray[np.integer[Any]], problem: DecisionProblem | None = None) -> float:
    """Exact accuracy ``E[w(f(x), rule(tau, x_i))]`` on one input x (the term of 002 eq. (3)).

    Args:
        bits: int array of shape (k,), the input x (party 0 first).
        problem: :func:`rule_problem` of ``rule``, ``function`` and ``measure``, built already; None: built here.

    Raises:
        ParameterError: bits not a 0/1 vector of length k.
    """
    x = np.asarray(bits)
    if x.shape != (rule.k,) or not np.isin(x, (0, 1)).all():
        raise ParameterError("x", x, f"{rule.k} {noun(rule.k, 'bit')} 0/1")
    problem = rule_problem(rule, function, measure) if problem is None else problem
    b = 0 if rule.observer is None else int(x[rule.observer])
    view = problem.views[b]
    return float(view_accuracy(view, rule.tables[b])[input_class(view, x)])


def _sample(cdf: NDArray[np.float64], x: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.uint8]:
    """One transcript per input row by inverse CDF of each party's channel row: (n, k) uint8."""
    rows = cdf[np.arange(x.shape[1])[None, :], x]  # (n, k, 4)
    u = rng.random(x.shape)
    symbols: NDArray[np.uint8] = np.minimum((rows < u[..., None]).sum(axis=2), 3).astype(np.uint8)
    return symbols


def per_party_batch(samples: int, k: int) -> int:
    """Repetitions per batch of the per-party Monte Carlo path: at most 2^22 symbols, at least
    :data:`PROGRESS_STEPS` batches (fewer only when ``samples`` is smaller), at least 1."""
    return max(1, min(samples, (1 << 22) // max(k, 1), -(-samples // PROGRESS_STEPS)))


def _per_party_gain(rule: DecisionRule, function: BooleanFunction, w: NDArray[np.float64], samples: int,
                    rng: np.random.Generator, progress: Callable[[int], None]) -> float:
    """Total gain of ``samples`` repetitions drawn one symbol per party (vectorized over repetitions, in at
    least :data:`PROGRESS_STEPS` batches, each reported to ``progress``)."""
    mechs = rule.mechanisms
    k = len(mechs)
    values = function.count_values(k)
    cdf = np.ones((k, 2, 4))
    for i, m in enumerate(mechs):
        cdf[i, :, : m.num_symbols] = np.cumsum(m.channel, axis=1)
    total = 0.0
    batch = per_party_batch(samples, k)
    done = 0
    while done < samples:
        n = min(batch, samples - done)
        x = rng.integers(0, 2, size=(n, k))
        symbols = _sample(cdf, x, rng)
        own = None if rule.observer is None else x[:, rule.observer]
        decided = rule.decide(symbols, rng=rng, own_bits=own)
        truth = values[x.sum(axis=1)] if values is not None else np.array([function(row) for row in x])
        total += float(w[truth, decided].sum())
        done += n
        progress(n)
    return total


def monte_carlo_accuracy(
    rule: DecisionRule,
    function: BooleanFunction,
    measure: NDArray[np.float64],
    samples: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    progress: Callable[[int], None] | None = None,
) -> RuleAccuracy:
    """Estimate the average accuracy (002 eq. (1)) by sampling x uniformly and one transcript each.

    For a symmetric f and a rule constant on count classes (the posterior rule, a symmetric-engine table)
    each repetition draws one binomial count per group of equal (epsilon, delta) and decides by a lookup
    table (:func:`mpdp.analysis.statistics.monte_carlo.count_table`); otherwise one symbol per party, decided by
    ``rule.decide``. Either way every decision is the rule's own on the sampled transcript.

    The interval is Hoeffding's: mean +- (max w - min w) sqrt(log(2 / alpha) / (2 n)), valid for every n.
    Worst case is not estimated (None): it is a minimum over 2^k inputs.

    Args:
        rule: the central observer's or a party's rule. function: f. measure: w, float64 (|Y|, |Y|).
        samples: n >= 1 transcripts. rng: explicit generator. confidence: in (0, 1).
        progress: called with the repetitions each batch did (they add up to ``samples``); the draws do
            not depend on it.

    Returns:
        a :class:`RuleAccuracy` with ``exact=False``, the Hoeffding interval and, for a 0/1 measure, the
        count of correct decisions (``successes``).

    Raises:
        ParameterError: samples < 1 or confidence outside (0, 1).
    """
    if samples < 1:
        raise ParameterError("samples", samples, "an integer >= 1")
    if not 0.0 < confidence < 1.0:
        raise ParameterError("confidence", confidence, "a level in (0, 1)")
    k = len(rule.mechanisms)
    w = np.asarray(measure, dtype=np.float64)
    values = function.count_values(k)
    table = None if values is None else count_table(rule)
    report = progress or (lambda n: None)
    if values is not None and table is not None:  # symmetric f, rule constant on count classes
        total = table.total_gain(values, w, samples, rng, report)
    else:
        total = _per_party_gain(rule, function, w, samples, rng, report)
    mean = total / samples
    half = float(w.max() - w.min()) * math.sqrt(math.log(2.0 / (1.0 - confidence)) / (2.0 * samples))
    low, high = float(w.min()), float(w.max())  # the accuracy lies between the extreme gains
    successes = int(round(total)) if np.isin(w, (0.0, 1.0)).all() else None
    return RuleAccuracy(mean, None, exact=False, interval=(max(mean - half, low), min(mean + half, high)),
                        confidence=confidence, samples=samples, successes=successes)
