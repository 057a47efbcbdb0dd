"""Finite privacy loss distributions and their hockey-stick divergence, in log space.

A pair of distributions (P, Q) on a finite set (the outputs of a mechanism on neighbouring inputs)
has the privacy loss ``L(y) = log P(y)/Q(y)``. Its hockey-stick divergence is (000, Section 2)::

    delta(eps) = E_{e^eps}(P || Q) = sum_y [P(y) - e^eps Q(y)]_+ = sum_{L_j > eps} (P_j - e^eps P_j e^{-L_j})

so only the support points with positive loss matter for ``eps >= 0``. Between two consecutive loss
values the active set is fixed and ``delta(eps) = A - e^eps B`` is linear in ``e^eps``: the smallest
``eps`` with ``delta(eps) <= delta`` is found *exactly* by locating the piece (a cumulative log-sum-exp
over the support sorted by decreasing loss) and solving ``e^eps = (A - delta) / B`` there. This is
the "exact values between the corner points (k - 2i) epsilon" of Theorem 3.3 of 000.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError

__all__ = ["PrivacyLossDistribution", "log1mexp"]


def log1mexp(x: NDArray[np.float64] | float) -> NDArray[np.float64]:
    """``log(1 - e^x)`` for ``x <= 0``, accurate on both sides of ``-log 2``; ``-inf`` at ``x = 0``.

    Positive x (rounding noise) is clipped to 0."""
    x = np.minimum(np.asarray(x, dtype=np.float64), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _log_discounted(log_mass: NDArray[np.float64], loss: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(P_j e^{-L_j}) = log P_j - L_j``. Beyond the float range (epsilon ~ 1e308) the difference
    saturates to -inf, a mass of exactly 0 as it should be: no overflow warning."""
    with np.errstate(over="ignore"):
        return log_mass - loss


@dataclass(frozen=True, slots=True, eq=False)
class PrivacyLossDistribution:
    """The positive part of a finite privacy loss distribution under P.

    Attributes:
        loss: float64 array (n,), the distinct-or-not loss values ``L_j > 0`` in nats, sorted in
            decreasing order (``inf`` allowed first: outputs impossible under Q).
        log_mass: float64 array (n,), ``log P(L = L_j)``; ``-inf`` allowed.

    Support points with ``L <= 0`` are dropped by :meth:`from_support` because they never
    contribute to ``delta(eps)`` for ``eps >= 0``.
    """

    loss: NDArray[np.float64]
    log_mass: NDArray[np.float64]

    @classmethod
    def from_support(cls, loss: NDArray[np.float64], log_mass: NDArray[np.float64]) -> PrivacyLossDistribution:
        """Keep the points with ``L > 0`` and finite-or-(+inf) loss, sorted by decreasing loss.

        Raises:
            ParameterError: shapes differ or a loss is NaN.
        """
        loss = np.asarray(loss, dtype=np.float64).ravel()
        log_mass = np.asarray(log_mass, dtype=np.float64).ravel()
        if loss.shape != log_mass.shape:
            raise ParameterError("log_mass", log_mass.shape, f"the shape of loss, {loss.shape}")
        if np.isnan(loss).any() or np.isnan(log_mass).any():
            raise ParameterError("loss", "NaN", "finite or infinite numbers, never NaN")
        keep = (loss > 0) & (log_mass > -np.inf)
        order = np.argsort(-loss[keep], kind="stable")
        return cls(loss[keep][order], log_mass[keep][order])

    def _piece_deltas(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
        """For each piece i (active set j <= i, epsilon in [lower_i, L_i)):
        ``(log A_i, log B_i, lower_i, log delta(lower_i))`` with ``A_i = sum_{j<=i} P_j``,
        ``B_i = sum_{j<=i} P_j e^{-L_j}`` and lower_i the next loss value (0 after the last)."""
        log_a = np.logaddexp.accumulate(self.log_mass)
        log_b = np.logaddexp.accumulate(_log_discounted(self.log_mass, self.loss))
        lower = np.append(self.loss[1:], 0.0)
        with np.errstate(invalid="ignore"):  # inf - inf where the loss is infinite or A_i = 0
            x = lower + log_b - log_a
        log_d = log_a + log1mexp(np.where(np.isnan(x), -np.inf, x))
        return log_a, log_b, lower, log_d

    def corner_deltas(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``(eps_c, delta(eps_c))`` at the corners: every support loss value and 0, decreasing.

        float64 arrays of shape (n + 1,); ``delta(L_0) = 0``. O(n)."""
        if self.loss.size == 0:
            return np.zeros(1), np.zeros(1)
        _, _, lower, log_d = self._piece_deltas()
        return np.append(self.loss[0], lower), np.append(0.0, np.exp(log_d))

    def delta_for_epsilon(self, epsilon: float) -> float:
        """The hockey-stick divergence ``delta(epsilon) = E_{e^epsilon}(P || Q)``, in [0, 1].

        Args:
            epsilon: >= 0 (inf gives the mass at infinite loss).
        """
        active = int(np.searchsorted(-self.loss, -epsilon, side="left"))  # points with L > epsilon
        if active == 0:
            return 0.0
        log_a = float(np.logaddexp.reduce(self.log_mass[:active]))
        if math.isinf(epsilon):  # only infinite losses are active
            return float(np.exp(log_a))
        log_b = float(np.logaddexp.reduce(_log_discounted(self.log_mass[:active], self.loss[:active])))
        return float(np.exp(log_a + log1mexp(epsilon + log_b - log_a)))

    def epsilon_for_delta(self, delta: float) -> float:
        """The smallest ``epsilon >= 0`` with ``delta(epsilon) <= delta`` (exact, piecewise solve).

        Args:
            delta: in [0, 1]. ``delta = 0`` gives the largest loss (inf if some output is
                impossible under Q).

        Returns:
            float >= 0, possibly inf (when the mass at infinite loss exceeds ``delta``).
        """
        if self.loss.size == 0:
            return 0.0
        if delta <= 0.0:
            return float(self.loss[0])
        log_delta = math.log(delta)
        log_a, log_b, lower, log_d = self._piece_deltas()
        above = log_d > log_delta
        if not above.any():
            return 0.0
        i = int(np.argmax(above))
        if not np.isfinite(self.loss[i]):
            return math.inf
        eps = log_a[i] + float(log1mexp(log_delta - log_a[i])) - log_b[i]
        return float(min(max(eps, lower[i], 0.0), self.loss[i]))
