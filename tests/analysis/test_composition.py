"""Homogeneous composition (000 Theorem 3.3 and the bounds) against independent computations."""

import itertools
import json
import math
import pathlib

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.analysis.privacy.composition import (
    compose_homogeneous,
    optimal_delta_slack,
    optimal_epsilon,
    theorem_3_3_corners,
    theorem_3_4_bound,
)
from mpdp.analysis.privacy.heterogeneous import compose_heterogeneous
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.binomial import log_binomial_pmf

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "composition.json").read_text())["cases"]
HOMOGENEOUS = [c for c in VECTORS if c["kind"] == "homogeneous"]


@pytest.mark.parametrize("case", HOMOGENEOUS, ids=[c["name"] for c in HOMOGENEOUS])
def test_reference_vectors(case: dict) -> None:
    r = compose_homogeneous(case["epsilon"], case["delta"], case["k"], case["delta_slack"])
    assert r.epsilon_tilde == pytest.approx(case["epsilon_tilde_optimal"], rel=1e-9)
    assert r.delta_total == pytest.approx(case["delta_total"], rel=1e-9)
    for name in ("theorem_3_4", "eq_7", "drv10", "basic"):
        assert r.bounds[name] == pytest.approx(case[name], rel=1e-9)
    assert r.method == "exact"


def _brute_delta(epsilon: float, k: int, eps_tilde: float) -> float:
    """Hockey-stick divergence of the k-fold pure randomized response, by enumerating 2^k outputs."""
    p = math.exp(epsilon) / (1 + math.exp(epsilon))
    total = 0.0
    for y in itertools.product((0, 1), repeat=k):
        flips = sum(y)
        p0 = p ** (k - flips) * (1 - p) ** flips
        p1 = p**flips * (1 - p) ** (k - flips)
        total += max(p0 - math.exp(eps_tilde) * p1, 0.0)
    return total


@pytest.mark.parametrize(("epsilon", "k"), [(0.5, 6), (0.1, 9), (1.3, 5), (2.0, 1), (0.7, 2)])
def test_brute_force_small_k(epsilon: float, k: int) -> None:
    for eps_tilde in np.linspace(0.0, k * epsilon, 23):
        assert optimal_delta_slack(epsilon, k, eps_tilde) == pytest.approx(_brute_delta(epsilon, k, eps_tilde), rel=1e-10, abs=1e-15)
    for slack in (1e-4, 1e-2, 0.05, 0.2):
        e = optimal_epsilon(epsilon, k, slack)
        if 0 < e < k * epsilon:  # the slack is met with equality between the corners
            assert _brute_delta(epsilon, k, e) == pytest.approx(slack, rel=1e-9)
        elif e == 0:
            assert _brute_delta(epsilon, k, 0.0) <= slack


def test_bruteforce_vector_by_enumeration() -> None:
    case = next(c for c in HOMOGENEOUS if c["name"].startswith("bruteforce"))
    assert _brute_delta(case["epsilon"], case["k"], case["epsilon_tilde_optimal"]) == pytest.approx(case["delta_slack"], rel=1e-8)


def _mp_corner_delta(epsilon: float, k: int, i: int) -> mpmath.mpf:
    """Theorem 3.3's delta_i, summed as printed in 000, in 50-digit arithmetic."""
    e = mpmath.mpf(epsilon)
    return sum(
        mpmath.binomial(k, l) * (mpmath.exp((k - l) * e) - mpmath.exp((k - 2 * i + l) * e)) for l in range(i)
    ) / (1 + mpmath.exp(e)) ** k


