"""Kronecker-structured transforms: ``(A_1 ⊗ ... ⊗ A_G) x`` without forming the product matrix.

The likelihood of a transcript given an input factorizes over parties (002 eq. (8): every column of a
non-interactive protocol is a rank-one tensor), P(tau | x) = prod_i M_i[x_i, tau_i], so every sum of the
decision problem, ``sum_x P(tau | x) g(x)`` (002 eqs. (2), (5)) and ``sum_tau P(tau | x) h(tau)`` (eqs. (1),
(3)), is a Kronecker product applied to a vector. Applying the factors one axis at a time costs
``O(G * N * max_g r_g)`` for N entries instead of ``N^2`` for the dense 2^k x m^k matrix.

Index order (DESIGN.md): the first factor is the most significant digit, as in ``np.kron(A_1, ..., A_G)``.
Factors may be dense numpy arrays or ``scipy.sparse`` matrices (the banded count likelihoods of large
groups).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

__all__ = ["kron_matvec"]

#: A likelihood factor: dense float64, or the sparse band of a large group (CSR, its transpose CSC).
Matrix = NDArray[np.float64] | sp.csr_matrix[np.float64] | sp.csc_matrix[np.float64]


def _apply_axis(x: NDArray[np.float64], a: Matrix, left: int, right: int) -> NDArray[np.float64]:
    """Apply ``a`` (r, c) to the middle axis of x viewed as (left, c, right): out (left, r, right)."""
    r, c = a.shape
    x3 = x.reshape(left, c, right)
    if isinstance(a, np.ndarray) and r * c <= 16:
        # tiny factor (one party): a few fused multiply-adds over contiguous slabs
        out = np.empty((left, r, right))
        for s in range(r):
            np.multiply(x3[:, 0, :], a[s, 0], out=out[:, s, :])
            for t in range(1, c):
                out[:, s, :] += a[s, t] * x3[:, t, :]
        return out
    moved = np.moveaxis(x3, 1, 0).reshape(c, left * right)
    prod = a @ moved
    return np.moveaxis(np.asarray(prod).reshape(r, left, right), 0, 1)


def kron_matvec(
    factors: Sequence[Matrix], x: NDArray[np.float64], transpose: bool = False
) -> NDArray[np.float64]:
    """Compute ``(A_1 ⊗ ... ⊗ A_G) x`` (or with every ``A_g`` transposed).

    Args:
        factors: G matrices, ``A_g`` of shape (r_g, c_g) (dense float64 or scipy.sparse).
        x: float64 array of shape (prod c_g,) or (prod c_g, b); with ``transpose`` (prod r_g[, b]).
        transpose: apply ``A_1^T ⊗ ... ⊗ A_G^T`` instead.

    Returns:
        float64 array of shape (prod r_g[, b]) (with ``transpose``: (prod c_g[, b])).

    Cost: ``O(sum_g N_g * r_g * c_g / c_g)`` operations, N_g the size of the intermediate array; memory
    two intermediate arrays.
    """
    mats = [a.T if transpose else a for a in factors]
    vector = x.ndim == 1
    cur = np.asarray(x, dtype=np.float64).reshape(x.shape[0], -1)
    batch = cur.shape[1]
    dims_in = [a.shape[1] for a in mats]
    if int(np.prod(dims_in, dtype=np.int64)) != cur.shape[0]:
        raise ValueError(f"x has {cur.shape[0]} rows, the factors expect {int(np.prod(dims_in))}")
    dims = list(dims_in)
    for g, a in enumerate(mats):
        left = int(np.prod(dims[:g], dtype=np.int64))
        right = int(np.prod(dims[g + 1:], dtype=np.int64)) * batch
        cur = _apply_axis(cur, a, left, right)
        dims[g] = a.shape[0]
    out = np.ascontiguousarray(cur).reshape(-1, batch)
    return out[:, 0] if vector else out
