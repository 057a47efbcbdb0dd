"""Theorem 3.1 of 002, shown: no random non-interactive eps-DP protocol beats randomized response with
its optimal rule, for the central observer and for each party, in average and worst-case accuracy.

Competitors are drawn three ways per party: randomized response garbled by a random channel, a mixture
of randomized responses at smaller epsilon, and a random channel pulled toward a constant row until it
is eps-DP (not built from randomized response at all). Values for the competitors are brute force
(dense likelihood, argmax rule, dense LP); for randomized response they come from the engines.
"""

from __future__ import annotations

import numpy as np
import pytest

from mpdp.protocols.functions import TruthTable, accuracy_measure
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.protocols import brute


def _is_dp(m: np.ndarray, eps: float) -> bool:
    lam = np.exp(eps)
    return bool((m[0] <= lam * m[1] + 1e-12).all() and (m[1] <= lam * m[0] + 1e-12).all())


def _random_dp_channel(eps: float, rng: np.random.Generator) -> np.ndarray:
    kind = rng.integers(3)
    if kind == 0:  # garbling of randomized response
        garble = rng.dirichlet(np.ones(3), size=2)
        m = RandomizedResponse(eps).channel @ garble
    elif kind == 1:  # mixture of randomized responses at smaller epsilon (with its own symbols)
        weights = rng.dirichlet(np.ones(2))
        m = np.hstack([wt * RandomizedResponse(eps * rng.random()).channel for wt in weights])
    else:  # any channel, pulled toward a constant row until eps-DP
        raw = rng.dirichlet(np.ones(3), size=2)
        const = rng.dirichlet(np.ones(3))
        lo, hi = 0.0, 1.0
        for _ in range(60):
            mid = (lo + hi) / 2
            if _is_dp((1 - mid) * raw + mid * const, eps):
                hi = mid
            else:
                lo = mid
        m = (1 - hi) * raw + hi * const
    assert _is_dp(m, eps) and np.allclose(m.sum(axis=1), 1.0)
    return m


@pytest.mark.parametrize("seed", range(6))
def test_no_random_protocol_beats_randomized_response(seed):
    rng = np.random.default_rng(seed)
    k = 2 + seed % 2
    eps = rng.uniform(0.2, 1.5, k)
    function = TruthTable(tuple(rng.integers(0, 3, 1 << k)))
    w = accuracy_measure(["zero-one", "absolute-error"][seed % 2], function.output_size(k))
    mechs = [RandomizedResponse(e) for e in eps]
    for observer in [None, *range(k)]:
        rr = optimal_rules(mechs, function, w, observer)
        for _ in range(4):
            channels = [_random_dp_channel(e, rng) for e in eps]
            avg, _, lp = brute.observer_values(channels, function.truth_table(k), w, observer)
            assert avg <= rr.average.average_accuracy + 1e-9
            assert lp <= rr.worst_case.worst_case_accuracy + 1e-9