@pytest.mark.parametrize(("epsilon", "delta", "k"), [(0.1, 0.001, 30), (0.5, 0.0, 11), (3.0, 0.01, 8)])
def test_corner_identities(epsilon: float, delta: float, k: int) -> None:
    mpmath.mp.dps = 50
    eps_i, delta_total = theorem_3_3_corners(epsilon, delta, k)
    assert eps_i.size == k // 2 + 1
    for i in range(k // 2 + 1):
        assert eps_i[i] == pytest.approx((k - 2 * i) * epsilon, rel=1e-15)
        expected = 1 - (1 - mpmath.mpf(delta)) ** k * (1 - _mp_corner_delta(epsilon, k, i))
        assert delta_total[i] == pytest.approx(float(expected), rel=1e-11, abs=1e-300)
        # the optimum at the corner's slack is the corner itself
        if 0 < i and eps_i[i] > 0:
            assert optimal_epsilon(epsilon, k, float(_mp_corner_delta(epsilon, k, i))) == pytest.approx(eps_i[i], rel=1e-9)


def _mp_optimum(epsilon: float, k: int, slack: float) -> float:
    """Independent 40-digit solve: sum terms over l, find the piece, e^eps~ = (A - slack) / B."""
    mpmath.mp.dps = 40
    e = mpmath.mpf(epsilon)
    log_norm = k * mpmath.log1p(mpmath.exp(e))
    a = b = mpmath.mpf(0)
    for l in range((k + 1) // 2):
        lb = mpmath.log(mpmath.binomial(k, l)) - log_norm
        a += mpmath.exp(lb + (k - l) * e)
        b += mpmath.exp(lb + l * e)
        nxt = (k - 2 * (l + 1)) * e if l + 1 < (k + 1) // 2 else mpmath.mpf(0)
        if a - mpmath.exp(nxt) * b > slack:  # the slack is reached inside piece l
            return float(mpmath.log((a - slack) / b))
    return 0.0


@pytest.mark.parametrize(
    ("epsilon", "k", "slack"),
    [(0.01, 20000, 1e-6), (0.1, 3001, 1e-10), (50.0, 40, 1e-300), (2.0, 500, 1e-30), (1e-4, 10000, 0.3)],
)
def test_mpmath_large_k(epsilon: float, k: int, slack: float) -> None:
    assert optimal_epsilon(epsilon, k, slack) == pytest.approx(_mp_optimum(epsilon, k, slack), rel=1e-9)


def test_edge_cases() -> None:
    assert optimal_epsilon(0.0, 100, 1e-6) == 0.0
    assert optimal_epsilon(0.3, 17, 0.0) == 17 * 0.3
    assert optimal_epsilon(50.0, 10**6, 0.0) == 50.0 * 10**6
    assert optimal_epsilon(math.inf, 5, 0.1) == math.inf
    # k = 1: delta(eps~) = p - e^eps~ q on [0, eps)
    p, q = 1 / (1 + math.exp(-0.8)), 1 / (1 + math.exp(0.8))
    assert optimal_epsilon(0.8, 1, 0.05) == pytest.approx(math.log((p - 0.05) / q), rel=1e-12)
    assert optimal_epsilon(0.8, 1, 0.9) == 0.0  # slack above the total variation p - q
    # epsilon = 50: p^k ~ 1, the optimum is k eps + log(1 - slack) just below k eps
    assert optimal_epsilon(50.0, 10, 1e-3) == pytest.approx(500 + math.log1p(-1e-3), rel=1e-14)
    assert optimal_epsilon(1000.0, 10**6, 1e-5) == pytest.approx(1e9, rel=1e-12)
    assert 0 < optimal_epsilon(1e-8, 10**6, 1e-300) < 1e-2


def test_rejects_bad_input() -> None:
    for args in [(-0.1, 3, 0.1), (math.nan, 3, 0.1), (0.1, 0, 0.1), (0.1, 2.5, 0.1), (0.1, 3, 1.5), (0.1, 3, -1e-9),
                 (0.1, 3, 1.0)]:  # delta_tilde in [0, 1), as --delta-slack everywhere
        with pytest.raises(ParameterError):
            optimal_epsilon(*args)


@settings(max_examples=40, deadline=None)
@given(
    epsilon=st.floats(1e-3, 50.0),
    k=st.integers(1, 400),
    log_slack=st.floats(-300.0, -0.01),
)
def test_laws(epsilon: float, k: int, log_slack: float) -> None:
    slack = 10.0**log_slack
    r = compose_homogeneous(epsilon, 0.0, k, slack)
    e = r.epsilon_tilde
    assert 0.0 <= e <= k * epsilon * (1 + 1e-12)
    for name in ("theorem_3_4", "eq_7", "basic"):  # every bound is above the optimum
        if r.bounds[name] is not None:
            assert e <= r.bounds[name] * (1 + 1e-12)
    assert optimal_epsilon(epsilon, k, min(0.99, slack * 2)) <= e * (1 + 1e-12)  # monotone in the slack
    if 0 < e < k * epsilon:  # the inverse gives the slack back
        assert optimal_delta_slack(epsilon, k, e) == pytest.approx(slack, rel=1e-6)


def test_log_binomial_pmf_against_mpmath() -> None:
    mpmath.mp.dps = 40
    for n, eps in [(10, 0.5), (10**6, 0.01), (10**6, 50.0), (37, 0.0)]:
        lq, lp = -float(np.logaddexp(0, eps)), -float(np.logaddexp(0, -eps))
        ls = np.array([0, 1, 2, n // 3, n // 2, n - 1, n])
        q = 1 / (1 + mpmath.exp(eps))
        for l, got in zip(ls, log_binomial_pmf(ls, n, lq, lp), strict=True):
            exact = mpmath.log(mpmath.binomial(n, int(l))) + (n - int(l)) * mpmath.log(1 - q) + int(l) * mpmath.log(q)
            assert abs(got - float(exact)) <= 1e-13 * (1 + abs(float(exact)))


@pytest.mark.parametrize(("epsilon", "k", "slack"), [(0.25, 50, 1e-6), (0.5, 20, 1e-3), (0.125, 200, 1e-8)])
def test_dp_accounting_peer_exact_grid(epsilon: float, k: int, slack: float) -> None:
    """Google's PLD accountant (pessimistic rounding) on a grid containing epsilon: tiny error."""
    from dp_accounting.pld import common, privacy_loss_distribution

    pld = privacy_loss_distribution.from_privacy_parameters(
        common.DifferentialPrivacyParameters(epsilon, 0.0), value_discretization_interval=2.0**-14
    )
    peer = pld.self_compose(k).get_epsilon_for_delta(slack)
    assert optimal_epsilon(epsilon, k, slack) == pytest.approx(peer, rel=1e-6)


def test_dp_accounting_peer_default_grid() -> None:
    """Default interval 1e-4: the peer is pessimistic by at most its rounding (k * 1e-4) and is below
    the truth by no more than its floating-point error (here 2.4e-10 relative, checked with mpmath)."""
    from dp_accounting.pld import common, privacy_loss_distribution

    k, slack = 300, 1e-6
    pld = privacy_loss_distribution.from_privacy_parameters(common.DifferentialPrivacyParameters(0.1, 0.0))
    peer = pld.self_compose(k).get_epsilon_for_delta(slack)
    ours = optimal_epsilon(0.1, k, slack)
    assert ours == pytest.approx(_mp_optimum(0.1, k, slack), rel=1e-12)
    assert ours <= peer * (1 + 1e-8)
    assert peer - ours <= k * 1e-4


@pytest.mark.parametrize("epsilon", [1e200, 1e308])
def test_huge_epsilon_no_overflow(epsilon: float) -> None:
    # eps^2 overflows: Theorem 3.4's bound is then the sum of epsilons (inf past the float range)
    total = 10 * epsilon if epsilon < 1e300 else math.inf
    eps = np.full(10, epsilon)
    assert theorem_3_4_bound(eps, 1e-6) == pytest.approx(total, rel=1e-12)
    assert optimal_epsilon(epsilon, 10, 1e-6) == pytest.approx(total, rel=1e-12)
    mixed = compose_heterogeneous([epsilon, 1.0, epsilon], [0.1, 0.0, 0.2], 1e-6)
    assert mixed.bounds["basic"] == pytest.approx(2 * epsilon if epsilon < 1e300 else math.inf, rel=1e-12)
