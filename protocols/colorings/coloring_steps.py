"""The one-edge step of an (epsilon, delta)-DP randomized coloring, and its closed-form iterates.

For a binary mechanism (001 §II, eq. (1)), with a = e^epsilon, neighbours d ~ d' must satisfy
R_d <= a R_d' + delta and (1 - R_d') <= a (1 - R_d) + delta, and the same with d and d' swapped.
Both inequalities bounding R_d from above combine into one increasing, concave map::

    R_d <= step(R_d'),    step(t) = min(1, a t + delta, (t + a - 1 + delta) / a),

and an edge is (epsilon, delta)-DP iff R_d <= step(R_d') and R_d' <= step(R_d). The same holds for
the probability of *any* one color, so along a path of same-colored vertices the probability of the
true color can grow at most by ``step`` per edge. ``step(t) >= t``: it is a "distance" on [0, 1].

``step`` has two affine regimes, split at the transition point theta = (1 - delta) / (a + 1):

* initial regime (t <= theta): t -> a t + delta, i.e. (t + s) grows by the factor a;
* terminal regime (t >= theta): u = 1 - t -> (u - delta) / a, i.e. (u + s) shrinks by the factor a;

with s = delta / (a - 1). These are the two behaviours of Theorem 4 of 001 (the recurrences of its proof);
an orbit t, step(t), step^2(t), ... spends its first ``regime_one_steps(t)`` steps in the initial regime
and the rest in the terminal one. All formulas use ``expm1``/``log1p`` so that epsilon = 0, tiny
epsilon, epsilon = 1000 and epsilon = inf are exact (no overflow, NaN or warning).

epsilon = inf imposes no constraint (step = 1); epsilon = 0 gives step(t) = min(1, t + delta) (so does
epsilon < 2^-60, where e^eps rounds to 1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit

from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = ["ColoringStep"]

_MAX_EXPONENT = 700.0
_TINY_EPSILON = 2.0**-60  # exp(700) ~ 1e304: below float64 overflow
_CAPPED_EXPONENT = 1e4  # e^-1e4 = 0 and |log t| <= 745 for t > 0: a larger n eps changes nothing


def _times(n: NDArray[np.float64], epsilon: float) -> NDArray[np.float64]:
    """n * epsilon for n >= 0, capped near _CAPPED_EXPONENT so that eps = 1e308 cannot overflow."""
    return np.minimum(n, _CAPPED_EXPONENT / epsilon) * epsilon


@dataclass(frozen=True, slots=True)
class ColoringStep:
    """The map ``step`` of one edge for privacy level (epsilon, delta), with closed-form iterates.

    Args:
        epsilon: 0 <= epsilon <= inf (nats).
        delta: 0 <= delta < 1.

    Raises:
        ParameterError: epsilon < 0 or NaN, delta outside [0, 1).
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        eps = check_epsilon(self.epsilon)
        # below 2^-60, e^eps == 1 in float64 and the step moves by less than eps per unit: use 0
        object.__setattr__(self, "epsilon", 0.0 if eps < _TINY_EPSILON else eps)
        object.__setattr__(self, "delta", check_delta(self.delta))

    @property
    def theta(self) -> float:
        """The transition point (1 - delta) / (e^eps + 1) between the two regimes of Theorem 4."""
        return (1.0 - self.delta) * float(expit(-self.epsilon))

    @property
    def shift(self) -> float:
        """s = delta / (e^eps - 1), the fixed-point offset of both affine regimes (inf at eps = 0)."""
        if self.epsilon == 0.0:
            return math.inf
        return self.delta * math.exp(-self.epsilon) / -math.expm1(-self.epsilon)

    @property
    def is_identity(self) -> bool:
        """True for epsilon = delta = 0: the step is the identity (perfect privacy)."""
        return self.epsilon == 0.0 and self.delta == 0.0

    def __call__(self, t: NDArray[np.float64] | float) -> NDArray[np.float64]:
        """step(t) for probabilities t in [0, 1]; float64 array of t's shape."""
        return self.iterate(t, 1)

    def regime_one_steps(self, t: NDArray[np.float64] | float) -> NDArray[np.float64]:
        """The number m(t) of steps of the orbit of t taken in the initial regime.

        m(t) = 0 for t >= theta, else ceil(log((theta + s) / (t + s)) / eps); inf where the orbit never
        leaves the initial regime (t = 0 with delta = 0, or the identity step). float64 array."""
        t = np.asarray(t, dtype=np.float64)
        theta, eps, delta = self.theta, self.epsilon, self.delta
        below = (t < theta) | (t == 0.0)  # t = 0 < theta always; theta underflows for eps > 745
        if not below.any():
            return np.zeros_like(t)
        if math.isinf(eps):
            return np.where(below, 1.0, 0.0)
        if eps == 0.0:  # t -> t + delta in both regimes
            if delta == 0.0:
                return np.where(below, np.inf, 0.0)
            with np.errstate(over="ignore"):  # a subnormal delta: practically never leaves
                return np.where(below, np.ceil((theta - t) / delta), 0.0)
        if delta == 0.0:  # s = 0: log(theta / t); the orbit of 0 stays at 0
            stuck = t == 0.0
            log_theta = math.log(theta) if theta > 0.0 else 0.0
            log_ratio = log_theta - np.log(np.where(stuck | ~below, 1.0, t))
        else:  # at t = 0, (theta - t)/(t + s) = (1 - delta)/delta * tanh(eps/2), s may underflow
            stuck = np.zeros(t.shape, dtype=bool)
            at_zero = (1.0 - delta) / delta * math.tanh(eps / 2.0)
            ratio = np.where(t == 0.0, at_zero, (theta - t) / np.maximum(t + self.shift, 1e-300))
            log_ratio = np.log1p(np.maximum(ratio, 0.0))
        with np.errstate(over="ignore"):  # subnormal eps: inf steps, i.e. practically never
            steps = np.maximum(np.ceil(log_ratio / eps), 1.0)
        return np.where(below, np.where(stuck, np.inf, steps), 0.0)

    def initial(self, t: NDArray[np.float64] | float, n: NDArray[np.float64] | NDArray[np.int64] | int) -> NDArray[np.float64]:
        """n steps of the initial regime: a^n (t + s) - s (t + n delta at eps = 0). Valid for
        n <= regime_one_steps(t) (then <= (a + delta)/(a + 1) <= 1); float64 array."""
        t = np.asarray(t, dtype=np.float64)
        n = np.asarray(n, dtype=np.float64)
        if self.epsilon == 0.0:
            return t + n * self.delta
        if math.isinf(self.epsilon):
            return np.where(n > 0, 1.0, t)
        # a^n t + delta (a^n - 1)/(a - 1), written so that nothing overflows at eps = 1000
        # (values past 1 are capped anyway) and tiny eps keeps full precision
        # a^n t in log space: t may be as small as e^-eps (theta), below e^-_MAX_EXPONENT for eps > 700
        eps = self.epsilon
        positive = t > 0.0
        with np.errstate(divide="ignore"):
            log_t = np.log(np.where(positive, t, 1.0))
        grown = np.where(positive, np.exp(np.minimum(log_t + _times(n, eps), 1.0)), 0.0)
        geometric = (np.exp(np.minimum(_times(np.maximum(n - 1.0, 0.0), eps), _MAX_EXPONENT))
                     * np.expm1(-_times(n, eps)) / math.expm1(-eps))
        return np.where(n > 0, np.minimum(grown + self.delta * geometric, 1.0), t)

    def terminal(self, t: NDArray[np.float64] | float, n: NDArray[np.float64] | NDArray[np.int64] | int) -> NDArray[np.float64]:
        """n steps of the terminal regime: 1 - [a^-n (1 - t + s) - s], capped at 1 (1 - (1 - t - n delta)
        at eps = 0); float64 array."""
        t = np.asarray(t, dtype=np.float64)
        n = np.asarray(n, dtype=np.float64)
        u = 1.0 - t
        if self.epsilon == 0.0:
            return np.minimum(1.0 - (u - n * self.delta), 1.0)
        if math.isinf(self.epsilon):
            return np.where(n > 0, 1.0, t)
        return np.minimum(1.0 - (u + (u + self.shift) * np.expm1(-_times(n, self.epsilon))), 1.0)

    def iterate(self, t: NDArray[np.float64] | float, n: NDArray[np.float64] | NDArray[np.int64] | int) -> NDArray[np.float64]:
        """step^n(t), elementwise (broadcast), in closed form: ``initial`` for the first
        min(n, m(t)) steps, then ``terminal``. float64 array with values in [t, 1]."""
        t, n = np.broadcast_arrays(np.asarray(t, dtype=np.float64), np.asarray(n, dtype=np.float64))
        if self.is_identity:
            return t.copy()
        first = np.minimum(n, self.regime_one_steps(t))
        return self.terminal(self.initial(t, first), n - first)

    def abel(self, t: NDArray[np.float64]) -> NDArray[np.float64]:
        """An Abel function h of step: h(step(t)) = h(t) + 1 for t < 1 (t >= 0 finite).

        So step^n(t) = h^-1(h(t) + n), and the smallest of step^(n_i)(t_i) is the one with the
        smallest h(t_i) + n_i: this turns Theorem 2's propagation into a shortest-path problem.
        h = 0 at theta, -inf where the orbit stays at 0 (delta = 0), +inf at 1 when delta = 0.
        Not defined for the identity step (check ``is_identity``). float64 array.
        """
        t = np.asarray(t, dtype=np.float64)
        if self.epsilon == 0.0:
            with np.errstate(over="ignore"):
                return (t - self.theta) / self.delta
        if math.isinf(self.epsilon):
            return np.where(t < 1.0, 0.0, np.inf)
        m = self.regime_one_steps(t)
        finite = np.isfinite(m)
        m0 = np.where(finite, m, 0.0)
        x = np.where(finite, self.initial(t, m0), self.theta)  # first point of the orbit >= theta
        ratio = (self.theta - x) / (1.0 - self.theta + self.shift)  # in (-1, 0]
        with np.errstate(divide="ignore", over="ignore"):
            h = -np.log1p(np.maximum(ratio, -1.0)) / self.epsilon - m0
        return np.where(finite, h, -np.inf)
