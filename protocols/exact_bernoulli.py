"""Exact Bernoulli draws from a seeded ``numpy.random.Generator``: a simulation's noise has the
distribution of a deployment's (:mod:`mpdp.protocols.secure`) at every probability.

``rng.random() < p`` is wrong for small p: ``rng.random()`` is a multiple of 2^-53, so every
p < 2^-53 = 1.1e-16 comes out as 2^-53 (randomized response at epsilon 36.7 flipped 1.93 times too often,
at epsilon 40 26 times). Here a draw compares a uniform U in [0, 1), read 53 bits at a time, with the
float p, exactly: with ``c = floor(U 2^53)`` (the integer ``rng.random()`` is made of) and
``t = floor(p 2^53)``, c < t means U < p and c > t means U > p; only when c = t (probability 2^-53)
are the next 53 bits of U compared with those of p, ``p 2^53 - t`` (exact in float64). A float has at
most 1074 fractional bits, so at most 21 rounds are ever needed. P(draw is True) = p exactly, and the
first 53 bits are the very draws of ``rng.random(shape)``, so a simulation's seeded stream is
unchanged wherever the old comparison was right.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mpdp.protocols.errors import ParameterError

__all__ = ["exact_bernoulli"]

_SCALE = 53  # bits of one rng.random() draw


def exact_bernoulli(p: ArrayLike, rng: np.random.Generator) -> NDArray[np.bool_]:
    """Independent Bernoulli(p) draws, exact for every float p in [0, 1], one per entry of ``p``.

    Args:
        p: float64 array of probabilities, any shape.
        rng: the generator (its first draw is ``rng.random(p.shape)``).

    Returns:
        bool array of the shape of ``p``.

    Raises:
        ParameterError: an entry of ``p`` outside [0, 1], or NaN.
    """
    prob = np.asarray(p, dtype=np.float64)
    if not ((prob >= 0.0) & (prob <= 1.0)).all():
        bad = prob[~((prob >= 0.0) & (prob <= 1.0))].flat[0]
        raise ParameterError("p", float(bad), "probabilities in [0, 1]")
    out = np.zeros(prob.shape, dtype=np.bool_)
    index = np.arange(prob.size)
    rest = prob.ravel().copy()
    draws = np.ldexp(rng.random(prob.shape).ravel(), _SCALE)  # integers 0 .. 2^53 - 1, exact
    while True:
        scaled = np.ldexp(rest, _SCALE)
        top = np.floor(scaled)
        out.flat[index[draws < top]] = True
        tie = (draws == top) & (scaled > top)  # U and p agree on these 53 bits and p has more
        if not tie.any():
            return out
        index, rest = index[tie], (scaled - top)[tie]
        draws = np.ldexp(rng.random(index.size), _SCALE)
