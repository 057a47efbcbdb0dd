"""The up-front cost of a Monte Carlo accuracy estimate of the posterior rule, from the path it takes.

:func:`mpdp.analysis.theory.accuracy.monte_carlo_accuracy` takes one of two paths, and the rule decides in one of
three ways; the estimate follows the same choices (:func:`mpdp.analysis.statistics.monte_carlo.table_plan`,
:attr:`mpdp.protocols.rules.symmetric.SymmetricAverageRule.parity_alpha` and ``by_counts``), so it counts the
work that will run:

* count-table path (:mod:`mpdp.analysis.statistics.monte_carlo`): the rule decides one representative transcript per
  count class once (per own bit of a party), then each repetition draws binomial counts per group
  (``samples x`` (:data:`REPETITION_SECONDS` + per group :data:`PURE_DRAW_SECONDS` or
  :data:`FOUR_DRAW_SECONDS`)), after :data:`SETUP_SECONDS`;
* per-party path: each repetition draws k symbols (``samples x k x`` :data:`SYMBOL_SECONDS`) and the rule
  decides each transcript.

A decision costs k x :data:`PARITY_SECONDS` for a gain of parity form (XOR, 002 Corollary 3.1: the sign
of a product), or one Poisson-binomial posterior of the unknown parties, k(k+1)/2 x
:data:`POSTERIOR_STEP_SECONDS` (:func:`mpdp.protocols.rules.symmetric.count_posterior`). With every party on one
mechanism the central observer computes one posterior per distinct symbol count vector of a batch, not per
transcript; their expected number is drawn here from the symbols' multinomial law under the uniform input
of 002 eq. (1) (a fixed seed: the estimate is reproducible and costs milliseconds). Where the rule decides
from reported-one counts (``by_reported_ones``: one pure mechanism, a gain of few steps) a batch costs one
recurrence per step, bounded by the count engine's :data:`mpdp.protocols.rules.count_threshold.COUNT_SECONDS`.

Calibration (the project's 2-core machine shared with ~6 jobs, 2026-12-01;
``benchmarks/bench_monte_carlo_cost.py`` prints each estimate next to its measurement): count_posterior
21-34 ns per step at m x k = 200..3,125 x 101..1,001 under heavy load, 7-15 ns lighter (the constant sits
between); the parity decision 26-41 ns per party; drawing, deciding aside, 100-290 ns per party
(k = 11..20,001); per repetition 250-550 ns for one pure group and 950 ns for a four-output group of 60.
Over the benchmark's 36 cases (five functions at k = 11, 101, 1,001, equal and distinct epsilons,
four-output at k = 40, 200, 1,000) measured / estimate was 0.39-2.1 with these constants (light load;
0.23-2.6 over three earlier runs of heavier load while they were fitted); the model this replaced
(0.0022 ms * k^1.3 per transcript, for every rule and path) was 3-10,000x too high. Recalibrated
2026-12-03 (issue 23: ~2.5-4x high at load ~4): the posterior 1.2e-8 -> 5e-9 s per step, a party's
symbol 1.8e-7 -> 9e-8 s, parity 3e-8 -> 2e-8 s (fitted to distinct majority at k = 101 and 1,001 and xor,
measured 3.5 s / 6.6 s / 0.7-9.6 s), and the count-table path of a rule deciding from reported-ones counts
(majority-like, one group) priced as its recurrences, not a posterior per class (60x high at k = 1,001).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from mpdp.analysis.statistics.monte_carlo import table_plan
from mpdp.analysis.theory.accuracy import per_party_batch
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import CostEstimate, noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.count_gain import gain_steps
from mpdp.protocols.rules.count_threshold import COUNT_SECONDS
from mpdp.protocols.rules.symmetric import SymmetricAverageRule

__all__ = ["FOUR_DRAW_SECONDS", "MEMORY_BYTES", "PARITY_SECONDS", "POSTERIOR_STEP_SECONDS", "PURE_DRAW_SECONDS",
           "REPETITION_SECONDS", "SETUP_SECONDS", "SYMBOL_SECONDS", "expected_distinct_counts", "monte_carlo_cost",
           "wide_monte_carlo_cost"]

#: Seconds per step (one party into one row) of the Poisson-binomial recursion of the posterior.
POSTERIOR_STEP_SECONDS = 5.0e-9
#: Seconds per party of the parity decision (XOR).
PARITY_SECONDS = 2.0e-8
#: Seconds per party and repetition of the per-party path besides the decision: input, symbol, score.
SYMBOL_SECONDS = 9.0e-8
#: Seconds per repetition of the count-table path besides the groups' draws (the input's gain, the lookup).
REPETITION_SECONDS = 2.0e-7
#: Seconds per repetition and pure group of the count-table path (three binomial draws).
PURE_DRAW_SECONDS = 2.0e-7
#: Seconds per repetition and four-output group of the count-table path (five binomial draws).
FOUR_DRAW_SECONDS = 7.0e-7
#: Seconds of either path before its first repetition (the rule's tables, the groups, the first batch).
SETUP_SECONDS = 0.02
#: Memory of either path besides the rule's gain table (batches of at most 2^22 symbols or 2^20
#: repetitions, a few float64 arrays each).
MEMORY_BYTES = 2.0e8


def expected_distinct_counts(rule: SymmetricAverageRule, batch: int) -> float:
    """The expected number of distinct symbol count vectors among ``batch`` transcripts of parties that
    share one mechanism, under the uniform input (each party's symbol is drawn from the mean of its
    channel's two rows): one multinomial sample of ``batch`` count vectors, seeded (reproducible).

    Args:
        rule: a rule whose parties share one mechanism. batch: transcripts (>= 0).

    Returns:
        a float in [min(batch, 1), batch].
    """
    if batch <= 0:
        return 0.0
    mech = rule.mechanisms[0]
    symbols = mech.channel.mean(axis=0)
    counts = np.random.default_rng(0).multinomial(rule.k, symbols / symbols.sum(), size=batch)
    return float(np.unique(counts, axis=0).shape[0])


def _posterior_seconds(rule: SymmetricAverageRule) -> float:
    """One decision: the parity sign, or the posterior of the count of the parties the observer does not know."""
    unknown = rule.k - (rule.observer is not None)
    if rule.parity_alpha is not None:
        return unknown * PARITY_SECONDS
    return unknown * (unknown + 1) / 2 * POSTERIOR_STEP_SECONDS


def monte_carlo_cost(rule: SymmetricAverageRule, samples: int, alternative: str,
                     task: str = "the Monte Carlo accuracy estimate") -> CostEstimate:
    """The estimated time and memory of ``monte_carlo_accuracy(rule, f, w, samples, rng)`` for a symmetric f.

    Args:
        rule: the posterior rule (:func:`mpdp.protocols.rules.symmetric.observer_average_rule`), central or a party's.
        samples: repetitions (>= 1). alternative: what to do instead, named when refused. task: its name.

    Returns:
        a :class:`mpdp.protocols.numerics.cost.CostEstimate` (seconds on one core, calibration in the module docstring;
        bytes: :data:`MEMORY_BYTES` and two copies of the gain table, (k + 1) x |Y| float64).

    Raises:
        ParameterError: samples < 1.
    """
    if samples < 1:
        raise ParameterError("samples", samples, "an integer >= 1")
    k = rule.k
    size = f"{samples:,} {noun(samples, 'transcript')} of {k:,} {noun(k, 'party', 'parties')}"
    plan = table_plan(rule)
    if plan is not None:  # decide each class once, then draw counts per group
        factors, classes = plan
        bits = 1 if rule.observer is None else 2
        draws = sum(FOUR_DRAW_SECONDS if f.mechanism.four_output else PURE_DRAW_SECONDS for f in factors)
        if rule.by_reported_ones and rule.parity_alpha is None:  # every class at once: a recurrence per step
            deciding = bits * gain_steps(rule.gain).size * COUNT_SECONDS(k)
        else:
            deciding = bits * classes * _posterior_seconds(rule)
        seconds = deciding + samples * (REPETITION_SECONDS + draws)
        size += f" (a table of {classes:,} count classes)"
    else:  # every transcript drawn and decided, in batches
        batch = per_party_batch(samples, k)
        if rule.by_reported_ones and rule.parity_alpha is None:  # one recurrence per step and batch
            seconds_of_decisions = -(-samples // batch) * gain_steps(rule.gain).size * COUNT_SECONDS(k)
        elif rule.by_counts and rule.parity_alpha is None:
            decisions = (samples // batch * expected_distinct_counts(rule, batch)
                         + expected_distinct_counts(rule, samples % batch))
            seconds_of_decisions = decisions * _posterior_seconds(rule)
        else:
            seconds_of_decisions = samples * _posterior_seconds(rule)
        seconds = samples * k * SYMBOL_SECONDS + seconds_of_decisions
    # the gain table G[s, y] twice (the estimate builds its rule and w again): (k + 1)^2 float64 for sum
    return CostEstimate(task, size, SETUP_SECONDS + seconds, MEMORY_BYTES + 2 * rule.gain.nbytes, alternative)


def wide_monte_carlo_cost(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                          observer: int | None, samples: int, alternative: str,
                          task: str = "the Monte Carlo accuracy estimate") -> CostEstimate | None:
    """:func:`monte_carlo_cost` of the posterior rule of a symmetric f of more than two outputs (``sum``),
    before the rule and its measure are built: that estimate reads the rule's gain table only through its
    size ((k + 1) x |Y| float64, ``sum`` at 20,000 parties 3.2 GB) and its parity form, which needs two
    outputs; the path and the decisions follow from the mechanisms and the observer alone.

    Returns:
        the same estimate :func:`monte_carlo_cost` gives for the built rule, or None for at most two outputs.

    Raises:
        ParameterError: samples < 1; as :class:`~mpdp.protocols.rules.symmetric.SymmetricAverageRule` (observer).
    """
    k = len(mechanisms)
    outputs = function.output_size(k)
    if outputs <= 2:
        return None
    # one column with a step at every count, as sum's gain has: the same decision path (no count recurrence
    # beyond COUNT_STEPS_MAX steps), and 8 (k + 1) bytes instead of the table
    stand_in = SymmetricAverageRule(tuple(mechanisms), np.arange(k + 1, dtype=np.float64)[:, None], observer)
    cost = monte_carlo_cost(stand_in, samples, alternative, task)
    return dataclasses.replace(cost, memory_bytes=cost.memory_bytes + 2 * 8.0 * (k + 1) * (outputs - 1))
