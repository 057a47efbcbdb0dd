"""Randomized response, the optimal local mechanism of every party.

A party's mechanism is a channel matrix ``M`` of shape ``(2, m)``: row = the true bit, column = the
released symbol, ``M[x, s] = P(symbol s | bit x)``.

* Pure epsilon (two symbols), 002 eq. (9) / 000 §5.1 with delta = 0::

      M = [[p, 1 - p],
           [1 - p, p]],   p = e^eps / (1 + e^eps)

* (epsilon, delta), the four-output randomized response of 000 §5.1 (symbols 0..3; symbols 0 and 3
  reveal the bit, each with probability delta)::

      x = 0: (delta, (1 - delta) p, (1 - delta)(1 - p), 0)
      x = 1: (0, (1 - delta)(1 - p), (1 - delta) p, delta)

Theorem 3.1 of 002 (Theorem 5.x of 000): this mechanism is optimal for every party, every function,
every accuracy measure and both notions of accuracy.

All probabilities come from :func:`truth_and_flip`, in the forms 1 / (1 + e^-eps) and
e^-eps / (1 + e^-eps): epsilon = 0 gives exactly 1/2, epsilon = inf exactly 1 and 0, and the flip
probability keeps its subnormal value up to epsilon ~ 745 (``expit(-710)`` is 0.0, e^-710 / (1 + e^-710)
is 4.476e-309), with no overflow or warning anywhere. A simulation draws every Bernoulli exactly
(:func:`mpdp.protocols.randomization.exact_bernoulli.exact_bernoulli`), so it follows the same distribution as a
deployment (:mod:`mpdp.protocols.randomization.secure`) at every epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numbers import refuse_bool
from mpdp.protocols.randomization.exact_bernoulli import exact_bernoulli, exact_bernoulli_constant, first_bits_bernoulli

__all__ = [
    "RandomizedResponse",
    "check_delta",
    "check_epsilon",
    "posterior_table",
    "sample_protocol",
    "truth_and_flip",
]


def truth_and_flip(epsilon: float) -> tuple[float, float]:
    """(p, q) of randomized response at ``epsilon`` >= 0 (inf allowed): p = 1 / (1 + e^-eps) the
    probability of telling the truth, q = e^-eps / (1 + e^-eps) of flipping (002 eq. (9)). Both forms
    take e^-eps <= 1, so nothing overflows, and q is accurate to its last bit, subnormal included."""
    t = math.exp(-epsilon)
    return 1.0 / (1.0 + t), t / (1.0 + t)


def check_epsilon(epsilon: float | str, name: str = "epsilon") -> float:
    """Return ``float(epsilon)`` (a number or its text; -0 becomes 0) or raise :class:`ParameterError`
    unless ``0 <= epsilon <= inf`` (a bool is refused)."""
    refuse_bool(name, epsilon, "a number >= 0 (inf allowed)")
    try:
        value = float(epsilon)
    except (TypeError, ValueError):
        raise ParameterError(name, epsilon, "a number >= 0 (inf allowed)") from None
    if math.isnan(value) or value < 0:
        raise ParameterError(name, epsilon, "a number >= 0 (inf allowed)")
    return value + 0.0  # -0.0 + 0.0 is +0.0: a "-0" typed is echoed as 0


def check_delta(delta: float | str, name: str = "delta") -> float:
    """Return ``float(delta)`` (a number or its text; -0 becomes 0) or raise :class:`ParameterError`
    unless ``0 <= delta < 1`` (a bool is refused)."""
    refuse_bool(name, delta, "a number in [0, 1)")
    try:
        value = float(delta)
    except (TypeError, ValueError):
        raise ParameterError(name, delta, "a number in [0, 1)") from None
    if not (0.0 <= value < 1.0):  # also rejects NaN
        raise ParameterError(name, delta, "a number in [0, 1)")
    return value + 0.0


@dataclass(frozen=True, slots=True)
class RandomizedResponse:
    """One party's randomized response with privacy level (epsilon, delta).

    Args:
        epsilon: privacy parameter, ``0 <= epsilon <= inf`` (nats).
        delta: ``0 <= delta < 1``; the probability that the bit is revealed outright.
        four_output: use the four-symbol mechanism; defaults to ``delta > 0``. With delta = 0 the
            four-output mechanism never emits symbols 0 or 3 and is equivalent to the pure one.

    Raises:
        ParameterError: epsilon < 0 or NaN, delta outside [0, 1), or ``four_output=False`` with
            delta > 0 (the two-symbol mechanism cannot carry delta).
    """

    epsilon: float
    delta: float = 0.0
    four_output: bool | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        object.__setattr__(self, "delta", check_delta(self.delta))
        four = self.delta > 0 if self.four_output is None else bool(self.four_output)
        if not four and self.delta > 0:
            raise ParameterError("four_output", False, "True when delta > 0")
        object.__setattr__(self, "four_output", four)

    @property
    def num_symbols(self) -> int:
        """m, the number of output symbols: 2 (pure) or 4 (four-output)."""
        return 4 if self.four_output else 2

    @property
    def p_truth(self) -> float:
        """p = e^eps / (1 + e^eps): probability of the symbol that points to the true bit, given
        the bit is not revealed outright."""
        return truth_and_flip(self.epsilon)[0]

    @property
    def channel(self) -> NDArray[np.float64]:
        """The channel matrix ``M``, float64 of shape (2, m); rows sum to 1."""
        p, q = truth_and_flip(self.epsilon)  # q = 1 - p without cancellation
        if not self.four_output:
            return np.array([[p, q], [q, p]])
        d, r = self.delta, 1.0 - self.delta
        return np.array([[d, r * p, r * q, 0.0], [0.0, r * q, r * p, d]])

    @property
    def posterior_one(self) -> NDArray[np.float64]:
        """P(x = 1 | symbol) under the uniform prior, float64 of shape (m,).

        ``M[1, s] / (M[0, s] + M[1, s])``: 1 - p and p for the pure mechanism; 0, 1 - p, p, 1 for the
        four-output one. This is what the observer's decision rules multiply over parties."""
        p, q = truth_and_flip(self.epsilon)
        if not self.four_output:
            return np.array([q, p])
        return np.array([0.0, q, p, 1.0])

    def sample(self, bit: int, size: int, rng: np.random.Generator) -> NDArray[np.uint8]:
        """Privatize one bit ``size`` times, independently.

        Args:
            bit: the true bit, 0 or 1.
            size: number of independent releases (repetitions), >= 0.
            rng: the generator to draw from (simulation mode; a deployed party uses
                :mod:`mpdp.protocols.randomization.secure`).

        Returns:
            uint8 array of shape (size,) with symbols in ``0..m-1``: exactly
            ``sample_protocol([self], [bit], size, rng)[:, 0]``, drawing the same numbers from ``rng`` (the
            flips, then the reveals), with a few array operations instead of that function's k-party ones
            (a simulated party draws once per round: this is its hot path).

        Raises:
            ParameterError: a bit other than 0 or 1, or size < 0.
        """
        if bit not in (0, 1):
            raise ParameterError("bits", bit, "values 0 or 1")
        if size < 0:
            raise ParameterError("repetitions", size, "an integer >= 0")
        flip = exact_bernoulli_constant(truth_and_flip(self.epsilon)[1], size, rng)
        reported = flip.view(np.uint8) ^ np.uint8(bit)
        revealed = exact_bernoulli_constant(self.delta, size, rng)  # drawn for pure parties too, as k parties do
        if not self.four_output:
            return reported
        return np.where(revealed, np.uint8(3 * bit), reported + np.uint8(1))

    def sample_from_uniforms(self, bit: int, uniforms: Sequence[float]) -> NDArray[np.uint8] | None:
        """``sample(bit, n, rng)`` for n = ``len(uniforms) // 2`` when ``uniforms`` are the first 2n values of
        ``rng.random()``: the same symbols (flips from the first n, reveals from the next n), built without
        ``rng`` (:mod:`mpdp.parties.rounds.round_uniforms` gives a simulated party's uniforms). None when a
        draw needs more than its 53 bits (:func:`first_bits_bernoulli`, probability ~2^-53 a draw): ``sample``
        then.

        Raises:
            ParameterError: a bit other than 0 or 1.
        """
        if bit not in (0, 1):
            raise ParameterError("bits", bit, "values 0 or 1")
        size = len(uniforms) // 2
        flips = first_bits_bernoulli(truth_and_flip(self.epsilon)[1], uniforms[:size])
        reveals = first_bits_bernoulli(self.delta, uniforms[size:2 * size])
        if flips is None or reveals is None:
            return None
        if not self.four_output:
            return np.array([flip ^ bit for flip in flips], dtype=np.uint8)
        return np.array([3 * bit if reveal else (flip ^ bit) + 1 for flip, reveal in zip(flips, reveals, strict=True)],
                        dtype=np.uint8)


