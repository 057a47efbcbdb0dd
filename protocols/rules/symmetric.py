"""The central observer's optimal average-case decision rule for symmetric functions, at any k.

For f(x) = g(|x|) the sum of 002 eq. (5) (000 eq. (13)) over all 2^k inputs collapses to a sum over the
number of ones s::

    sum_x P(tau | x) w(f(x), y)  =  C(tau) * sum_s pi_tau(s) w(g(s), y),

where C(tau) = prod_i (M_i[0, tau_i] + M_i[1, tau_i]) does not depend on y and pi_tau is the
Poisson-binomial distribution of s = sum_i B_i with B_i ~ Bernoulli(p_i), p_i = P(x_i = 1 | tau_i) =
M_i[1, tau_i] / (M_i[0, tau_i] + M_i[1, tau_i]) (the posterior under the uniform prior of eq. (1)).
So the optimal rule is ``argmax_y (pi_tau @ G)[y]`` with ``G[s, y] = w(g(s), y)``.

pi_tau is computed by the forward recursion pi <- (1 - p_i) pi + p_i shift(pi): every step is a convex
combination of non-negative numbers, so there is no cancellation, the result sums to one, and p_i in
{0, 1} (epsilon = inf, or a four-output symbol that reveals the bit) is handled exactly. Cost O(k^2)
per transcript, vectorized over transcripts. Identical pure parties and a gain with few steps over the
count (majority, AND, OR, threshold) are decided from the reported-one counts instead
(:mod:`mpdp.protocols.rules.count_gain`: one recurrence per round, ~linear in k, whatever the repetitions).

The same rule serves party i (002 eq. (2)): it knows x_i, so the posterior runs over the other parties'
count s' and the gain is read at s' + x_i. It is a :class:`mpdp.protocols.rules.rules.DecisionRule`
(``decide(symbols, rng=None, own_bits=None)``, JSON round trip): the live observer's average rule, and
what the engines fall back to when the classes of heterogeneous parameters are too many: exact
decisions on observed transcripts; accuracy then by Monte Carlo (:mod:`mpdp.analysis.theory.accuracy`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.parity import count_parity_form
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, posterior_table
from mpdp.protocols.rules.count_gain import COUNT_STEPS_MAX, count_gains, gain_steps
from mpdp.protocols.rules.rules import check_symbols

__all__ = ["SymmetricAverageRule", "argmax_decision", "count_posterior", "observer_average_rule", "tied_rows"]

#: Expected gains within this relative distance of the best count as tied (000 §5: any maximizer is
#: optimal); ties go to the smallest y, so two exact computations of the same rule agree.
TIE_TOLERANCE = 1e-9
_CHECK_BLOCK = 1 << 22  # symbols checked at a time by the count path (int64: 32 MB)


def argmax_decision(expected_gain: NDArray[np.float64]) -> NDArray[np.int64]:
    """The smallest y whose expected gain is within ``TIE_TOLERANCE`` of the best.

    Args:
        expected_gain: float64 array of shape (n, |Y|).

    Returns:
        int64 array of shape (n,).
    """
    first_best: NDArray[np.int64] = np.argmax(_near_best(expected_gain), axis=1).astype(np.int64)
    return first_best


def _near_best(expected_gain: NDArray[np.float64]) -> NDArray[np.bool_]:
    """bool (n, |Y|): y within ``TIE_TOLERANCE`` (relative to the row's scale, at least 1) of the best."""
    best = expected_gain.max(axis=1, keepdims=True)
    scale = np.maximum(np.abs(expected_gain).max(axis=1, keepdims=True), 1.0)
    near: NDArray[np.bool_] = expected_gain >= best - TIE_TOLERANCE * scale
    return near


def tied_rows(expected_gain: NDArray[np.float64]) -> NDArray[np.bool_]:
    """Which rows :func:`argmax_decision` decides by its tie rule: two or more y within ``TIE_TOLERANCE``
    of the best (at epsilon = 0 every row). The rule stays deterministic there (the smallest y); callers
    report how much of the decision a tie made (docs/guide/accuracy.md).

    Args:
        expected_gain: float64 array of shape (n, |Y|).

    Returns:
        bool array of shape (n,).
    """
    tied: NDArray[np.bool_] = _near_best(expected_gain).sum(axis=1) > 1
    return tied


def count_posterior(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """Poisson-binomial pmf of the number of ones given each party's P(x_i = 1 | tau_i).

    Args:
        p: float64 array of shape (..., k), entries in [0, 1].

    Returns:
        float64 array of shape (..., k + 1): ``out[..., s] = P(sum_i x_i = s | tau)``.
    """
    p = np.asarray(p, dtype=np.float64)
    k = p.shape[-1]
    out = np.zeros(p.shape[:-1] + (k + 1,))
    out[..., 0] = 1.0
    for i in range(k):
        pi = p[..., i, None]
        head = out[..., : i + 1] * pi  # mass that moves up by one
        out[..., : i + 1] *= 1.0 - pi
        out[..., 1 : i + 2] += head
    return out


@dataclass(frozen=True, slots=True)
class SymmetricAverageRule:
    """The optimal average-case rule of the central observer for a symmetric f (002 eq. (5)).

    Args:
        mechanisms: the k participating parties' randomized responses, in party order.
        gain: float64 array of shape (k + 1, |Y|), ``gain[s, y] = w(g(s), y)``.
        observer: None (central observer) or the deciding party's index (it also knows its own bit).

    Use :func:`observer_average_rule` to build one from a function and an accuracy measure.
    """

    mechanisms: tuple[RandomizedResponse, ...]
    gain: NDArray[np.float64] = field(repr=False)
    observer: int | None = None
    _posterior: NDArray[np.float64] = field(init=False, repr=False)
    _identical: bool = field(init=False, repr=False)
    _count_epsilon: float | None = field(init=False, repr=False)

    def __post_init__(self) -> None:
        table = posterior_table(self.mechanisms)
        object.__setattr__(self, "_posterior", table)
        same = np.array_equal(table, np.broadcast_to(table[:1], table.shape), equal_nan=True)  # NaN: no such symbol
        object.__setattr__(self, "_identical", bool(same))
        by_count = (same and self.observer is None and self.k > 0 and not self.mechanisms[0].four_output
                    and gain_steps(self.gain).size <= COUNT_STEPS_MAX)
        object.__setattr__(self, "_count_epsilon", self.mechanisms[0].epsilon if by_count else None)
        if self.observer is not None and not 0 <= self.observer < len(self.mechanisms):
            raise ParameterError("observer", self.observer, f"a party index 0..{len(self.mechanisms) - 1}")

    @property
    def k(self) -> int:
        """Number of participating parties."""
        return len(self.mechanisms)

    def expected_gain(self, symbols: NDArray[np.integer[Any]], own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.float64]:
        """Posterior expected accuracy of every decision y for each transcript.

        Args:
            symbols: uint8 array of shape (n_transcripts, k); ``symbols[r, i]`` is party i's symbol.
            own_bits: the deciding party's bit(s) (scalar or (n,)); only for a party observer.

        Returns:
            float64 array of shape (n_transcripts, |Y|).

        Raises:
            ParameterError: a shape mismatch, a symbol outside a party's alphabet, missing own bits.
        """
        if self._count_epsilon is not None:  # identical pure parties: from the reported-one counts
            return count_gains(self._count_epsilon, self.gain, self._reported_ones(symbols))
        s = check_symbols(symbols, self.mechanisms)
        if self.by_counts and s.shape[0] > 1:
            return self._gain_by_counts(s)
        p = self._posterior[np.arange(self.k), s]
        if self.observer is None:
            return count_posterior(p) @ self.gain
        bits = self._own_bits(s.shape[0], own_bits)
        pi = count_posterior(np.delete(p, self.observer, axis=1))  # (n, k): others' count 0..k-1
        return np.where(bits[:, None] == 1, pi @ self.gain[1:], pi @ self.gain[:-1])

    def _reported_ones(self, symbols: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
        """int64 (n,): the ones in each transcript, checked (:func:`check_symbols`) a block of rows at a
        time, so that the int64 copy stays ~32 MB at any number of repetitions."""
        rows = np.asarray(symbols)
        step = max(1, _CHECK_BLOCK // max(1, self.k))
        if rows.ndim != 2 or rows.shape[0] <= step:  # one block (check_symbols names a bad shape)
            whole: NDArray[np.int64] = check_symbols(rows, self.mechanisms).sum(axis=1)
            return whole
        ones: NDArray[np.int64] = np.concatenate([check_symbols(rows[i: i + step], self.mechanisms).sum(axis=1)
                                                  for i in range(0, rows.shape[0], step)])
        return ones

    @property
    def by_reported_ones(self) -> bool:
        """True when :meth:`expected_gain` works from each transcript's number of reported ones: the central
        observer, every party on the same pure mechanism, a gain with at most ``COUNT_STEPS_MAX`` steps over
        the count (majority, AND, OR, threshold; :mod:`mpdp.protocols.rules.count_gain`): one recurrence per step
        and call, ~linear in k, whatever the number of transcripts."""
        return self._count_epsilon is not None

    @property
    def by_counts(self) -> bool:
        """True when :meth:`expected_gain` computes one posterior per distinct symbol count vector of a call
        (the central observer, every party with the same mechanism), not one per transcript."""
        return self.observer is None and self._identical and self.k > 0

    @property
    def parity_alpha(self) -> float | None:
        """alpha of a gain of parity form ``alpha (-1)^s`` plus a constant (XOR): :meth:`decide` then takes
        the sign of a product of the parties' posterior differences, O(k) per transcript instead of the
        O(k^2) posterior (:mod:`mpdp.protocols.decision.parity`); None for any other gain."""
        form = count_parity_form(self.gain)
        return None if form is None or form[1] != 0.0 else form[0]

    def _gain_by_counts(self, s: NDArray[np.integer[Any]]) -> NDArray[np.float64]:
        """:meth:`expected_gain` of the central observer when every party has the same mechanism: the
        posterior of a transcript depends only on how often each symbol occurs in it (the Poisson-binomial
        is symmetric in its parties), so it is computed once per distinct symbol count vector of the round
        (a few dozen around the mean among many repetitions) instead of once per transcript."""
        row = self._posterior[0]
        counts = np.stack([(s == a).sum(axis=1) for a in range(row.size)], axis=1)  # (n, |alphabet|)
        distinct, inverse = np.unique(counts, axis=0, return_inverse=True)
        p = np.stack([np.repeat(row, c) for c in distinct])  # (m, k): P(x = 1 | symbol), symbols grouped
        gain: NDArray[np.float64] = (count_posterior(p) @ self.gain)[inverse.reshape(-1)]
        return gain

    def _own_bits(self, n: int, own_bits: NDArray[np.integer[Any]] | int | None) -> NDArray[np.int64]:
        if own_bits is None:
            raise ParameterError("own_bits", None, f"party {self.observer}'s own bit per transcript")
        bits = np.broadcast_to(np.asarray(own_bits), (n,)).astype(np.int64)
        if not np.isin(bits, (0, 1)).all():
            raise ParameterError("own_bits", bits, "0 or 1")
        return bits

    @property
    def randomized(self) -> bool:
        """False: the average rule is deterministic (an argmax)."""
        return False

    def probabilities(self, symbols: NDArray[np.integer[Any]], own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.float64]:
        """P(decide y | transcript): float64 (n_transcripts, |Y|), one-hot at :meth:`decide`'s output."""
        decisions = self.decide(symbols, own_bits=own_bits)
        out = np.zeros((decisions.size, self.gain.shape[1]))
        out[np.arange(decisions.size), decisions] = 1.0
        return out

    def decide(self, symbols: NDArray[np.integer[Any]], rng: np.random.Generator | None = None,
               own_bits: NDArray[np.integer[Any]] | int | None = None) -> NDArray[np.int64]:
        """The decision for each transcript: int64 array of shape (n_transcripts,).

        ``rng`` is accepted for the common rule interface and unused (the rule is deterministic). Ties
        (within ``TIE_TOLERANCE``) go to the smallest y (any maximizer is optimal, 000 §5). A gain of
        parity form (XOR) is decided by the sign of the product of the parties' posterior differences
        (:mod:`mpdp.protocols.decision.parity`): the sum cancels below the tolerance at large k."""
        parity = self.parity_alpha
        if parity is None:
            return argmax_decision(self.expected_gain(symbols, own_bits))
        s = check_symbols(symbols, self.mechanisms)
        signs = np.sign(1.0 - 2.0 * self._posterior[np.arange(self.k), s])  # sgn P(x_i=0|.) - P(x_i=1|.)
        alpha = np.full(s.shape[0], parity)
        if self.observer is not None:
            bits = self._own_bits(s.shape[0], own_bits)
            signs = np.delete(signs, self.observer, axis=1)
            alpha = np.where(bits == 1, -alpha, alpha)  # (-1)^{s' + b}
        decided: NDArray[np.int64] = (alpha * np.prod(signs, axis=1) > 0).astype(np.int64)
        return decided

    def to_json(self) -> str:
        """JSON: ``{"format": "mpdp.posterior-rule", "version": 1, "observer", "mechanisms", "gain"}``."""
        return json.dumps({
            "format": "mpdp.posterior-rule", "version": 1, "observer": self.observer,
            "mechanisms": [{"epsilon": "inf" if np.isinf(m.epsilon) else m.epsilon, "delta": m.delta,
                            "four_output": m.four_output} for m in self.mechanisms],
            "gain": self.gain.tolist()}, allow_nan=False)

    @classmethod
    def from_json(cls, text: str | dict[str, Any]) -> SymmetricAverageRule:
        """Rebuild from :meth:`to_json`. Raises ParameterError on another document."""
        data = json.loads(text) if isinstance(text, str) else text
        if not isinstance(data, dict) or data.get("format") != "mpdp.posterior-rule":
            raise ParameterError("rule JSON format", None, "'mpdp.posterior-rule' version 1")
        mechs = tuple(RandomizedResponse(float(m["epsilon"]), float(m["delta"]), bool(m["four_output"]))
                      for m in data["mechanisms"])
        return cls(mechs, np.asarray(data["gain"], dtype=np.float64), data["observer"])


def observer_average_rule(
    mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, measure: NDArray[np.float64],
    observer: int | None = None,
) -> SymmetricAverageRule:
    """Build the central observer's optimal average-case rule for a symmetric function.

    Args:
        mechanisms: the participating parties' mechanisms (k of them).
        function: a symmetric function (``count_values(k)`` is not None).
        measure: the accuracy measure w, float64 of shape (|Y|, |Y|) with |Y| = function.output_size(k).
        observer: None (central observer) or the deciding party (002 eq. (2)).

    Raises:
        ParameterError: a function that is not symmetric, or w of the wrong shape.
    """
    k = len(mechanisms)
    g = function.count_values(k)
    if g is None:
        raise ParameterError("function", function.name, "a symmetric function for this engine")
    w = np.asarray(measure, dtype=np.float64)
    size = function.output_size(k)
    if w.shape != (size, size):
        raise ParameterError("measure shape", w.shape, f"({size}, {size}) for {function.name}")
    return SymmetricAverageRule(tuple(mechanisms), w[g], observer)

