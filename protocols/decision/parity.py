"""XOR-like decision problems in exact product form: the optimal rule and its accuracy without cancellation.

When the gain difference of a binary f is a function of the parity of x, ``D(x) = w(f(x), 1) - w(f(x), 0) =
beta + alpha (-1)^{|x|}`` (XOR and its complement, for any 2 x 2 measure; a party observer's view too),
the posterior expected difference factorizes over parties (002 §3, Corollary 3.1):

    E[D | tau] = beta + alpha M(tau),   M(tau) = E[(-1)^{|x|} | tau] = prod_i m_i(tau_i),

with ``m_i = P(x_i = 0 | tau_i) - P(x_i = 1 | tau_i)``: ``tanh(eps_i / 2)`` for the symbol 0 and its negative
for 1 (four-output: 1, tanh, -tanh, -1). ``sum_j P(j | c) D(j)`` summed as it stands cancels to nothing once
``prod tanh(eps_i / 2)`` is below ~1e-16 (k = 14 at epsilon 0.1): every transcript ties and the argmax
answers 0. Here M is carried as a sign and a log-magnitude, so the rule is XOR for every k and epsilon.

Its accuracy factorizes too: the rule's +-1 answer ``s(tau) = 1 - 2 d(tau) = -sgn(alpha) prod_i sgn m_i(tau_i)``
has ``E[s | x] = -sgn(alpha) (-1)^{|x|} prod_i mu_i``, ``mu_i = delta_i + (1 - delta_i) tanh(eps_i / 2)``
(the probability that party i's symbol keeps the sign of its bit, minus that it does not), so
``P(d = 1 | x) = (1 - E[s | x]) / 2`` and the XOR accuracy is ``(1 + prod_i mu_i) / 2 >= 1/2`` as computed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import Factor, compositions
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["count_parity_form", "parity_accuracy", "parity_decisions", "parity_form",
           "parity_rule_accuracy_on_input"]

Signed = tuple[NDArray[np.float64], NDArray[np.float64]]  # (sign in {-1, 0, 1}, log |value|)


def _tanh_half(factor: Factor) -> float:
    return math.tanh(factor.mechanism.epsilon / 2.0)


def _log(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(x, dtype=np.float64))


def _posterior_moment(factor: Factor) -> Signed:
    """E[(-1)^{ones among the members} | class c] for every transcript class, as (sign, log |.|)."""
    t = _tanh_half(factor)
    mech, n = factor.mechanism, factor.n
    if factor.singleton:
        if mech.four_output:
            return np.array([1.0, 1.0, -1.0, -1.0]), _log(np.array([1.0, t, t, 1.0]))
        return np.array([1.0, -1.0]), _log(np.array([t, t]))
    if not mech.four_output:
        c = np.arange(n + 1)
        return np.where(c % 2 == 0, 1.0, -1.0), np.full(n + 1, n * float(_log(t)) if n else 0.0)
    comps = compositions(n)
    hidden = comps[:, 1] + comps[:, 2]
    sign = np.where((comps[:, 2] + comps[:, 3]) % 2 == 0, 1.0, -1.0)
    return sign, np.where(hidden == 0, 0.0, hidden * float(_log(t)))


def _kron(parts: Sequence[Signed]) -> Signed:
    sign, log = np.ones(1), np.zeros(1)
    for s, lg in parts:
        sign = np.asarray(np.kron(sign, s), dtype=np.float64)
        log = np.asarray(np.add.outer(log, lg).ravel(), dtype=np.float64)
    return sign, log


def _input_parity(factors: Sequence[Factor]) -> NDArray[np.float64]:
    """(-1)^{|j|} on the view's input grid (class j: the number of ones per factor), float64."""
    parity = np.ones(1)
    for f in factors:
        parity = np.asarray(np.kron(parity, np.where(np.arange(f.n + 1) % 2 == 0, 1.0, -1.0)), dtype=np.float64)
    return parity


def _coefficients(diff: NDArray[np.float64], parity: NDArray[np.float64]) -> tuple[float, float] | None:
    even, odd = diff[parity > 0], diff[parity < 0]
    if even.size == 0 or odd.size == 0 or (even != even[0]).any() or (odd != odd[0]).any() or even[0] == odd[0]:
        return None
    return float(even[0] - odd[0]) / 2.0, float(even[0] + odd[0]) / 2.0