def posterior_table(mechanisms: Sequence[RandomizedResponse]) -> NDArray[np.float64]:
    """Stack the parties' ``posterior_one`` into a float64 table of shape (k, 4).

    Pure parties use columns 0 and 1 only (the rest is NaN and never indexed by a valid symbol)."""
    table = np.full((len(mechanisms), 4), np.nan)
    for i, mech in enumerate(mechanisms):
        post = mech.posterior_one
        table[i, : post.size] = post
    return table


def sample_protocol(
    mechanisms: Sequence[RandomizedResponse],
    bits: ArrayLike,
    repetitions: int,
    rng: np.random.Generator,
) -> NDArray[np.uint8]:
    """Draw ``repetitions`` independent transcripts of the non-interactive protocol.

    Args:
        mechanisms: the k parties' mechanisms (heterogeneous allowed).
        bits: int array of shape (k,), each 0 or 1.
        repetitions: number of transcripts, >= 0.
        rng: explicit generator.

    Returns:
        uint8 array of shape (repetitions, k): ``out[r, i]`` is party i's symbol in transcript r.

    Raises:
        ParameterError: bits not 0/1, a length mismatch, or repetitions < 0.
    """
    bits = np.asarray(bits)
    if bits.shape != (len(mechanisms),):
        raise ParameterError("bits", bits.shape, f"shape ({len(mechanisms)},), one bit per party")
    if not np.isin(bits, (0, 1)).all():
        raise ParameterError("bits", bits, "values 0 or 1")
    if repetitions < 0:
        raise ParameterError("repetitions", repetitions, "an integer >= 0")
    k = len(mechanisms)
    q = np.array([truth_and_flip(m.epsilon)[1] for m in mechanisms])  # flip probability given not revealed
    delta = np.array([m.delta for m in mechanisms])
    four = np.array([m.four_output for m in mechanisms])
    flip = exact_bernoulli(np.broadcast_to(q, (repetitions, k)), rng)
    reported = np.where(flip, 1 - bits, bits).astype(np.uint8)
    # four-output: revealed -> 0 / 3; otherwise 1 + reported (symbol 1 points to 0, 2 points to 1)
    revealed = exact_bernoulli(np.broadcast_to(delta, (repetitions, k)), rng)
    four_symbols = np.where(revealed, 3 * bits, 1 + reported).astype(np.uint8)
    return np.where(four, four_symbols, reported)
