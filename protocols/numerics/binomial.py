"""The logarithm of the binomial probability mass function, accurate for n up to 10^7 and beyond.

The privacy loss of k-fold randomized response is ``(k - 2l) epsilon`` where ``l ~ Binomial(k, q)``
counts the flipped answers, ``q = 1 / (1 + e^epsilon)`` (000, proof of Theorem 3.3). The optimal
composition needs ``log P(l)`` to an *absolute* accuracy of ~1e-14 wherever ``P(l)`` is not
negligible. ``gammaln(k + 1) - gammaln(l + 1) - gammaln(k - l + 1)`` cannot give it at large k
(``gammaln(1e6 + 1) ~ 1.3e7`` carries an absolute error of ~2e-9), so we use Loader's saddle-point
form (C. Loader, *Fast and accurate computation of binomial probabilities*, 2000; the algorithm of
R's ``dbinom``)::

    log P(l) = stirlerr(n) - stirlerr(l) - stirlerr(n - l) - bd0(l, n q) - bd0(n - l, n p)
               + 1/2 log(n / (2 pi l (n - l)))

with ``stirlerr(m) = log m! - log(sqrt(2 pi m) (m/e)^m)`` and ``bd0(x, m) = x log(x/m) + m - x``
(a series where x is near m). Every term is small or computed without cancellation.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

__all__ = ["log_binomial_pmf"]

_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)
_SERIES_TERMS = 12  # |v| < 0.1: each term is < 1/100 of the previous one


def _stirlerr(m: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log m! - log(sqrt(2 pi m) (m/e)^m)`` for float m >= 1 (shape preserved)."""
    # imported here: a party's worker imports this module (its ledger's composition) without calling it
    # unless the party has a budget, and importing scipy costs each worker seconds of start-up
    from scipy.special import gammaln

    out = np.empty_like(m)
    small = m <= 15.0
    ms = m[small]
    out[small] = gammaln(ms + 1.0) - (ms + 0.5) * np.log(ms) + ms - _HALF_LOG_2PI
    ml = m[~small]
    mm = ml * ml
    out[~small] = (
        1.0 / 12 - (1.0 / 360 - (1.0 / 1260 - (1.0 / 1680 - (1.0 / 1188) / mm) / mm) / mm) / mm
    ) / ml
    return out


def _bd0(x: NDArray[np.float64], log_m: float) -> NDArray[np.float64]:
    """``x log(x/m) + m - x`` >= 0 for float x > 0 and m = exp(log_m) (m may underflow to 0)."""
    m = math.exp(log_m) if log_m < 709.0 else math.inf
    out = np.empty_like(x)
    near = np.abs(x - m) < 0.1 * (x + m)
    xs = x[near]
    v = (xs - m) / (xs + m)
    s = (xs - m) * v
    term = 2.0 * xs * v
    v2 = v * v
    for j in range(1, _SERIES_TERMS):
        term = term * v2
        s = s + term / (2 * j + 1)
    out[near] = s
    xf = x[~near]
    with np.errstate(over="ignore"):  # log_m ~ -1e308 (q ~ e^-1e308): +inf is the correctly rounded
        out[~near] = xf * (np.log(xf) - log_m) + (m - xf)  # deviance, i.e. probability 0
    return out


def log_binomial_pmf(
    l: NDArray[np.integer[Any]] | NDArray[np.float64], n: int, log_q: float, log_p: float
) -> NDArray[np.float64]:
    """``log P(L = l)`` for ``L ~ Binomial(n, q)``, elementwise.

    Args:
        l: integer-valued array, entries in ``0..n``.
        n: number of trials, >= 1.
        log_q: log of the success probability q (may be -inf for q = 0, or as small as -1e300).
        log_p: log of 1 - q, passed separately so that neither q nor 1 - q is formed by cancellation.

    Returns:
        float64 array of the shape of ``l``; ``-inf`` where the probability is exactly 0.
        Absolute error ~1e-14 * (1 + |log P|).
    """
    l = np.asarray(l, dtype=np.float64)
    out = np.empty_like(l)
    nf = float(n)
    with np.errstate(invalid="ignore"):  # 0 * -inf when q or p is 0
        first = l == 0
        last = l == nf
        out[first] = 0.0 if log_p == 0.0 else nf * log_p
        out[last] = 0.0 if log_q == 0.0 else nf * log_q
    inner = ~(first | last)
    if not inner.any():
        return out
    if math.isinf(log_q) or math.isinf(log_p):  # a degenerate Bernoulli: only 0 or n is possible
        out[inner] = -np.inf
        return out
    li = l[inner]
    log_n = math.log(nf)
    lc = np.array([nf])
    out[inner] = (
        _stirlerr(lc)[0]
        - _stirlerr(li)
        - _stirlerr(nf - li)
        - _bd0(li, log_n + log_q)
        - _bd0(nf - li, log_n + log_p)
        + 0.5 * (log_n - np.log(li) - np.log(nf - li))
        - _HALF_LOG_2PI
    )
    return out
