"""Exact accuracy of the observer's average-case rule on one given input x (symmetric f).

The live run measures how often the central observer's decision equals f(x) for the real votes x.
Its theoretical value is E_tau[w(f(x), d(tau)) | x] (000 eq. (9) without the average over x). The
rule d depends on tau only through the posterior of the count s, and parties with equal parameters
are exchangeable, so tau can be summarised per group of equal (epsilon, delta) by its symbol counts:

* pure group of n parties, a of them with x_i = 1: t = number of symbol 1, with
  P(t | x) = (Bin(a, p) * Bin(n - a, 1 - p))(t) and posterior count Bin(t, p) * Bin(n - t, 1 - p);
* four-output group: (c0, c3) revealed zeros and ones ~ Bin(n - a, delta), Bin(a, delta); among the
  unrevealed, c2 = (Bin(a - c3, p) * Bin(n - a - c0, 1 - p))(c2); posterior c3 + Bin(c2, p) *
  Bin(c1, 1 - p);

(* is convolution, p = e^eps / (1 + e^eps)). The accuracy is the sum over count classes of
P(class | x) w(f(x), d(class)), exact up to float rounding. The class count is the product over groups;
above ``max_classes`` (many distinct parameters) it falls back to a Monte Carlo estimate with its own
generator and a 95% interval, and says so.

One group of more than :data:`COUNT_PATH_MIN` equal pure parties (0 < epsilon < inf) and a monotone f
(majority, and, or, at least m): the enumeration above costs O(n^3) time and O(n^2) memory (2 min and
1.9 GB at n = 10^4; impossible at 10^5), so the rule is taken as the count engine's threshold tau on the
reported-one count (:func:`mpdp.protocols.rules.count_threshold.count_threshold_rule`, the same optimal rule) and
P(answer 1 | x) = P(Bin(a, p) + Bin(n - a, q) >= tau) is one O(n) sum
(:func:`mpdp.protocols.rules.count_threshold.threshold_tail`): exact, 0.2-1 s at n = 10^5.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import binom

from mpdp.analysis.statistics.stats import clopper_pearson
from mpdp.protocols.decision.parity import count_parity_form, parity_rule_accuracy_on_input
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, sample_protocol
from mpdp.protocols.rules.count_threshold import count_threshold_applies, count_threshold_rule, threshold_tail
from mpdp.protocols.rules.symmetric import argmax_decision, observer_average_rule, tied_rows

__all__ = ["COUNT_PATH_MIN", "AccuracyOnInput", "observer_accuracy_on_input"]

#: Largest single group of equal pure parties whose count classes are enumerated; above it, for a monotone f,
#: the count engine's threshold (module docstring).
COUNT_PATH_MIN = 2000


@dataclass(frozen=True, slots=True)
class AccuracyOnInput:
    """The expected accuracy E[w(f(x), d(tau)) | x] of a rule on one input.

    Attributes:
        value: the exact value, or the Monte Carlo mean (for zero-one: P(decision = f(x))).
        exact: True when computed exactly.
        ci_low, ci_high: a 95% interval (equal to ``value`` when exact).
        method: how it was computed, in words.
        samples: transcripts drawn by the Monte Carlo fallback (0 when exact).
        tie_probability: P(the posterior ties | x): the share of the decision made by the rule's tie rule
            (deterministic: the smallest output; 1 at epsilon = 0), exact or estimated with ``value``.
    """

    value: float
    exact: bool
    ci_low: float
    ci_high: float
    method: str
    samples: int = 0
    tie_probability: float = 0.0


def _pmf(n: int, p: float) -> NDArray[np.float64]:
    return binom.pmf(np.arange(n + 1), n, p) if n > 0 else np.ones(1)


def _pure_group(n: int, a: int, p: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Class probabilities (n+1,) and posterior count pmfs (n+1, n+1) of a pure group; only the
    probabilities depend on the input (through ``a``), the posteriors are :func:`_pure_posteriors`."""
    return np.convolve(_pmf(a, p), _pmf(n - a, 1.0 - p)), _pure_posteriors(n, p)


