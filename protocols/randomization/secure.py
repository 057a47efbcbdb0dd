"""Deployment-mode sampling: randomized response from fair coins of the operating system's CSPRNG.

A simulated party draws from a seeded ``numpy.random.Generator`` (reproducible, not secret). A deployed
party must not: its noise is the only thing that protects its bit. Here every Bernoulli(p) is decided
exactly: a float p is the dyadic rational m / 2^e, and ``secrets.randbelow(2^e) < m`` has probability
exactly m / 2^e (no ``u < p`` on rounded floats; OpenDP's practice). The flip probability
q = 1 / (1 + e^eps) is the float ``truth_and_flip(eps)[1]`` = e^-eps / (1 + e^-eps), so the released
symbols follow exactly the randomized response with that q (a simulation draws the same q exactly:
:mod:`mpdp.protocols.randomization.exact_bernoulli`): its privacy level is log((1 - q) / q), equal to eps to within
float rounding for eps <= 708, and +inf (the bit is always reported) where q underflows to 0 (eps > 745).
"""

from __future__ import annotations

import math
import secrets
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, truth_and_flip

__all__ = ["MODES", "realized_epsilon", "rng_mode", "sample_secure", "secure_bernoulli", "secure_choice"]

#: How a run's parties draw their noise, as recorded in its files: a seeded simulation, or a deployment.
MODES: tuple[str, str] = ("simulation (seeded generators)", "deployment (CSPRNG)")


def rng_mode(secure: bool) -> str:
    """The recorded mode of a run: ``MODES[1]`` when ``secure`` (deployment mode), else ``MODES[0]``."""
    return MODES[int(secure)]


def secure_bernoulli(p: float) -> bool:
    """One exact Bernoulli(p) draw from the OS CSPRNG; ``p`` a float in [0, 1].

    Raises:
        ParameterError: p outside [0, 1] or NaN.
    """
    if not (0.0 <= p <= 1.0):
        raise ParameterError("p", p, "a probability in [0, 1]")
    exact = Fraction(p)  # numerator / 2^e, exactly the float
    return secrets.randbelow(exact.denominator) < exact.numerator


def sample_secure(mechanism: RandomizedResponse, bit: int, size: int) -> NDArray[np.uint8]:
    """Privatize ``bit`` ``size`` times with the CSPRNG; same output as ``RandomizedResponse.sample``.

    Returns:
        uint8 array of shape (size,), symbols in 0..m-1 (see :mod:`mpdp.protocols.randomization.mechanisms`).

    Raises:
        ParameterError: bit not 0/1 or size < 0.
    """
    if bit not in (0, 1):
        raise ParameterError("bit", bit, "0 or 1")
    if size < 0:
        raise ParameterError("size", size, "an integer >= 0")
    q = truth_and_flip(mechanism.epsilon)[1]
    out = np.empty(size, dtype=np.uint8)
    for r in range(size):
        if mechanism.four_output and mechanism.delta > 0 and secure_bernoulli(mechanism.delta):
            out[r] = 3 * bit
            continue
        reported = 1 - bit if secure_bernoulli(q) else bit
        out[r] = 1 + reported if mechanism.four_output else reported
    return out


def secure_choice(probabilities: NDArray[np.float64]) -> NDArray[np.int64]:
    """One draw of y per row of a randomized decision rule's Q (002 eq. (6)) from the OS CSPRNG.

    y is chosen by successive Bernoulli draws of the conditional probabilities
    Q[y] / (Q[y] + ... + Q[|Y|-1]), each exact for its float (:func:`secure_bernoulli`). Rows whose
    largest entry is within 1e-12 of one are decided without randomness (as ``TableRule.decide``).

    Args:
        probabilities: float64 (n, |Y|), rows summing to one.

    Returns:
        int64 array of shape (n,).

    Raises:
        ParameterError: not a 2-D array of probabilities.
    """
    q = np.asarray(probabilities, dtype=np.float64)
    if q.ndim != 2 or q.shape[1] < 1 or not np.isfinite(q).all() or (q < 0).any():
        raise ParameterError("probabilities", q.shape, "a finite non-negative (n, |Y|) array")
    out: NDArray[np.int64] = q.argmax(axis=1).astype(np.int64)
    for r in np.flatnonzero(q.max(axis=1) < 1.0 - 1e-12):
        remaining = float(q[r].sum())
        for y in range(q.shape[1] - 1):
            if remaining <= 0.0 or secure_bernoulli(min(1.0, float(q[r, y]) / remaining)):
                out[r] = y
                break
            remaining -= float(q[r, y])
        else:
            out[r] = q.shape[1] - 1
    return out


def realized_epsilon(mechanism: RandomizedResponse) -> float:
    """The privacy level the secure sampler actually realizes: log((1 - q) / q) for the float q."""
    q = Fraction(truth_and_flip(mechanism.epsilon)[1])
    return math.inf if q == 0 else math.log((1 - q) / q)
