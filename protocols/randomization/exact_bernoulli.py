"""Exact Bernoulli draws from a seeded ``numpy.random.Generator``: a simulation's noise has the
distribution of a deployment's (:mod:`mpdp.protocols.randomization.secure`) at every probability.

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

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mpdp.protocols.errors import ParameterError

__all__ = ["exact_bernoulli", "exact_bernoulli_constant", "first_bits_bernoulli"]

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
    draws = np.ldexp(rng.random(prob.shape).ravel(), _SCALE)  # integers 0 .. 2^53 - 1, exact
    scaled = np.ldexp(prob.ravel(), _SCALE)
    top = np.floor(scaled)
    out = draws < top
    tie = (draws == top) & (scaled > top)  # U and p agree on these 53 bits and p has more
    _refine(out, np.flatnonzero(tie), (scaled - top)[tie], rng)
    return out.reshape(prob.shape)


def exact_bernoulli_constant(p: float, size: int, rng: np.random.Generator) -> NDArray[np.bool_]:
    """``exact_bernoulli(np.full(size, p), rng)`` for one probability ``p``: the same draws from ``rng``
    and the same result, with the first 53 bits compared in one array operation (a party's hot path:
    its randomized response draws one or a few bits per round, where the general function's bookkeeping
    costs more than the draw).

    Args:
        p: the probability, a float in [0, 1].
        size: the number of draws, >= 0.
        rng: the generator (its first draw is ``rng.random((size,))``).

    Returns:
        bool array of shape (size,).

    Raises:
        ParameterError: ``p`` outside [0, 1], or NaN.
    """
    if not 0.0 <= p <= 1.0:
        raise ParameterError("p", float(p), "probabilities in [0, 1]")
    scaled = math.ldexp(p, _SCALE)
    top = math.floor(scaled)
    draws = np.ldexp(rng.random((size,)), _SCALE)
    out = draws < top
    if scaled > top:  # p has bits beyond the 53rd: a draw equal to top is decided by the next 53 bits
        tie = np.flatnonzero(draws == top)
        _refine(out, tie, np.full(tie.size, scaled - top), rng)
    return out


def first_bits_bernoulli(p: float, uniforms: Sequence[float]) -> list[bool] | None:
    """``exact_bernoulli_constant(p, len(uniforms), rng)`` when ``uniforms`` are the values of
    ``rng.random(len(uniforms))``, decided on their 53 bits alone: None when a draw ties with ``p``'s first
    53 bits and ``p`` has more (the exact draw then reads more of ``rng``: the caller draws from it instead).
    Same checks as :func:`exact_bernoulli_constant` (``p`` in [0, 1])."""
    if not 0.0 <= p <= 1.0:
        raise ParameterError("p", float(p), "probabilities in [0, 1]")
    scaled = math.ldexp(p, _SCALE)
    top = math.floor(scaled)
    draws = [math.ldexp(u, _SCALE) for u in uniforms]  # integers 0 .. 2^53 - 1, exact
    if scaled > top and top in draws:
        return None
    return [draw < top for draw in draws]


def _refine(out: NDArray[np.bool_], index: NDArray[np.intp], rest: NDArray[np.float64],
            rng: np.random.Generator) -> None:
    """Decide the tied draws ``out[index]`` (1-d ``out``, in place) with the next 53 bits of U, against
    ``rest``, the bits of their probabilities not compared yet (each in [0, 1)), until no tie is left."""
    while index.size:
        draws = np.ldexp(rng.random(index.size), _SCALE)
        scaled = np.ldexp(rest, _SCALE)
        top = np.floor(scaled)
        out[index[draws < top]] = True
        tie = (draws == top) & (scaled > top)
        index, rest = index[tie], (scaled - top)[tie]
