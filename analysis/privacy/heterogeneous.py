"""Heterogeneous composition of (epsilon_l, delta_l)-DP mechanisms, l = 1..k.

Source: 000 (Kairouz, Oh, Viswanath), the heterogeneous theorem after eq. (7): the worst case of the
class is the product of the four-output randomized responses (000 §5.1), so the composition is
``(eps~, 1 - prod_l (1 - delta_l)(1 - delta_tilde))``-DP exactly when the hockey-stick divergence of
the product of the (eps_l, 0) randomized responses at ``e^eps~`` is at most delta_tilde. The closed
form of the theorem is :func:`mpdp.analysis.privacy.composition.theorem_3_4_bound` with sums over l.

Computing the optimum is #P-hard in general (Murtagh and Vadhan 2016), so two methods run:

* ``exact``: mechanisms with equal epsilon form groups; group j of n_j copies has a binomial privacy
  loss, and the product grid (size ``prod_j (n_j + 1)``, at most :data:`MAX_EXACT_SUPPORT`) is solved
  exactly by :class:`mpdp.analysis.privacy.privacy_loss.PrivacyLossDistribution`. This covers k <= 20 always, and any
  k with few distinct values.
* ``bounds``: certified lower and upper bounds by discretization. Rounding every eps_l *up* to the
  lattice ``h Z`` gives mechanisms that dominate the originals (an eps-DP randomized response is a
  post-processing of the eps'-one for eps' >= eps), so their optimum is an upper bound; rounding *down*
  gives a lower bound. On the lattice the loss distribution is a convolution of lattice binomials,
  computed by shift-and-add of non-negative arrays (no FFT, so the floating-point error is a small
  relative factor that is folded into the certificate together with every pruned probability). The
  upper bound is then tightened by the closed form. The gap ``upper - lower`` is reported.

  Tight by default: the gap shrinks in proportion to h, so the step is refined adaptively until the
  bracket's relative width ``(upper - lower) / upper`` is at most ``rel_width`` (default
  :data:`DEFAULT_REL_WIDTH`, 0.5%), while the next refinement's predicted time (the work grows as 1/h,
  predicted from the last pass) fits the time limit (default
  :data:`mpdp.protocols.numerics.cost.DEFAULT_TIME_LIMIT`). A given ``resolution`` runs once at that step.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from functools import partial

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.composition import (
    CompositionResult,
    basic_composition,
    check_delta_slack,
    composed_delta,
    drv10_bound,
    eq7_bound,
    randomized_response_loss,
    theorem_3_4_bound,
)
from mpdp.analysis.privacy.privacy_loss import PrivacyLossDistribution
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.binomial import log_binomial_pmf
from mpdp.protocols.numerics.cost import DEFAULT_TIME_LIMIT, check_time_limit
from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = ["DEFAULT_REL_WIDTH", "MAX_EXACT_SUPPORT", "compose_heterogeneous", "discretized_bounds"]

#: The relative width ``(upper - lower) / upper`` the bounds method refines to by default.
DEFAULT_REL_WIDTH = 0.005

#: Largest product grid ``prod_j (n_j + 1)`` solved exactly (k <= 20 distinct values always fits).
MAX_EXACT_SUPPORT = 2**21
#: Largest lattice and the shift-and-add work budget (array element updates, ~0.5 s) of the bounds method.
LATTICE_POINTS = 2**21
WORK_BUDGET = 1.5e9
_UNIT_ROUNDOFF = 2.0**-53

#: Per-mechanism values: a list of floats or a float64 array of shape (k,).
FloatList = Sequence[float] | NDArray[np.float64]


def _check_lists(
    epsilons: FloatList, deltas: FloatList | float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    eps = np.array([check_epsilon(e, f"epsilon[{i}]") for i, e in enumerate(epsilons)], dtype=np.float64)
    if eps.size == 0:
        raise ParameterError("epsilon", list(epsilons), "a non-empty list of numbers >= 0")
    listed = deltas if isinstance(deltas, (Sequence, np.ndarray)) else [float(deltas)] * eps.size
    dels = np.array([check_delta(d, f"delta[{i}]") for i, d in enumerate(listed)], dtype=np.float64)
    if dels.size == 1:
        dels = np.full(eps.size, dels[0])
    if dels.size != eps.size:
        raise ParameterError("delta", dels.tolist(), f"one value or {eps.size} values (one per epsilon)")
    return eps, dels


def _lattice_pld(
    steps: NDArray[np.int64], counts: NDArray[np.int64], h: float, log_floor: float
) -> tuple[PrivacyLossDistribution, float, float]:
    """Loss distribution of the product of ``counts[j]`` randomized responses with epsilon
    ``steps[j] * h``, on the lattice ``h Z``, by shift-and-add.

    Returns:
        (positive part of the distribution, pruned probability mass, relative error bound).
    """
    mass = np.ones(1)  # the running distribution on the lattice points lo, lo + 1, ... (loss / h)
    lo = 0
    pruned = 0.0
    terms = 0
    floor = math.exp(log_floor)
    for step, n in zip(steps.tolist(), counts.tolist(), strict=True):
        eps = step * h
        m = np.arange(n + 1, dtype=np.float64)
        log_pmf = log_binomial_pmf(m, n, -float(np.logaddexp(0.0, eps)), -float(np.logaddexp(0.0, -eps)))
        keep = log_pmf >= log_floor
        pruned += float(np.exp(log_pmf[~keep]).sum()) if (~keep).any() else 0.0
        shifts = ((n - 2 * m[keep]) * step).astype(np.int64)
        weights = np.exp(log_pmf[keep])
        low, width = int(shifts.min()), mass.size
        new = np.zeros(width + int(shifts.max()) - low)
        for shift, weight in zip((shifts - low).tolist(), weights.tolist(), strict=True):
            new[shift : shift + width] += weight * mass
        terms += int(keep.sum()) + 1
        # drop negligible tails of the running distribution (their mass is accounted as pruned)
        heavy = np.flatnonzero(new >= floor)
        first, last = int(heavy[0]), int(heavy[-1])
        pruned += float(new[:first].sum() + new[last + 1 :].sum())
        mass = new[first : last + 1]
        lo += low + first
    positive = slice(max(1 - lo, 0), None)  # lattice points with loss > 0, then in decreasing order
    loss = np.asarray((lo + np.arange(mass.size)) * h, dtype=np.float64)[positive][::-1]
    with np.errstate(divide="ignore"):
        log_mass = np.log(mass[positive][::-1])
    # relative error: each entry is a sum of products of non-negative numbers (terms * u), the
    # binomial weights carry ~1e-11 relative error each (absolute 1e-14 * |log P| <= 700).
    rel = 4.0 * terms * _UNIT_ROUNDOFF + 1e-11 * (len(steps) + 1)
    return PrivacyLossDistribution(loss, log_mass), pruned, rel


def common_lattice(
    values: NDArray[np.float64], max_points: int = LATTICE_POINTS
) -> tuple[float, NDArray[np.int64]] | None:
    """A step h with every value an integer multiple of h (to 1e-9 relative), if the lattice of the
    composition (``2 sum steps + 1`` points for one copy of each value) stays small; else None.

    Returns:
        ``(h, steps)`` with ``steps`` int64 (G,), or None. Tries ``h = min(values) / j`` for j <= 1000.
    """
    j = np.arange(1, 1001, dtype=np.float64)
    ratios = values[None, :] * j[:, None] / values.min()
    ok = np.all(np.abs(ratios - np.rint(ratios)) <= 1e-9 * ratios, axis=1)
    if not ok.any():
        return None
    steps = np.rint(ratios[int(np.argmax(ok))]).astype(np.int64)
    if 2 * int(steps.sum()) + 1 > max_points:
        return None
    return float(values.min()) / float(j[int(np.argmax(ok))]), steps


def discretized_bounds(
    epsilons: NDArray[np.float64], delta_slack: float, resolution: float | None = None
) -> tuple[float, float, float]:
    """Certified ``(lower, upper, h)`` with ``lower <= eps~* <= upper`` for the optimal composition
    of (epsilons[l], 0)-DP mechanisms at slack delta_tilde (see the module docstring).

    Args:
        epsilons: float64 (k,), finite, > 0.
        delta_slack: in (0, 1).
        resolution: the lattice step h in nats; default from :data:`LATTICE_POINTS` and
            :data:`WORK_BUDGET`.

    Returns:
        (lower, upper, h). ``upper`` is not yet tightened by the closed form.
    """
    eps = np.asarray(epsilons, dtype=np.float64)
    if resolution is None:  # work ~ sum over groups of (terms x running width) / h, twice
        levels, repeats = np.unique(eps, return_counts=True)
        width = 2.0 * np.cumsum(levels * repeats)
        work = 2.0 * float(np.sum((repeats + 1.0) * width))
        resolution = max(work / WORK_BUDGET, 2.0 * float(eps.sum()) / LATTICE_POINTS)
    h = float(resolution)
    log_floor = math.log(delta_slack) - 70.0
    bounds = []
    for rounding in (np.floor, np.ceil):
        steps = rounding(eps / h).astype(np.int64)
        values, counts = np.unique(steps[steps > 0], return_counts=True)
        if values.size == 0:
            bounds.append(0.0)
            continue
        pld, pruned, rel = _lattice_pld(values, counts, h, log_floor)
        if rounding is np.floor:  # computed delta may exceed the true one by the factor (1 + rel)
            bounds.append(pld.epsilon_for_delta(min(delta_slack * (1.0 + rel), 1.0)))
        else:  # the true delta may exceed the computed one by rel and the pruned mass
            target = (delta_slack - pruned) / (1.0 + rel)
            bounds.append(pld.epsilon_for_delta(target) if target > 0 else float(np.sum(values * counts)) * h)
    return bounds[0], bounds[1], h


def compose_heterogeneous(
    epsilons: FloatList,
    deltas: FloatList | float,
    delta_slack: float,
    *,
    max_support: int = MAX_EXACT_SUPPORT,
    resolution: float | None = None,
    rel_width: float = DEFAULT_REL_WIDTH,
    time_limit: float | None = DEFAULT_TIME_LIMIT,
) -> CompositionResult:
    """Composition of (epsilons[l], deltas[l])-DP mechanisms at ``delta_total = 1 - prod(1 - delta_l)
    (1 - delta_slack)``: the exact optimum where tractable, else certified bounds (000, heterogeneous
    theorem; Murtagh-Vadhan hardness).

    Args:
        epsilons: k values in [0, inf].
        deltas: one value for all, or k values, each in [0, 1).
        delta_slack: delta_tilde in [0, 1).
        max_support: largest product grid solved exactly.
        resolution: lattice step of the bounds method (nats), one pass; default: adaptive.
        rel_width: the adaptive bounds method refines until ``(upper - lower) / upper <= rel_width``.
        time_limit: seconds the adaptive refinement may take (None: no limit); it stops before a pass
            predicted to overrun and reports the bracket it has.

    Returns:
        :class:`CompositionResult` with ``method`` ``"exact"`` or ``"bounds"`` (then
        ``epsilon_tilde = upper``, the certified guarantee, and ``lower``/``upper``/``gap`` are set).

    Raises:
        ParameterError: a value outside its domain, or deltas of the wrong length.
    """
    eps, dels = _check_lists(epsilons, deltas)
    delta_slack = check_delta_slack(delta_slack)
    k = int(eps.size)
    homogeneous = bool(np.all(eps == eps[0]))
    basic = basic_composition(eps, dels)[0]
    bounds = {
        "theorem_3_4": theorem_3_4_bound(eps, delta_slack),
        "eq_7": eq7_bound(eps, delta_slack),
        "drv10": drv10_bound(float(eps[0]), k, delta_slack) if homogeneous else None,
        "basic": basic,
    }
    result = partial(CompositionResult, k=k, delta_total=composed_delta(dels, delta_slack),
                     delta_slack=delta_slack, bounds=bounds)
    positive = eps[eps > 0]
    if positive.size == 0 or delta_slack >= 1.0:
        return result(epsilon_tilde=0.0, method="exact", detail="no privacy loss")
    if np.isinf(positive).any() or delta_slack == 0.0:
        return result(epsilon_tilde=float(positive.sum()), method="exact",
                      detail="delta_tilde = 0 or an infinite epsilon: the sum of epsilons")
    values, counts = np.unique(positive, return_counts=True)
    support = float(np.exp(min(np.sum(np.log1p(counts.astype(np.float64))), 700.0)))
    if support <= max_support:
        pld = randomized_response_loss(values, counts, log_floor=math.log(delta_slack) - 70.0)
        return result(
            epsilon_tilde=pld.epsilon_for_delta(delta_slack), method="exact",
            detail=f"exact: {values.size} distinct epsilon values, privacy loss grid of {int(support)} points",
        )
    lattice = common_lattice(values, max_points=int(LATTICE_POINTS / max(1.0, counts.max())))
    if lattice is not None:
        h, steps = lattice
        pld, _, _ = _lattice_pld(steps, counts, h, math.log(delta_slack) - 70.0)
        return result(
            epsilon_tilde=pld.epsilon_for_delta(delta_slack), method="exact",
            detail=f"exact: {values.size} commensurate epsilon values on the lattice h = {h:.6g}",
        )
    closed = [b for b in (bounds["theorem_3_4"], bounds["eq_7"], basic) if b is not None]
    lower, upper, h, note = _refined_bounds(positive, delta_slack, closed, resolution, rel_width, time_limit)
    return result(
        epsilon_tilde=upper, method="bounds", lower=lower, upper=upper,
        detail=(f"bounds: {values.size} distinct epsilon values (grid of {support:.3g} points > {max_support});"
                f" epsilons rounded down/up to the lattice h = {h:.3g}{note}"),
    )


def _refined_bounds(positive: NDArray[np.float64], delta_slack: float, closed: list[float],
                    resolution: float | None, rel_width: float, time_limit: float | None
                    ) -> tuple[float, float, float, str]:
    """(lower, upper, h, note): :func:`discretized_bounds` at ``resolution``, or refined adaptively
    to ``rel_width`` within ``time_limit`` (module docstring); the upper bound tightened by ``closed``."""
    if not 0.0 < rel_width < 1.0:
        raise ParameterError("rel_width", rel_width, "a relative width in (0, 1), e.g. 0.005")
    time_limit = check_time_limit(time_limit)
    started = time.perf_counter()
    h: float | None = resolution
    while True:
        pass_start = time.perf_counter()
        lower, upper, h = discretized_bounds(positive, delta_slack, h)
        took = time.perf_counter() - pass_start
        upper = min([upper, *closed])
        lower = min(lower, upper)
        width = (upper - lower) / upper if upper > 0 else 0.0
        if resolution is not None:
            return lower, upper, h, ""
        if width <= rel_width:
            return lower, upper, h, f"; relative width {width:.2g} <= {rel_width:g}"
        # the gap is proportional to h: aim 10% below the target, at most 16x finer per pass
        factor = min(16.0, 1.1 * width / rel_width)
        spent = time.perf_counter() - started
        if time_limit is not None and spent + took * factor > time_limit:
            return lower, upper, h, (f"; relative width {width:.2g} > {rel_width:g}: the next refinement "
                                     f"(about {took * factor:.2g} s) would exceed the {time_limit:g} s time limit")
        h = h / factor
