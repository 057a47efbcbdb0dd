"""The posterior rule's expected gains from reported-one counts: identical pure parties at 10^5 and beyond.

When all k parties use the same pure randomized response (p = e^eps / (1 + e^eps), q = 1 - p), the
central observer's posterior of the number of ones depends on the transcript only through the count t of
reported ones: ``S | t = Bin(t, p) + Bin(k - t, q)`` (002 eq. (1), the kernel of
:mod:`mpdp.protocols.rules.count_threshold`). Writing the gain table ``G[s, y] = w(g(s), y)`` as its first row
plus its steps, ``G[s] = G[0] + sum_{m <= s} (G[m] - G[m - 1])``, the expected gain of answering y is::

    E[G[S, y] | t] = G[0, y] + sum_m P(S >= m | t) (G[m, y] - G[m - 1, y]),

a sum over the counts m where G changes (one for majority, AND, OR, "at least m"), each tail
``P(S >= m | t)`` for the whole window of observed counts from ONE recurrence
(:func:`mpdp.protocols.rules.count_threshold.threshold_tails`, certified, ~0.7 s at k = 10^5). The cost per
round is that of the window (at most k + 1 counts), whatever the number of repetitions; the O(k^2)
Poisson-binomial pass of :func:`mpdp.protocols.rules.symmetric.count_posterior` per distinct count is avoided.
The decisions are :func:`mpdp.protocols.rules.symmetric.argmax_decision` of these gains, the same rule.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.rules.count_threshold import threshold_tails

__all__ = ["COUNT_STEPS_MAX", "count_gains", "gain_steps"]

#: Most steps of the gain table over the count that :func:`count_gains` takes (each step is one
#: recurrence over the window; a gain with more steps, e.g. ``sum``, keeps the per-count posterior).
COUNT_STEPS_MAX = 4


def gain_steps(gain: NDArray[np.float64]) -> NDArray[np.int64]:
    """The counts m in 1..k where the gain table changes: ``gain[m] != gain[m - 1]``.

    Args:
        gain: float64 (k + 1, |Y|), ``gain[s, y] = w(g(s), y)``.

    Returns:
        int64 array, ascending.
    """
    steps: NDArray[np.int64] = 1 + np.flatnonzero((gain[1:] != gain[:-1]).any(axis=1)).astype(np.int64)
    return steps


def count_gains(epsilon: float, gain: NDArray[np.float64], counts: NDArray[np.integer]) -> NDArray[np.float64]:
    """The central observer's posterior expected gain of every decision at each reported-one count.

    Args:
        epsilon: the parties' common level (0..inf), pure randomized response.
        gain: float64 (k + 1, |Y|), ``gain[s, y] = w(g(s), y)`` for s ones among the k parties.
        counts: integer array (n,), reported ones per transcript, each in 0..k.

    Returns:
        float64 (n, |Y|): ``E[gain[S, y] | t]`` with ``S | t = Bin(t, p) + Bin(k - t, q)``.

    Raises:
        ParameterError: a count outside 0..k.
        CertificateError: a recurrence missed its independent end point (see ``threshold_tails``).
    """
    k = gain.shape[0] - 1
    t = np.asarray(counts, dtype=np.int64)
    if t.size == 0:
        return np.zeros((0, gain.shape[1]))
    lo, hi = int(t.min()), int(t.max())
    if lo < 0 or hi > k:
        raise ParameterError("reported-one count", lo if lo < 0 else hi, f"a count in 0..{k}")
    window = np.repeat(gain[:1], hi - lo + 1, axis=0)
    for m in gain_steps(gain):
        window += np.outer(threshold_tails(k, epsilon, int(m), lo, hi), gain[m] - gain[m - 1])
    out: NDArray[np.float64] = window[t - lo]
    return out
