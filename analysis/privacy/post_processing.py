"""000 Theorem 2.5, constructively: if the privacy region of M2 lies inside that of M1, then M2 = T o M1 for a
post-processing channel T; this module builds T (a linear program over finite alphabets) and verifies it.

A binary-input mechanism is its channel ``M[b, y] = P(y | b)``, shape (2, m) (b = 0, 1: the two hypotheses of
000 §2). T is a stochastic matrix of shape (m1, m2) with ``M1 @ T = M2``: 2 m2 equations in m1 m2 unknowns
in [0, 1] with rows summing to 1, which HiGHS decides. By Blackwell's theorem (000 Theorem 2.5 for two
hypotheses) it is feasible exactly when region(M2) is inside region(M1); when it is not, the refusal names
a vertex (alpha, beta) of M2's region that M1's region does not hold: a test M2 admits and M1 cannot match.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.optimize import linprog

from mpdp.analysis.privacy.privacy_region import PrivacyRegion
from mpdp.protocols.errors import ParameterError, SolverError

__all__ = ["outside_point", "post_processing_channel"]

#: |M1 @ T - M2| allowed after the LP, entrywise.
VERIFY_TOLERANCE = 1e-9


def _channel(m: NDArray[np.float64], name: str) -> NDArray[np.float64]:
    m = np.asarray(m, dtype=np.float64)
    if m.ndim != 2 or m.shape[0] != 2 or (m < 0).any() or not np.allclose(m.sum(axis=1), 1.0, atol=1e-12):
        raise ParameterError(name, getattr(m, "shape", m), "a stochastic matrix of shape (2, m): P(y | b)")
    return m


def outside_point(m1: NDArray[np.float64], m2: NDArray[np.float64], atol: float = 1e-12) -> tuple[float, float] | None:
    """A vertex (false alarm, missed detection) of region(M2) outside region(M1), or None if M2's region is
    inside M1's (000 Theorem 2.5's condition). Channels: float64 (2, m1) and (2, m2)."""
    r1 = PrivacyRegion.from_channel(*_channel(m1, "m1"))
    r2 = PrivacyRegion.from_channel(*_channel(m2, "m2"))
    below = r2.missed_detection < r1.lower_boundary(r2.false_alarm) - atol
    if not below.any():
        return None
    j = int(np.flatnonzero(below)[0])
    return float(r2.false_alarm[j]), float(r2.missed_detection[j])


def post_processing_channel(m1: NDArray[np.float64], m2: NDArray[np.float64]) -> NDArray[np.float64]:
    """The channel T (float64 (m1, m2), rows summing to 1) with ``M1 @ T = M2`` (000 Theorem 2.5).

    Raises:
        ParameterError: a channel that is not (2, m) stochastic, or region(M2) not inside region(M1) (the
            message names a point of region(M2) outside region(M1): no T exists).
        SolverError: HiGHS did not find T although the regions are nested (numerically borderline), or
            the T found misses M2 by more than 1e-9.
    """
    m1, m2 = _channel(m1, "m1"), _channel(m2, "m2")
    point = outside_point(m1, m2)
    if point is not None:
        raise ParameterError("m2", f"(alpha, beta) = ({point[0]:.6g}, {point[1]:.6g})",
                             "a mechanism whose privacy region lies inside m1's (this test of m2 is beyond m1's "
                             "region, so m2 is no post-processing of m1)")
    a, b = m1.shape[1], m2.shape[1]
    # unknowns T[i, j] row-major: (M1 @ T)[x, j] = sum_i M1[x, i] T[i, j];  sum_j T[i, j] = 1
    a_eq = sp.vstack([sp.kron(m1, sp.identity(b)), sp.kron(sp.identity(a), np.ones((1, b)))], format="csr")
    b_eq = np.concatenate([m2.ravel(), np.ones(a)])
    bounds = np.zeros((a * b, 2))
    bounds[:, 1] = 1.0
    # scipy-stubs types bounds as (min, max) pairs (as in protocols/decision/worst_case.py)
    res = linprog(np.zeros(a * b), A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")  # type: ignore[call-overload]
    if res.status != 0 or res.x is None:
        raise SolverError(int(res.status), str(res.message))
    t = np.clip(np.asarray(res.x, dtype=np.float64).reshape(a, b), 0.0, None)
    t /= t.sum(axis=1, keepdims=True)
    miss = float(np.abs(m1 @ t - m2).max())
    if miss > VERIFY_TOLERANCE:
        raise SolverError(0, f"the post-processing found misses M2 by {miss:.3g} (> {VERIFY_TOLERANCE:g})")
    return t