@functools.lru_cache(maxsize=4)  # (n+1)^2 floats each: 8 MB at n = 1,000, 32 MB at COUNT_PATH_MIN
def _pure_posteriors(n: int, p: float) -> NDArray[np.float64]:
    """Posterior count pmfs (n+1, n+1) of a pure group of n parties, read-only; the same for every input,
    so computed once per (n, p) and cached: the rounds of a run share them (at n = 1,000 they were 84% of
    a round's evaluation; 12 random rounds: 0.72-0.87 s a round before, 0.035-0.12 s after, load 6-8; a
    cache per count of ones would have hit 1 round in 12, each round's count differs).

    Row t is Bin(t, p) * Bin(n - t, 1 - p) (the count of reported ones when t of the n parties hold a
    one). The binomial pmfs of every t come from two vectorised calls (one per call was ~0.5 s a round
    at n = 1,000), elementwise the same values."""
    q = 1.0 - p
    t, counts = np.arange(n + 1)[:, None], np.arange(n + 1)[None, :]
    # (n+1, n+1); row t: Bin(t, p) and Bin(n - t, q) on 0..n
    ones = np.asarray(binom.pmf(counts, t, p), dtype=np.float64)
    zeros = np.asarray(binom.pmf(counts, n - t, q), dtype=np.float64)
    post = np.array([np.convolve(ones[i, : i + 1], zeros[i, : n - i + 1]) for i in range(n + 1)])
    post.setflags(write=False)
    return post


