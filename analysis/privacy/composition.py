"""Homogeneous k-fold composition of (epsilon, delta)-DP mechanisms: the exact optimum and its bounds.

Source: Kairouz, Oh, Viswanath, *The Composition Theorem for Differential Privacy* (000).

* Theorem 3.3 (exact): under k-fold adaptive composition the class of (eps, delta)-DP mechanisms is
  ``((k - 2i) eps, 1 - (1 - delta)^k (1 - delta_i))``-DP for every ``i = 0..floor(k/2)``, with::

      delta_i = sum_{l=0}^{i-1} C(k, l) (e^{(k-l) eps} - e^{(k-2i+l) eps}) / (1 + e^eps)^k

  and nothing better holds: the composition of the four-output randomized response (000 §5.1 / §6)
  attains the region. Between the corners the exact slack is the hockey-stick divergence of the
  k-fold product of the (eps, 0) randomized response::

      delta_slack(eps~) = sum_{l: (k-2l) eps > eps~} C(k, l) (e^{(k-l) eps} - e^{eps~ + l eps}) / (1 + e^eps)^k

  i.e. ``E_{e^eps~}(P^k || Q^k)`` with ``l ~ Binomial(k, 1/(1+e^eps))`` flips under P. The optimum
  ``epsilon_tilde`` is the smallest ``eps~ >= 0`` with ``delta_slack(eps~) <= delta_tilde``; it does not
  depend on delta (which enters only through ``delta_total = 1 - (1-delta)^k (1-delta_tilde)``).
* Theorem 3.4: ``eps~ = min{k eps, k eps tanh(eps/2) + eps sqrt(2k log(e + sqrt(k eps^2)/delta_tilde)),
  k eps tanh(eps/2) + eps sqrt(2k log(1/delta_tilde))}`` (``tanh(eps/2) = (e^eps-1)/(e^eps+1)``),
  at the same ``delta_total``.
* Eq. (7), the high-privacy form (stated for ``eps <= 0.9``): ``k eps tanh(eps/2)`` replaced by ``k eps^2``.
* Theorem 3.2 (Dwork, Rothblum, Vadhan 2010): ``eps~ = k eps (e^eps - 1) + eps sqrt(2k log(1/delta_tilde))``
  at ``delta_total = k delta + delta_tilde``.
* Theorem 3.1 (basic): ``(k eps, k delta)``.

Everything is in log space (:mod:`mpdp.protocols.numerics.binomial`, :mod:`mpdp.analysis.privacy.privacy_loss`): k up to 10^6
and beyond, epsilon from 0 to inf, delta_tilde from 0 (answer ``k eps``) to 1.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.privacy_loss import PrivacyLossDistribution
from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.numbers import refuse_bool
from mpdp.protocols.numerics.binomial import log_binomial_pmf
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

if TYPE_CHECKING:
    from dp_accounting import DpEvent

__all__ = [
    "BOUND_NAMES",
    "MAX_K",
    "CompositionResult",
    "basic_composition",
    "check_delta_slack",
    "check_k",
    "compose_homogeneous",
    "composed_delta",
    "drv10_bound",
    "eq7_bound",
    "kov_bound",
    "optimal_delta_slack",
    "optimal_epsilon",
    "randomized_response_loss",
    "slack_for_total_delta",
    "theorem_3_3_corners",
    "theorem_3_4_bound",
]

#: The largest k the exact homogeneous engine accepts (memory ~ 100 bytes * k).
MAX_K = 50_000_000
#: Keys of :attr:`CompositionResult.bounds`, in the order the CLI prints them.
BOUND_NAMES = ("theorem_3_4", "eq_7", "drv10", "basic")
#: Eq. (7) is stated for the high-privacy regime eps <= 0.9 (000, Section 3).
EQ7_MAX_EPSILON = 0.9


def check_k(k: int) -> int:
    """Return k as int, or raise :class:`ParameterError` unless it is an integer >= 1.

    Raises:
        SizeLimitError: k > :data:`MAX_K`.
    """
    if isinstance(k, bool) or not float(k).is_integer() or k < 1:
        raise ParameterError("k", k, "an integer >= 1 (the number of composed mechanisms)")
    if k > MAX_K:
        raise SizeLimitError("k", k, MAX_K, "the exact optimum and its bounds are computed up to that k; beyond "
                             "it, 000 Theorem 3.4 gives a closed-form upper bound")
    return int(k)


def check_delta_slack(delta_slack: float, name: str = "delta_slack") -> float:
    """Return ``float(delta_slack)`` or raise :class:`ParameterError` unless it is in [0, 1).

    delta_tilde = 1 would make every composed guarantee (eps~, 1)-DP, which says nothing; a bool is refused."""
    refuse_bool(name, delta_slack, "a number in [0, 1)")
    try:
        value = float(delta_slack)
    except (TypeError, ValueError):
        raise ParameterError(name, delta_slack, "a number in [0, 1)") from None
    if not 0.0 <= value < 1.0:
        raise ParameterError(name, delta_slack, "a number in [0, 1)")
    return value


def composed_delta(deltas: NDArray[np.float64] | float, delta_slack: float, k: int = 1) -> float:
    """``1 - prod_l (1 - delta_l) (1 - delta_slack)`` (with a scalar delta: ``1-(1-delta)^k(1-delta_slack)``).

    Computed as ``-expm1(sum log1p(-delta_l) + log1p(-delta_slack))``: no cancellation for tiny deltas.
    """
    log_keep = k * float(np.sum(np.log1p(-np.asarray(deltas, dtype=np.float64))))
    if delta_slack >= 1.0 or math.isinf(log_keep):
        return 1.0
    return max(0.0, -math.expm1(log_keep + math.log1p(-delta_slack)))


def slack_for_total_delta(deltas: NDArray[np.float64] | float, total_delta: float, k: int = 1) -> float:
    """The delta_slack at which the composition's total delta (:func:`composed_delta`) is ``total_delta``:
    ``1 - (1 - total_delta) / prod_l (1 - delta_l)`` (scalar delta: the product over k copies), computed
    as ``-expm1(log1p(-total_delta) - sum log1p(-delta_l))``.

    Raises:
        ParameterError: ``total_delta`` outside [0, 1), or below the mechanisms' own total delta
            ``1 - prod(1 - delta_l)`` (no slack is left; the message names that minimum).
    """
    if not 0.0 <= total_delta < 1.0:
        raise ParameterError("total delta", total_delta, "a value in [0, 1)")
    log_keep = k * float(np.sum(np.log1p(-np.asarray(deltas, dtype=np.float64))))
    slack = -math.expm1(math.log1p(-total_delta) - log_keep)
    if slack < 0.0:
        raise ParameterError("total delta", total_delta,
                             f"at least the mechanisms' own total delta {-math.expm1(log_keep):.6g}")
    return max(0.0, slack)


def randomized_response_loss(
    epsilons: NDArray[np.float64], counts: NDArray[np.int64], log_floor: float = -math.inf
) -> PrivacyLossDistribution:
    """Privacy loss distribution of the product of ``counts[j]`` copies of the (epsilons[j], 0)
    randomized response, for each j (000, proof of Theorem 3.3; the worst case of the class).

    Group j contributes the loss ``(n_j - 2 m_j) eps_j`` with ``m_j ~ Binomial(n_j, 1/(1+e^eps_j))``
    (flipped answers) under P; the support is the product grid of size ``prod_j (n_j + 1)``.

    Args:
        epsilons: float64 (G,), finite, > 0, distinct.
        counts: int (G,), >= 1.
        log_floor: grid points with a log-probability below this are dropped (they cannot change
            a hockey-stick divergence above ``e^log_floor`` by more than their total mass).

    Returns:
        The positive part of the loss distribution (see :class:`PrivacyLossDistribution`).
    """
    loss = np.zeros(1)
    log_mass = np.zeros(1)
    for eps, n in zip(np.asarray(epsilons, dtype=np.float64), np.asarray(counts), strict=True):
        n = int(n)
        m = np.arange(n + 1, dtype=np.float64)
        group_log = log_binomial_pmf(m, n, -float(np.logaddexp(0.0, eps)), -float(np.logaddexp(0.0, -eps)))
        keep = group_log >= log_floor
        with np.errstate(over="ignore"):  # eps ~ 1e308: +-inf is the correctly rounded loss; the -inf
            group_loss = (n - 2.0 * m[keep]) * eps  # ones have mass e^-inf = 0 and were dropped above
        loss = (loss[:, None] + group_loss[None, :]).ravel()
        log_mass = (log_mass[:, None] + group_log[keep][None, :]).ravel()
        keep = log_mass >= log_floor
        loss, log_mass = loss[keep], log_mass[keep]
    return PrivacyLossDistribution.from_support(loss, log_mass)


def _single_group_loss(epsilon: float, k: int) -> PrivacyLossDistribution:
    """The loss distribution of the k-fold (epsilon, 0) randomized response, only ``l < k/2``."""
    l = np.arange((k + 1) // 2, dtype=np.float64)  # (k - 2l) eps > 0
    log_mass = log_binomial_pmf(
        l, k, -float(np.logaddexp(0.0, epsilon)), -float(np.logaddexp(0.0, -epsilon))
    )
    with np.errstate(over="ignore"):  # epsilon ~ 1e308: +inf is the correctly rounded loss
        loss = (k - 2.0 * l) * epsilon
    return PrivacyLossDistribution(loss, log_mass)


def optimal_epsilon(epsilon: float, k: int, delta_slack: float) -> float:
    """The exact optimal composition: the smallest ``eps~ >= 0`` such that the k-fold composition
    of (epsilon, delta)-DP mechanisms is ``(eps~, 1 - (1-delta)^k (1-delta_slack))``-DP
    (000, Theorem 3.3, exact between the corner points).

    Args:
        epsilon: per-mechanism epsilon, ``0 <= epsilon <= inf``.
        k: number of mechanisms, ``1 <= k <= MAX_K``.
        delta_slack: delta_tilde in [0, 1); 0 gives ``k * epsilon``.

    Returns:
        float in ``[0, k * epsilon]`` (inf only for ``epsilon = inf`` and ``delta_slack < 1``).
        Time O(k): about 20 ms at k = 10^5 (see benchmarks/bench_composition.py).

    Raises:
        ParameterError: an argument outside its domain.
    """
    epsilon = check_epsilon(epsilon)
    k = check_k(k)
    delta_slack = check_delta_slack(delta_slack)
    if epsilon == 0.0 or delta_slack >= 1.0:
        return 0.0
    if math.isinf(epsilon):
        return math.inf
    if delta_slack == 0.0:
        return k * epsilon
    return _single_group_loss(epsilon, k).epsilon_for_delta(delta_slack)


def optimal_delta_slack(epsilon: float, k: int, epsilon_tilde: float) -> float:
    """The inverse of :func:`optimal_epsilon`: the smallest delta_tilde such that the k-fold
    composition is ``(epsilon_tilde, 1 - (1-delta)^k (1-delta_tilde))``-DP, i.e. the hockey-stick
    divergence ``E_{e^eps~}(P^k || Q^k)`` of the k-fold randomized response (000, Theorem 3.3).

    Returns:
        float in [0, 1]; 0 for ``epsilon_tilde >= k epsilon``.

    Raises:
        ParameterError: an argument outside its domain (epsilon_tilde must be >= 0).
    """
    epsilon = check_epsilon(epsilon)
    k = check_k(k)
    epsilon_tilde = check_epsilon(epsilon_tilde, "epsilon_tilde")
    if epsilon == 0.0 or epsilon_tilde >= k * epsilon:
        return 0.0
    if math.isinf(epsilon):
        return 1.0
    return min(_single_group_loss(epsilon, k).delta_for_epsilon(epsilon_tilde), 1.0)


def theorem_3_3_corners(epsilon: float, delta: float, k: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The corner points of Theorem 3.3 of 000.

    Returns:
        ``(eps_i, delta_total_i)``, two float64 arrays of shape ``(floor(k/2) + 1,)`` for
        ``i = 0..floor(k/2)``: ``eps_i = (k - 2i) epsilon`` and
        ``delta_total_i = 1 - (1 - delta)^k (1 - delta_i)``. The composition region is the
        intersection of the regions ``R(eps_i, delta_total_i)``.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_k(k)
    i = np.arange(k // 2 + 1)
    with np.errstate(invalid="ignore"):  # 0 * inf
        eps_i = np.where(k - 2 * i == 0, 0.0, (k - 2.0 * i) * epsilon)
    if epsilon == 0.0 or math.isinf(epsilon):
        slack = np.where(i == 0, 0.0, 1.0 if math.isinf(epsilon) else 0.0)
    else:  # corners (k - 2l) eps for l < k/2, then 0; keep those of the form (k - 2i) eps, i <= k/2
        slack = _single_group_loss(epsilon, k).corner_deltas()[1][: i.size]
    with np.errstate(divide="ignore"):  # slack = 1 (epsilon = inf)
        return eps_i, -np.expm1(k * math.log1p(-delta) + np.log1p(-slack))


def basic_composition(epsilons: NDArray[np.float64], deltas: NDArray[np.float64]) -> tuple[float, float]:
    """Theorem 3.1 of 000: ``(sum eps_l, sum delta_l)`` (delta capped at 1)."""
    return total_epsilon(epsilons), min(float(np.sum(deltas)), 1.0)


def kov_bound(
    sum_epsilon: float, sum_drift: float, sum_square: float, delta_slack: float
) -> float | None:
    """The closed form shared by Theorem 3.4, eq. (7) and the heterogeneous theorem of 000::

        min{ sum eps_l, D + sqrt(2 S log(e + sqrt(S)/delta_tilde)), D + sqrt(2 S log(1/delta_tilde)) }

    with ``S = sum eps_l^2`` and the drift ``D = sum eps_l tanh(eps_l/2)`` (Theorem 3.4 and its
    heterogeneous form) or ``D = sum eps_l^2`` (eq. 7). None for ``delta_tilde = 0`` (the theorems
    need ``delta_tilde > 0``). Logs are taken in log space: no overflow at ``delta_tilde = 1e-300``.
    """
    if delta_slack <= 0.0:
        return None
    if math.isinf(sum_epsilon) or sum_square == 0.0:
        return sum_epsilon
    log_inv = -math.log(delta_slack)
    log_mixed = float(np.logaddexp(1.0, 0.5 * math.log(sum_square) + log_inv))
    second = sum_drift + math.sqrt(2.0 * sum_square * log_mixed)
    third = sum_drift + math.sqrt(2.0 * sum_square * log_inv)
    return min(sum_epsilon, second, third)


def total_epsilon(epsilons: NDArray[np.float64]) -> float:
    """sum eps_l for eps_l >= 0, float; +inf (with no overflow warning) past the float64 range."""
    eps = np.asarray(epsilons, dtype=np.float64)
    top = float(eps.max(initial=0.0))
    if math.isinf(top) or top * eps.size < _FLOAT_MAX:
        return float(eps.sum())
    return top * float(np.sum(eps / top))  # a Python float product: inf on overflow, silently


def theorem_3_4_bound(epsilons: NDArray[np.float64], delta_slack: float) -> float | None:
    """Theorem 3.4 of 000 (and its heterogeneous form): an upper bound on the optimal eps~ at
    ``delta_total = 1 - prod(1 - delta_l)(1 - delta_tilde)``. ``epsilons`` float64 (k,).

    For some eps_l > 1e150 (where eps_l^2 overflows) the bound is sum eps_l: the other two terms of
    the minimum exceed it (D >= sum eps_l - k, while the square-root terms are >= 1e-8 max eps_l >> k)."""
    eps = np.asarray(epsilons, dtype=np.float64)
    if delta_slack > 0.0 and eps.max(initial=0.0) > _SQUARE_SAFE:
        return total_epsilon(eps)
    return kov_bound(float(eps.sum()), float(np.sum(eps * np.tanh(eps / 2))), float(np.sum(eps**2)), delta_slack)


_FLOAT_MAX = float(np.finfo(np.float64).max)
_SQUARE_SAFE = 1e150  # eps^2 of a larger eps (and k of them) overflows float64


def eq7_bound(epsilons: NDArray[np.float64], delta_slack: float) -> float | None:
    """Eq. (7) of 000 (with sums for heterogeneous mechanisms, as 000 states after the heterogeneous
    theorem); None outside its stated regime ``max eps_l <= 0.9`` or for ``delta_tilde = 0``."""
    eps = np.asarray(epsilons, dtype=np.float64)
    if eps.max() > EQ7_MAX_EPSILON:
        return None
    square = float(np.sum(eps**2))
    return kov_bound(float(eps.sum()), square, square, delta_slack)


def drv10_bound(epsilon: float, k: int, delta_slack: float) -> float | None:
    """Theorem 3.2 of 000 (Dwork, Rothblum, Vadhan 2010), homogeneous:
    ``k eps (e^eps - 1) + eps sqrt(2k log(1/delta_tilde))`` at ``delta_total = k delta + delta_tilde``.

    None for ``delta_tilde = 0``; inf where ``e^eps`` overflows (eps > 700).
    """
    if delta_slack <= 0.0:
        return None
    if epsilon > 700.0:
        return math.inf
    return k * epsilon * math.expm1(epsilon) + epsilon * math.sqrt(2.0 * k * -math.log(delta_slack))


@dataclass(frozen=True, slots=True)
class CompositionResult:
    """The composed privacy guarantee of k mechanisms.

    Attributes:
        k: number of composed mechanisms.
        epsilon_tilde: the optimal eps~ (method ``exact``) or the certified upper bound on it
            (method ``bounds``), >= 0, never NaN.
        delta_total: ``1 - prod_l (1 - delta_l)(1 - delta_slack)``.
        delta_slack: the delta_tilde asked for.
        method: ``"exact"`` or ``"bounds"`` (heterogeneous composition by discretization).
        bounds: read-only mapping with keys :data:`BOUND_NAMES`; None where not defined
            (``delta_tilde = 0``; eq. 7 for eps > 0.9; drv10 for heterogeneous mechanisms).
            drv10 holds at ``delta_total = k delta + delta_tilde``, basic at ``sum delta_l``.
        lower, upper: for method ``bounds``, certified ``lower <= optimum <= upper``; else None.
        detail: a human note on how the result was obtained.
        releases: the composed mechanisms as ``(epsilon, delta, count)`` triples (equal levels merged), what
            :meth:`to_dp_event` hands to dp_accounting.
    """

    k: int
    epsilon_tilde: float
    delta_total: float
    delta_slack: float
    method: str
    bounds: Mapping[str, float | None] = field(default_factory=dict)
    lower: float | None = None
    upper: float | None = None
    detail: str = ""
    releases: tuple[tuple[float, float, int], ...] = ()

    def __post_init__(self) -> None:
        if not self.epsilon_tilde >= 0.0:  # also NaN
            raise ParameterError("epsilon_tilde", self.epsilon_tilde, "a number >= 0")
        if self.method not in ("exact", "bounds"):
            raise ParameterError("method", self.method, "'exact' or 'bounds'")
        object.__setattr__(self, "bounds", MappingProxyType(dict(self.bounds)))

    @property
    def gap(self) -> float | None:
        """``upper - lower`` for the bounds method, else None."""
        return None if self.lower is None or self.upper is None else self.upper - self.lower

    def to_dp_event(self) -> DpEvent:
        """The composed mechanisms as a dp_accounting ``DpEvent`` (:func:`mpdp.analysis.privacy.dp_events.dp_event`):
        run its PLD accountant (``NeighboringRelation.REPLACE_ONE``) on exactly what was composed here.

        Raises:
            ParameterError: a mechanism with delta > 0, or a result built without its releases.
            ImportError: dp_accounting is not installed (``pip install 'mpdp[interop]'``).
        """
        from mpdp.analysis.privacy.dp_events import dp_event

        return dp_event(self.releases)

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready dict (the schema of ``mpdp compose --json``); inf as the string "inf"."""

        def enc(x: float | None) -> float | str | None:
            return "inf" if x is not None and math.isinf(x) else x

        return {
            "k": self.k,
            "epsilon_tilde": enc(self.epsilon_tilde),
            "delta_total": self.delta_total,
            "delta_slack": self.delta_slack,
            "method": self.method,
            "bounds": {name: enc(self.bounds.get(name)) for name in BOUND_NAMES},
            "lower": enc(self.lower),
            "upper": enc(self.upper),
            "gap": enc(self.gap),
            "detail": self.detail,
        }