def parity_form(factors: Sequence[Factor], gain: NDArray[np.float64]) -> tuple[float, float] | None:
    """(alpha, beta) with ``gain[j, 1] - gain[j, 0] = beta + alpha (-1)^{|j|}`` on every input class j, or
    None (|Y| != 2, or the difference is not a function of the parity).

    Args:
        factors: the view's likelihood factors; gain: float64 (num_inputs, |Y|)."""
    if gain.shape[1] != 2:
        return None
    return _coefficients(gain[:, 1] - gain[:, 0], _input_parity(factors))


def count_parity_form(gain: NDArray[np.float64]) -> tuple[float, float] | None:
    """:func:`parity_form` for a gain indexed by the number of ones s = 0..k: float64 (k + 1, |Y|)."""
    if gain.shape[1] != 2:
        return None
    return _coefficients(gain[:, 1] - gain[:, 0], np.where(np.arange(gain.shape[0]) % 2 == 0, 1.0, -1.0))


def parity_rule_accuracy_on_input(mechanisms: Sequence[RandomizedResponse], ones: int,
                                  gain_row: NDArray[np.float64], alpha: float) -> float:
    """Accuracy on one input with ``ones`` ones of the parity rule (``beta = 0``): ``gain_row[0] +
    (gain_row[1] - gain_row[0]) P(answer 1 | x)``, ``P(answer 1 | x) = (1 + sgn(alpha) (-1)^ones prod mu_i) / 2``
    (module docstring).

    Args:
        mechanisms: the parties the observer does not know, each with epsilon > 0 (no transcript ties);
            gain_row: float64 (2,), w(f(x), y).

    Raises:
        ParameterError: a party at epsilon 0 (its transcripts tie: sum the classes instead)."""
    log_mu = 0.0
    for mech in mechanisms:
        if mech.epsilon <= 0:
            raise ParameterError("epsilon", mech.epsilon, "> 0 for the parity product form")
        delta = mech.delta if mech.four_output else 0.0
        log_mu += math.log(delta + (1.0 - delta) * math.tanh(mech.epsilon / 2.0))
    answer_one = (1.0 + math.copysign(1.0, alpha) * (-1.0) ** ones * math.exp(log_mu)) / 2.0
    return float(gain_row[0] + (gain_row[1] - gain_row[0]) * answer_one)


def parity_decisions(factors: Sequence[Factor], gain: NDArray[np.float64]) -> NDArray[np.int64] | None:
    """The optimal average-case decisions (002 eq. (5)/(2)) of a parity-form view: 1 iff
    ``beta + alpha M(c) > 0`` (exact ties answer 0, as :func:`mpdp.protocols.decision.engines.average_decisions`),
    int64 (num_classes,); None when the view is not of parity form."""
    form = parity_form(factors, gain)
    if form is None:
        return None
    alpha, beta = form
    sign, log = _kron([_posterior_moment(f) for f in factors])
    if beta == 0.0:
        decisions: NDArray[np.int64] = (np.sign(alpha) * sign > 0).astype(np.int64)
    else:
        decisions = (beta + alpha * sign * np.exp(log) > 0).astype(np.int64)
    return decisions


def parity_accuracy(factors: Sequence[Factor], gain: NDArray[np.float64],
                    table: NDArray[np.int64] | NDArray[np.float64]) -> NDArray[np.float64] | None:
    """Accuracy on every input class of the parity rule (``beta = 0``, every posterior moment non-zero)
    in product form, float64 (num_inputs,); None for any other view or table (the caller sums as usual)."""
    form = parity_form(factors, gain)
    if form is None or form[1] != 0.0 or table.ndim != 1:
        return None
    sign, log = _kron([_posterior_moment(f) for f in factors])
    if (sign == 0).any() or np.isneginf(log).any():
        return None
    if not np.array_equal(table, (np.sign(form[0]) * sign > 0).astype(np.int64)):
        return None
    parity = _input_parity(factors)
    log_mu = 0.0
    for f in factors:
        delta = f.mechanism.delta if f.mechanism.four_output else 0.0
        log_mu += f.n * math.log(delta + (1.0 - delta) * _tanh_half(f))
    expected_s = -np.sign(form[0]) * parity * math.exp(log_mu)  # E[1 - 2 d(tau) | x in class j]
    answer_one = (1.0 - expected_s) / 2.0
    acc: NDArray[np.float64] = gain[:, 0] + (gain[:, 1] - gain[:, 0]) * answer_one
    return acc
