"""The optimal average-case rule under an error measure without its |Y| x |Y| table: the posterior mean or
median, and its exact accuracy entry by entry of one group's likelihood.

The optimal average-case decision of a transcript class c is ``argmax_y sum_j P(j | c) w(f(j), y)``
(002 eq. (5) for the central observer, eq. (2) for a party with its own bit fixed; the smallest y among
maximizers, as :func:`mpdp.protocols.decision.engines.average_decisions`). With Y = f(j) the output of the
input class and y ranging over the integers 0..|Y|-1, standard decision theory gives it in closed form
(the Bayes estimator of a real parameter under squared and absolute loss; e.g. Lehmann and Casella,
*Theory of Point Estimation*, 2nd ed., §4.1, Corollary 1.2 and Example 1.6 -- here restricted to integer
estimates):

* squared error, ``w = -(Y - y)^2``: ``sum_j P(j | c) w = -(Var(Y | c) + (m - y)^2)`` with m the posterior
  mean E[Y | c] (here ``S1 / S0``, S0 the column's total, one up to rounding), so the maximizer is the
  integer nearest m, the smaller of the two at an exact half (``y = floor(m) + (m - floor(m) > 1/2)``);
* absolute error, ``w = -|Y - y|``: from y to y + 1 the expected loss changes by ``2 P(Y <= y | c) - 1``
  (times S0), so it falls strictly while ``P(Y <= y | c) < 1/2`` and the smallest maximizer is the
  posterior median ``min{y : P(Y <= y | c) >= 1/2}`` (needs f non-decreasing in the input class, which
  orders Y's values as the likelihood's rows: ``sum`` and one group).

The mean is one Kronecker product with the column of f's values, O(likelihood entries) for any view; the
median and the accuracy ``A[j] = sum_c P(c | j) w(f(j), d(c))`` (002 eqs. (1), (3)) are one pass over the
entries of a single group's likelihood (the central observer of parties with equal parameters, or a
party among them): O(entries) instead of O(entries x |Y|), and no table of |Y| columns. Where neither
serves (several groups, an f not monotone) the engines sum over the outputs as for any measure, the gain
computed a batch of columns at a time (:meth:`mpdp.protocols.decision.engines.View.gain_columns`).

Ties go to the smaller output, as the argmax's do, and within rounding: a mean within :data:`TIE` (times
max(1, |Y| - 1)) of a half, or a CDF within :data:`TIE` of one half, is a tie (at epsilon = 0 the mean k/2
of an odd k comes out a few ulps above the half). Elsewhere the decisions are the dense argmax's; where two
outputs' expected gains agree to rounding the dense float sums may order them either way (either is
optimal; tests/protocols/test_error_rules.py compares the two paths so).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from mpdp.protocols.decision.factors import Factor
from mpdp.protocols.functions import ErrorMeasure
from mpdp.protocols.numerics.kron import Matrix, kron_matvec

__all__ = ["TIE", "error_accuracy", "error_decisions"]

#: A posterior mean this close (relative to max(1, |Y| - 1)) to a half, or a CDF this close to one half
#: (relative), is a tie between two outputs, which goes to the smaller.
TIE = 1e-12

_BLOCK = 1 << 22  # likelihood entries per block of the one-group passes (float64: 32 MB a temporary)


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
    if measure.name == "squared-error":
        values = np.stack([np.ones(outputs.size), outputs.astype(np.float64)], axis=1)
        total, first = kron_matvec([f.posterior for f in factors], values, transpose=True).T
        mean = first / total
        low = np.floor(mean)
        up = mean - low > 0.5 + TIE * max(1, top)
        nearest: NDArray[np.int64] = np.clip(low + up, 0, top).astype(np.int64)
        return nearest
    if len(factors) != 1 or (np.diff(outputs) < 0).any():
        return None
    posterior = factors[0].posterior
    classes = posterior.shape[1]
    median = np.empty(classes, dtype=np.int64)
    width = posterior.shape[0] if isinstance(posterior, np.ndarray) else int(np.diff(posterior.indptr).max())
    step = max(1, _BLOCK // max(1, width))
    for start in range(0, classes, step):
        stop = min(classes, start + step)
        first_row, column = _columns(posterior, start, stop)  # (n,), (n, width): P(j | c) from first_row on
        cdf = np.cumsum(column, axis=1)
        below = (cdf < (0.5 - TIE) * cdf[:, -1:]).sum(axis=1)  # rows before the median: its offset in the band
        median[start:stop] = outputs[np.minimum(first_row + below, outputs.size - 1)]
    return median


def error_accuracy(factors: Sequence[Factor], outputs: NDArray[np.int64], measure: ErrorMeasure,
                   decisions: NDArray[np.int64]) -> NDArray[np.float64] | None:
    """``A[j] = sum_c F[j, c] w(f(j), d(c))`` for decisions d on a view of one group (002 eqs. (1), (3)
    before averaging or minimizing), one pass over its likelihood's entries (a band's nonzeros).

    Args:
        factors: the view's likelihood factors (forward ``F[j, c] = P(c | j)``). outputs: int64
            (num_inputs,), f on each input class. measure: the error measure. decisions: int64 (num_classes,).

    Returns:
        float64 (num_inputs,); None for several groups (the engines' column sums serve them).
    """
    if len(factors) != 1:
        return None
    forward: Matrix = factors[0].forward
    rows = forward.shape[0]
    accuracy = np.empty(rows)
    if isinstance(forward, np.ndarray):
        step = max(1, _BLOCK // max(1, forward.shape[1]))
        for start in range(0, rows, step):
            stop = min(rows, start + step)
            gain = measure.gain(outputs[start:stop, None], decisions[None, :])
            accuracy[start:stop] = (forward[start:stop] * gain).sum(axis=1)
        return accuracy
    band = sp.csr_matrix(forward)  # a band is CSR already: no copy
    indptr = band.indptr
    start = 0
    while start < rows:  # blocks of whole rows of about _BLOCK entries
        stop = max(start + 1, int(np.searchsorted(indptr, indptr[start] + _BLOCK, side="right")) - 1)
        stop = min(stop, rows)
        lo, hi = int(indptr[start]), int(indptr[stop])
        row = np.repeat(np.arange(start, stop), np.diff(indptr[start:stop + 1]))
        terms = band.data[lo:hi] * measure.gain(outputs[row], decisions[band.indices[lo:hi]])
        accuracy[start:stop] = np.bincount(row - start, weights=terms, minlength=stop - start)
        start = stop
    return accuracy


def _columns(posterior: Matrix, start: int, stop: int) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Columns start..stop-1 of a posterior as (first row, values from it on), zero-padded to one width:
    int64 (n,) and float64 (n, width). A band's column (the transposed CSR band, so a CSC matrix) holds a
    contiguous run of rows, as :func:`mpdp.protocols.decision.factors.banded_count_likelihood` builds it."""
    if isinstance(posterior, np.ndarray):
        return np.zeros(stop - start, dtype=np.int64), posterior[:, start:stop].T
    band = sp.csc_matrix(posterior)  # CSC already (the CSR band's transpose): no copy
    lo, hi = band.indptr[start:stop], band.indptr[start + 1:stop + 1]
    sizes = hi - lo
    offsets = np.arange(int(sizes.max()))
    inside = offsets[None, :] < sizes[:, None]
    at = np.minimum(lo[:, None] + offsets[None, :], max(0, int(hi[-1]) - 1))
    first_row = band.indices[lo].astype(np.int64)
    assert np.array_equal(band.indices[hi - 1] - first_row, sizes - 1), "a band's column is a run of rows"
    return first_row, np.where(inside, band.data[at], 0.0)
