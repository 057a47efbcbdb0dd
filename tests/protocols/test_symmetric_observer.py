"""The observer's average-case rule for symmetric f against brute force over all inputs (002 eq. 5)."""

import itertools
import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols import (
    RandomizedResponse,
    accuracy_measure,
    count_posterior,
    observer_average_rule,
    parse_function,
)

VECTORS = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "decision_rules.json").read_text())


def _brute_force_gain(mechs, f, w, tau):
    """sum_x P(tau | x) w(f(x), y), normalised: eq. (5) of 002 enumerated over all 2^k inputs."""
    k = len(mechs)
    table = f.truth_table(k)
    gain = np.zeros(w.shape[1])
    for idx, x in enumerate(itertools.product([0, 1], repeat=k)):
        p = np.prod([m.channel[xi, t] for m, xi, t in zip(mechs, x, tau)])
        gain += p * w[table[idx]]
    return gain / gain.sum() if gain.sum() > 0 else gain


@given(st.lists(st.floats(0, 1), min_size=1, max_size=12))
def test_count_posterior_is_the_poisson_binomial(p: list[float]) -> None:
    pmf = count_posterior(np.array(p))
    brute = np.zeros(len(p) + 1)
    for x in itertools.product([0, 1], repeat=len(p)):
        brute[sum(x)] += np.prod([pi if xi else 1 - pi for pi, xi in zip(p, x)])
    np.testing.assert_allclose(pmf, brute, atol=1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0, 3), st.sampled_from([0.0, 0.0, 0.1, 0.3])), min_size=1, max_size=6),
    st.sampled_from(["majority", "sum", "xor", "threshold:2", "or"]),
    st.sampled_from(["zero-one", "absolute-error"]),
    st.integers(0, 2**32 - 1),
)
def test_rule_matches_brute_force_argmax(params, name, measure, seed) -> None:
    mechs = [RandomizedResponse(e, d) for e, d in params]
    f = parse_function(name)
    k = len(mechs)
    w = accuracy_measure(measure, f.output_size(k))
    rule = observer_average_rule(mechs, f, w)
    rng = np.random.default_rng(seed)
    taus = np.array([[rng.integers(m.num_symbols) for m in mechs] for _ in range(5)], dtype=np.uint8)
    decided = rule.decide(taus)
    for tau, y in zip(taus, decided):
        gain = _brute_force_gain(mechs, f, w, tau)
        if gain.sum() == 0:  # an impossible transcript (e.g. four-output symbol 0 and 3 clash)
            continue
        assert gain[y] >= gain.max() - 1e-9


def _vector_cases():
    for case in VECTORS["cases"]:
        inp = case["inputs"]
        if inp["observer"] == "central" and "avg_rule_central" in case["expected"] \
                and inp["function_name"] != "table":
            yield pytest.param(case, id=case["id"])


@pytest.mark.parametrize("case", list(_vector_cases()))
def test_vectors_central_average_rule_decisions(case) -> None:
    inp = case["inputs"]
    mechs = [RandomizedResponse(e, d, four_output=inp["mechanism"] == "approx_rr")
             for e, d in zip(inp["eps"], inp["delta"])]
    f = parse_function(inp["function_name"])
    rule = observer_average_rule(mechs, f, np.array(inp["w"]))
    taus = np.array(list(itertools.product(*[range(m.num_symbols) for m in mechs])), dtype=np.uint8)
    np.testing.assert_array_equal(rule.decide(taus), case["expected"]["avg_rule_central"])


def test_extreme_epsilon_decides_like_the_plain_count() -> None:
    mechs = [RandomizedResponse(1000.0)] * 5 + [RandomizedResponse(np.inf)] * 4
    rule = observer_average_rule(mechs, parse_function("majority"), np.eye(2))
    taus = np.array([[1] * 5 + [0] * 4, [0] * 5 + [1] * 4], dtype=np.uint8)
    np.testing.assert_array_equal(rule.decide(taus), [1, 0])
    assert np.isfinite(rule.expected_gain(taus)).all()


def test_large_k_is_fast_enough_and_finite() -> None:
    rng = np.random.default_rng(0)
    mechs = [RandomizedResponse(e) for e in rng.uniform(0.1, 3, 2000)]
    taus = rng.integers(0, 2, size=(3, 2000)).astype(np.uint8)
    gains = observer_average_rule(mechs, parse_function("sum"), accuracy_measure("absolute-error", 2001)).expected_gain(taus)
    assert np.isfinite(gains).all()


@settings(max_examples=30, deadline=None)
@given(k=st.integers(1, 8), epsilon=st.floats(0.05, 3.0), delta=st.sampled_from([0.0, 0.05]),
       seed=st.integers(0, 2**32 - 1))
def test_identical_parties_decide_by_symbol_counts_as_by_brute_force(k: int, epsilon: float, delta: float,
                                                                    seed: int) -> None:
    """With one mechanism for all, the observer's gain is computed once per distinct symbol count vector;
    it equals eq. (5) of 002 enumerated over all 2^k inputs for every transcript."""
    mechs = [RandomizedResponse(epsilon, delta)] * k
    f, w = parse_function("majority"), accuracy_measure("zero-one", 2)
    rule = observer_average_rule(mechs, f, w)
    rng = np.random.default_rng(seed)
    transcripts = np.stack([m.sample(int(b), 12, rng) for m, b in zip(mechs, rng.integers(0, 2, k))], axis=1)
    got = rule.expected_gain(transcripts)
    for row, tau in zip(got, transcripts):
        np.testing.assert_allclose(row / row.sum(), _brute_force_gain(mechs, f, w, tau), atol=1e-12)