def compose_homogeneous(epsilon: float, delta: float, k: int, delta_slack: float) -> CompositionResult:
    """k-fold composition of (epsilon, delta)-DP mechanisms: the exact optimum of Theorem 3.3 at
    ``delta_total = 1 - (1-delta)^k (1-delta_slack)`` and the bounds of Theorems 3.4, 3.2, 3.1, eq. (7).

    Raises:
        ParameterError: epsilon outside [0, inf], delta outside [0, 1), k < 1, delta_slack outside [0, 1).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = check_k(k)
    delta_slack = check_delta_slack(delta_slack)
    eps_vec = np.full(k, epsilon)
    bounds = {
        "theorem_3_4": theorem_3_4_bound(eps_vec, delta_slack),
        "eq_7": eq7_bound(eps_vec, delta_slack),
        "drv10": drv10_bound(epsilon, k, delta_slack),
        "basic": basic_composition(eps_vec, np.full(k, delta))[0],
    }
    return CompositionResult(
        k=k,
        epsilon_tilde=optimal_epsilon(epsilon, k, delta_slack),
        delta_total=composed_delta(delta, delta_slack, k),
        delta_slack=delta_slack,
        method="exact",
        bounds=bounds,
        detail="Theorem 3.3, exact between the corner points (binomial privacy loss, log space)",
        releases=((epsilon, delta, k),),
    )
