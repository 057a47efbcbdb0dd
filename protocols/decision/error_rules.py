"""The optimal average-case rule under an error measure without its |Y| x |Y| table: the posterior mean or
median, and its exact accuracy without a sum over the outputs.

The optimal average-case decision of a transcript class c is ``argmax_y sum_j P(j | c) w(f(j), y)``
(002 eq. (5) for the central observer, eq. (2) for a party with its own bit fixed; the smallest y among
maximizers, as :func:`mpdp.protocols.decision.engines.average_decisions`). With Y = f(j) the output of the
input class and y ranging over the integers 0..|Y|-1, standard decision theory gives it in closed form
(standard decision theory: the Bayes estimator under squared-error loss is the posterior mean, under
absolute-error loss a posterior median; e.g. Lehmann and Casella, *Theory of Point Estimation*, 2nd ed.,
ch. 4 -- here restricted to integer estimates, which the two arguments below settle):

* squared error, ``w = -(Y - y)^2``: ``sum_j P(j | c) w = -(Var(Y | c) + (m - y)^2)`` with m the posterior
  mean E[Y | c] (here ``S1 / S0``, S0 the column's total, one up to rounding), so the maximizer is the
  integer nearest m, the smaller of the two at an exact half (``y = floor(m) + (m - floor(m) > 1/2)``);
* absolute error, ``w = -|Y - y|``: from y to y + 1 the expected loss changes by ``2 P(Y <= y | c) - 1``
  (times S0), so it falls strictly while ``P(Y <= y | c) < 1/2`` and the smallest maximizer is the
  posterior median ``min{y : P(Y <= y | c) >= 1/2}`` (needs f non-decreasing in the input class, which
  orders Y's values as the likelihood's rows: ``sum`` and one group).

The mean is one Kronecker product with the column of f's values, O(likelihood entries) for any view; for
a single group's view (the central observer of parties with equal parameters, or a party among them) the
mean or median and the accuracy ``A[j] = sum_c P(c | j) w(f(j), d(c))`` (002 eqs. (1), (3)) are one pass
each over the group's likelihood entries: O(entries) instead of O(entries x |Y|), no table of |Y| columns,
and a band (a pure group above ``PURE_GROUP_DENSE_MAX``) read row by row as it is made, never held (10^5
parties at epsilon 1: ~100 MB instead of the 9.5 GB CSR band; the band is made twice a view). Over several
groups the accuracy of ``sum`` under squared error is G + 1 Kronecker products of one column
(:func:`_additive_squared_error`). Where none serves (absolute error over several groups, an f not
monotone or not a sum) the engines sum over the outputs as for any measure, the gain computed a batch of
columns at a time (:meth:`mpdp.protocols.decision.engines.View.gain_columns`).

Ties go to the smaller output, as the argmax's do, and within rounding: a mean within :data:`TIE` (times
max(1, |Y| - 1)) of a half, or a CDF within :data:`TIE` of one half, is a tie (at epsilon = 0 the mean k/2
of an odd k comes out a few ulps above the half). Elsewhere the decisions are the dense argmax's; where two
outputs' expected gains agree to rounding the dense float sums may order them either way (either is
optimal; tests/protocols/test_error_rules.py compares the two paths so).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import PURE_GROUP_DENSE_MAX, Factor, banded_rows
from mpdp.protocols.functions import ErrorMeasure
from mpdp.protocols.numerics.kron import Matrix, kron_matvec

__all__ = ["TIE", "error_accuracy", "error_decisions"]

#: A posterior mean this close (relative to max(1, |Y| - 1)) to a half, or a CDF this close to one half
#: (relative), is a tie between two outputs, which goes to the smaller.
TIE = 1e-12

_BLOCK = 1 << 20  # likelihood entries per block of the one-group passes (float64: 8 MB a temporary)


def _banded(factor: Factor) -> bool:
    """Whether ``factor``'s likelihood is a band (a pure group above ``PURE_GROUP_DENSE_MAX``), which the
    one-group passes read row by row as :func:`mpdp.protocols.decision.factors.banded_rows` makes them, without
    the CSR matrix (~20 bytes a nonzero: 9.5 GB for 10^5 parties at epsilon 1)."""
    return not factor.mechanism.four_output and factor.n > PURE_GROUP_DENSE_MAX


def _row_blocks(matrix: NDArray[np.float64] | None, factor: Factor
                ) -> Iterator[tuple[int, NDArray[np.int64], NDArray[np.float64]]]:
    """The rows of a dense ``matrix``, or (None) of ``factor``'s band F, in blocks of about ``_BLOCK`` entries:
    (index of the block's first row, int64 (rows,) the column of each row's first entry, float64 (rows, width)
    its entries from there on, zero-padded). Each row of a band is a contiguous run of columns."""
    if matrix is not None:
        step = max(1, _BLOCK // max(1, matrix.shape[1]))
        for first in range(0, matrix.shape[0], step):
            block = matrix[first:first + step]
            yield first, np.zeros(block.shape[0], dtype=np.int64), block
        return
    first, starts, rows, entries = 0, [], [], 0
    for j, (lo, row) in enumerate(banded_rows(factor.n, factor.mechanism.epsilon)):
        starts.append(lo)
        rows.append(row)
        entries += row.size
        if entries >= _BLOCK or j == factor.n:
            values = np.zeros((len(rows), max(r.size for r in rows)))
            for i, r in enumerate(rows):
                values[i, : r.size] = r
            yield first, np.array(starts, dtype=np.int64), values
            first, starts, rows, entries = j + 1, [], [], 0


def _columns(starts: NDArray[np.int64], width: int, size: int) -> NDArray[np.int64]:
    """int64 (rows, width): the column of every entry of a block, clipped to 0..size-1 (a padding entry is
    zero, so the column it reads does not matter)."""
    at: NDArray[np.int64] = np.minimum(starts[:, None] + np.arange(width)[None, :], size - 1)
    return at


def error_decisions(factors: Sequence[Factor], outputs: NDArray[np.int64],
                    measure: ErrorMeasure) -> NDArray[np.int64] | None:
    """The optimal average-case decisions under ``measure`` in closed form (module docstring).

    Args:
        factors: the view's likelihood factors (posteriors ``B[j, c] = P(j | c)``).
        outputs: int64 (num_inputs,), f on each input class (values in 0..|Y|-1).
        measure: squared or absolute error on |Y| outputs.

    Returns:
        int64 (num_classes,) decisions; None where no closed form serves here (absolute error with several
        groups, or an f not non-decreasing over one group's input classes).
    """
    top = measure.num_outputs - 1
    squared = measure.name == "squared-error"
    if len(factors) == 1:  # the posterior's columns one block at a time: a band's without its matrix
        if not squared and (np.diff(outputs) < 0).any():
            return None
        factor = factors[0]
        # a band's posterior is its transpose (B = F^T, factors.py): its columns are F's rows
        columns = None if _banded(factor) else np.asarray(factor.posterior).T
        decisions = np.empty(factor.num_classes, dtype=np.int64)
        for first, starts, values in _row_blocks(columns, factor):
            rows = slice(first, first + starts.size)
            at = _columns(starts, values.shape[1], outputs.size)
            if squared:
                decisions[rows] = _nearest((values * outputs[at]).sum(axis=1) / values.sum(axis=1), top)
            else:
                cdf = np.cumsum(values, axis=1)
                below = (cdf < (0.5 - TIE) * cdf[:, -1:]).sum(axis=1)  # entries before the median
                decisions[rows] = outputs[np.minimum(starts + below, outputs.size - 1)]
        return decisions
    if not squared:
        return None
    values = np.stack([np.ones(outputs.size), outputs.astype(np.float64)], axis=1)
    total, first_moment = kron_matvec([f.posterior for f in factors], values, transpose=True).T
    return _nearest(first_moment / total, top)


def _nearest(mean: NDArray[np.float64], top: int) -> NDArray[np.int64]:
    """The integer in 0..top nearest each posterior mean, the smaller at a half (within :data:`TIE`)."""
    low = np.floor(mean)
    up = mean - low > 0.5 + TIE * max(1, top)
    nearest: NDArray[np.int64] = np.clip(low + up, 0, top).astype(np.int64)
    return nearest


def error_accuracy(factors: Sequence[Factor], outputs: NDArray[np.int64], measure: ErrorMeasure,
                   decisions: NDArray[np.int64]) -> NDArray[np.float64] | None:
    """``A[j] = sum_c F[j, c] w(f(j), d(c))`` for decisions d (002 eqs. (1), (3) before averaging or
    minimizing): on a view of one group one pass over its likelihood's entries (a band's rows as they are
    made); under squared error with f = the number of ones plus a constant (``sum``) over several groups,
    :func:`_additive_squared_error`.

    Args:
        factors: the view's likelihood factors (forward ``F[j, c] = P(c | j)``). outputs: int64
            (num_inputs,), f on each input class. measure: the error measure. decisions: int64 (num_classes,).

    Returns:
        float64 (num_inputs,); None elsewhere (the engines' column sums serve those views).
    """
    if len(factors) != 1:
        ones = _grid_sum([np.arange(f.n + 1, dtype=np.float64) for f in factors])  # exact: small integers
        additive = bool((outputs - ones == outputs[0]).all())
        return (_additive_squared_error(factors, int(outputs[0]), decisions)
                if additive and measure.name == "squared-error" else None)
    factor = factors[0]
    accuracy = np.empty(outputs.size)
    for first, starts, values in _row_blocks(None if _banded(factor) else np.asarray(factor.forward), factor):
        rows = slice(first, first + starts.size)
        guesses = decisions[_columns(starts, values.shape[1], decisions.size)]
        accuracy[rows] = (values * measure.gain(outputs[rows, None], guesses)).sum(axis=1)
    return accuracy


def _deviations(forward: Matrix, a: NDArray[np.float64], center: NDArray[np.float64]
                ) -> tuple[Matrix, NDArray[np.float64]]:
    """``forward`` with each entry (j, c) times ``a[c] - j`` (dense, or a band's CSR with its pattern), and
    ``sum_c F[j, c] (a[c] - j - center[j])^2`` per row j: float64 (rows,)."""
    if isinstance(forward, np.ndarray):
        j = np.arange(forward.shape[0], dtype=np.float64)[:, None]
        weighted: NDArray[np.float64] = forward * (a[None, :] - j)
        return weighted, (forward * (a[None, :] - j - center[:, None]) ** 2).sum(axis=1)
    band = sp.csr_matrix(forward)
    rows = np.repeat(np.arange(band.shape[0]), np.diff(band.indptr))
    spread: NDArray[np.float64] = np.bincount(rows, weights=band.data * (a[band.indices] - rows - center[rows]) ** 2,
                                              minlength=band.shape[0]).astype(np.float64)
    return sp.csr_matrix((band.data * (a[band.indices] - rows), band.indices, band.indptr), shape=band.shape), spread


def _grid_sum(vectors: Sequence[NDArray[np.float64]]) -> NDArray[np.float64]:
    """sum_g v_g(j_g) on the input grid of the groups (the first group the most significant digit)."""
    out = np.zeros(1)
    for v in vectors:
        out = (out[:, None] + v[None, :]).ravel()
    return out


def _additive_squared_error(factors: Sequence[Factor], offset: int,
                            decisions: NDArray[np.int64]) -> NDArray[np.float64]:
    """-E[(d(C) - f(j))^2 | j] for f(j) = offset + sum_g j_g over several groups, in G + 1 Kronecker products
    of one column instead of one per output. With a_g(c) = E[J_g | c_g] and m(c) = offset + sum_g a_g(c_g)
    (the posterior mean), ``d - f = e + S``, e(c) = d(c) - m(c) and S = sum_g (a_g(C_g) - j_g), the groups'
    terms independent given j:

        E[(e + S)^2 | j] = E[e^2 | j] + 2 sum_g E[e (a_g - j_g) | j] + sum_g Var_g(j_g) + (sum_g mu_g(j_g))^2,

    mu_g and Var_g the mean and variance of a_g(C_g) - j_g given j_g (the variance summed about its mean: no
    cancellation; |e| <= 1/2 where d rounds m)."""
    forward = [f.forward for f in factors]
    means = [np.asarray(f.posterior.T @ np.arange(f.n + 1, dtype=np.float64)).ravel() for f in factors]
    e = decisions - offset - _grid_sum(means)
    total = kron_matvec(forward, e * e)
    mus, variances = [], []
    for g, (fw, a) in enumerate(zip(forward, means, strict=True)):
        weighted, _ = _deviations(fw, a, np.zeros(fw.shape[0]))
        mu = _row_sums(weighted)
        variances.append(_deviations(fw, a, mu)[1])
        mus.append(mu)
        total += 2.0 * kron_matvec([*forward[:g], weighted, *forward[g + 1:]], e)
    bias = _grid_sum(mus)
    accuracy: NDArray[np.float64] = -(total + _grid_sum(variances) + bias * bias)
    return accuracy


def _row_sums(matrix: Matrix) -> NDArray[np.float64]:
    """float64 (rows,): each row's sum."""
    sums: NDArray[np.float64] = np.asarray(matrix.sum(axis=1)).ravel()
    return sums
