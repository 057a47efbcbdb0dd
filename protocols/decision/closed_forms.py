"""Closed forms for XOR (002 Corollary 3.1 and §3), cross-checked in the tests against the engines.

With randomized response, the XOR of the received bits is the optimal decision for both notions of
accuracy, and it is right exactly when an even number of the unknown parties' reports are flipped. For
(epsilon_i, delta_i) four-output parties the report is flipped with probability (1 - delta_i) / (1 + e^eps_i),
so, with the observer knowing the parties in ``known`` (a party knows its own bit)::

    ACC = (1 + prod_{i not known} (1 - 2 (1 - delta_i) / (1 + e^{eps_i}))) / 2.

For k homogeneous pure parties with lambda = e^eps this is Corollary 3.1 of 002::

    ACC_ave = ACC_wc = sum_{i=0}^{floor(k/2)} C(k, 2i) lambda^{k-2i} / (1 + lambda)^k,

with the high-privacy expansion ACC = 1/2 + 2^{-(k+1)} eps^k + O(eps^{k+1}). If the parties could
collaborate (compute the XOR first and privatize only it) the accuracy would be
lambda / (1 + lambda) = 1/2 + eps/4 + O(eps^3) (002 §3 prints the second term as (1/4) eps^2: a misprint,
see the tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy.special import expit

from mpdp.protocols.randomization.mechanisms import check_delta, check_epsilon

__all__ = [
    "collaborative_xor_accuracy",
    "collaborative_xor_expansion",
    "corollary_3_1",
    "xor_accuracy",
    "xor_high_privacy_expansion",
]


def xor_accuracy(epsilons: Sequence[float], deltas: Sequence[float] | None = None,
                 known: Sequence[int] = ()) -> float:
    """Optimal XOR accuracy (average = worst case) with heterogeneous (four-output) randomized response.

    Args:
        epsilons: eps_i per party; deltas: delta_i per party (default all 0).
        known: indices of parties whose bits the observer knows (party i: ``(i,)``).

    Returns:
        (1 + prod over unknown parties of (delta_i + (1 - delta_i) tanh(eps_i / 2))) / 2, in [1/2, 1]
        (``1 - 2 (1 - delta) expit(-eps)`` written without its cancellation at small epsilon).
    """
    eps = [check_epsilon(e) for e in epsilons]
    dels = [0.0] * len(eps) if deltas is None else [check_delta(d) for d in deltas]
    skip = set(known)
    terms = [d + (1.0 - d) * math.tanh(e / 2.0)
             for i, (e, d) in enumerate(zip(eps, dels, strict=True)) if i not in skip]
    return 0.5 * (1.0 + float(np.prod(terms)))


def corollary_3_1(k: int, epsilon: float) -> float:
    """002 Corollary 3.1: sum_{i=0}^{floor(k/2)} C(k, 2i) lambda^{k-2i} / (1 + lambda)^k, lambda = e^eps.

    Evaluated in the product form ``(1 + tanh(eps / 2)^k) / 2`` (P(an even number of k flips), each flip
    with probability 1 / (1 + lambda)): >= 1/2 as computed, for every k and epsilon, where the sum of the
    binomial terms came out up to 6e-16 below 1/2."""
    eps = check_epsilon(epsilon)
    return 0.5 * (1.0 + math.tanh(eps / 2.0) ** int(k))


def xor_high_privacy_expansion(k: int, epsilon: float) -> float:
    """Leading terms of Corollary 3.1 as eps -> 0 (002 §3): 1/2 + 2^{-(k+1)} eps^k."""
    return 0.5 + 2.0 ** (-(k + 1)) * float(epsilon) ** k


def collaborative_xor_accuracy(epsilon: float) -> float:
    """Accuracy if the parties first compute the XOR and release it once with randomized response:
    lambda / (1 + lambda) (002 §3)."""
    return float(expit(check_epsilon(epsilon)))


def collaborative_xor_expansion(epsilon: float) -> float:
    """Leading terms of lambda / (1 + lambda) as eps -> 0: 1/2 + eps/4 (the paper prints eps^2 / 4)."""
    return 0.5 + float(epsilon) / 4.0