def _four_group(n: int, a: int, p: float, delta: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Class probabilities and posterior count pmfs of a four-output group (classes (c0, c3, c2))."""
    q = 1.0 - p
    probs, posts = [], []
    zeros_revealed, ones_revealed = _pmf(n - a, delta), _pmf(a, delta)
    for c0 in range(n - a + 1):
        for c3 in range(a + 1):
            weight = zeros_revealed[c0] * ones_revealed[c3]
            rest = n - c0 - c3
            c2_pmf = np.convolve(_pmf(a - c3, p), _pmf(n - a - c0, q))
            for c2 in range(rest + 1):
                post = np.zeros(n + 1)
                inner = np.convolve(_pmf(c2, p), _pmf(rest - c2, q))
                post[c3 : c3 + inner.size] = inner
                probs.append(weight * c2_pmf[c2])
                posts.append(post)
    return np.array(probs), np.array(posts)


def _class_count(n: int, four: bool) -> int:
    return (n + 1) * (n + 2) * (n + 3) // 6 if four else n + 1


def _combine(
    prob_a: NDArray[np.float64], post_a: NDArray[np.float64], prob_b: NDArray[np.float64], post_b: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Classes of the union of two groups: outer product of probabilities, convolution of pmfs."""
    prob = np.outer(prob_a, prob_b).ravel()
    la, lb = post_a.shape[1], post_b.shape[1]
    post = np.zeros((prob_a.size, prob_b.size, la + lb - 1))
    for j in range(lb):
        post[:, :, j : j + la] += post_a[:, None, :] * post_b[None, :, j, None]
    return prob, post.reshape(prob.size, -1)


def observer_accuracy_on_input(
    mechanisms: Sequence[RandomizedResponse],
    x: NDArray[np.integer[Any]],
    function: BooleanFunction,
    measure: NDArray[np.float64],
    *,
    rng: np.random.Generator | None = None,
    max_classes: int = 20_000,
    mc_transcripts: int = 4_000,
) -> AccuracyOnInput:
    """Expected accuracy of the central observer's optimal average-case rule on input x.

    Args:
        mechanisms: the n participating parties' mechanisms.
        x: int array of shape (n,), the true bits (0/1) of those parties.
        function: a symmetric function; measure: the accuracy measure w, shape (|Y|, |Y|).
        rng: generator for the Monte Carlo fallback (required only when it runs).
        max_classes: largest number of count classes enumerated exactly.
        mc_transcripts: transcripts drawn by the Monte Carlo fallback.

    Returns:
        An :class:`AccuracyOnInput`; ``exact`` says which method ran.

    Raises:
        ParameterError: x of the wrong shape or not 0/1; a non-symmetric function (from the rule);
            the fallback is needed but ``rng`` is None.
    """
    x = np.asarray(x)
    n = len(mechanisms)
    if x.shape != (n,) or not np.isin(x, (0, 1)).all():
        raise ParameterError("x", x, f"{n} {noun(n, 'bit')}, each 0 or 1, one per participating party")
    rule = observer_average_rule(mechanisms, function, measure)
    w = np.asarray(measure, dtype=np.float64)
    values = function.count_values(n)
    assert values is not None  # observer_average_rule rejected a function that is not symmetric
    truth = int(values[int(x.sum())])
    parity = count_parity_form(rule.gain)
    if parity is not None and parity[1] == 0.0 and all(m.epsilon > 0 for m in mechanisms):
        # XOR: the product form, exact at any k, no transcript ties (002 §3; mpdp.protocols.decision.parity)
        value = parity_rule_accuracy_on_input(mechanisms, int(x.sum()), w[truth], parity[0])
        return AccuracyOnInput(value, True, value, value, "exact: parity product form")
    groups: dict[RandomizedResponse, list[int]] = {}
    for i, mech in enumerate(mechanisms):
        groups.setdefault(mech, []).append(i)
    if n > COUNT_PATH_MIN and len(groups) == 1 and 0 < mechanisms[0].epsilon < math.inf \
            and count_threshold_applies(mechanisms, function, w):
        return _by_threshold(mechanisms, int(x.sum()), function, w, truth)
    classes = math.prod(_class_count(len(ids), bool(m.four_output)) for m, ids in groups.items())
    if classes <= max_classes:
        combined: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
        for mech, ids in groups.items():
            size, ones = len(ids), int(x[ids].sum())
            if mech.four_output:
                g_prob, g_post = _four_group(size, ones, mech.p_truth, mech.delta)
            else:
                g_prob, g_post = _pure_group(size, ones, mech.p_truth)
            keep = g_prob > 0
            # the first group's classes as they are (its combination with the empty group multiplied by 1)
            combined = (g_prob[keep], g_post[keep]) if combined is None else _combine(*combined, g_prob[keep],
                                                                                     g_post[keep])
        prob, post = combined if combined is not None else (np.ones(1), np.ones((1, 1)))  # no party: one class
        expected = post @ rule.gain
        gains = w[truth, argmax_decision(expected)]
        # an average of gains (probabilities sum to 1 up to rounding): keep it in their range
        value = min(max(float(prob @ gains), float(gains.min())), float(gains.max()))
        ties = min(float(prob @ tied_rows(expected)), 1.0)
        method = f"exact: {len(groups)} parameter group(s), {classes} count classes" + _tie_note(ties)
        return AccuracyOnInput(value, True, value, value, method, tie_probability=ties)
    if rng is None:
        raise ParameterError("rng", None, "a numpy Generator for the Monte Carlo fallback")
    symbols = sample_protocol(mechanisms, x, mc_transcripts, rng)
    expected = rule.expected_gain(symbols)
    gains = w[truth, argmax_decision(expected)]
    ties = float(tied_rows(expected).mean())
    mean = float(gains.mean())
    if np.isin(gains, (0.0, 1.0)).all():
        low, high = clopper_pearson(int(gains.sum()), mc_transcripts, 0.05)
    else:
        half = 1.96 * float(gains.std(ddof=1)) / np.sqrt(mc_transcripts)
        low, high = mean - half, mean + half
    method = (f"Monte Carlo estimate: {mc_transcripts} transcripts "
              f"(exact needs more than {max_classes} count classes)" + _tie_note(ties))
    return AccuracyOnInput(mean, False, low, high, method, mc_transcripts, ties)


def _by_threshold(mechanisms: Sequence[RandomizedResponse], ones: int, function: BooleanFunction,
                  w: NDArray[np.float64], truth: int) -> AccuracyOnInput:
    """The exact accuracy on an input with ``ones`` ones of one group of equal pure parties, through the
    count engine's threshold (module docstring; no ties: the threshold's posterior gain is never exactly
    level at 0 < epsilon < inf)."""
    rule = count_threshold_rule(mechanisms, function, w)
    tau = int(rule.boundary[0])
    reported = threshold_tail(len(mechanisms), mechanisms[0].epsilon, tau, ones)  # P(count >= tau | x)
    answer_one = 1.0 - reported if rule.flipped else reported
    value = float(w[truth, 1] * answer_one + w[truth, 0] * (1.0 - answer_one))
    value = min(max(value, float(w[truth].min())), float(w[truth].max()))
    method = f"exact: one parameter group of {len(mechanisms)}, count threshold {tau} (count engine)"
    return AccuracyOnInput(value, True, value, value, method)


def _tie_note(ties: float) -> str:
    return (f"; the posterior ties with probability {ties:.4g} and the rule then answers the smallest "
            f"output (deterministic tie rule)") if ties > 0 else ""
