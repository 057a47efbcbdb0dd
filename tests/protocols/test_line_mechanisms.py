"""001 Theorems 3, 4, 5 and balanced mechanisms: closed forms against the paper, the vectors,
Theorem 2's propagation and the LP."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mpdp.protocols.colorings.coloring_mechanisms import optimal_mechanism
from mpdp.protocols.colorings.graphs import ColoredGraph, line_graph, majority_hypercube
from mpdp.protocols.colorings.line_mechanisms import (
    balanced_boundary_value,
    balanced_mechanism,
    boundary_homogeneous_mechanism,
    initial_behaviour,
    line_mechanism,
    terminal_behaviour,
    transition_parameter,
)
from mpdp.protocols.errors import ParameterError
from tests.protocols.fig2 import fig2_graph
from tests.protocols.lp_reference import lp_optimal


def test_line_vectors(graph_vectors) -> None:
    cases = [c for c in graph_vectors if c["kind"] == "graph_line"]
    assert len(cases) == 4
    for case in cases:
        i = case["inputs"]
        mech = line_mechanism(i["n_B"], i["n_R"], i["R_nB"], i["eps"], i["delta"])
        np.testing.assert_allclose(mech.red_probability, case["expected"]["R"], atol=1e-9)
        assert mech.transition == case["expected"]["tau"], case["id"]


def test_paper_4_3_line_example() -> None:
    # (4,3)-line, R_4 = 0.8, (log 1.3, 0.1): blue side 0.64, 0.432, 0.2553846..., red 12/13, 1, 1
    mech = line_mechanism(4, 3, 0.8, math.log(1.3), 0.1)
    want = [1 - (0.968 / 1.3), 0.432, 0.64, 0.8, 12 / 13, 1.0, 1.0]
    np.testing.assert_allclose(mech.red_probability, want, atol=1e-12)
    assert mech.transition == 1


def test_paper_one_thirteenth_example_by_pullback(graph_vectors) -> None:
    # R_h = R_l = 1/13 on Fig. 2: 0, 0, 0.2, 0.36, 0.568 and 0.744615... (printed 0.7447)
    g = fig2_graph(graph_vectors)
    homog = boundary_homogeneous_mechanism(g, 1 / 13, math.log(1.3), 0.1).probabilities()
    want = {**dict.fromkeys("abcgk", 0.0), **dict.fromkeys("hl", 1 / 13), **dict.fromkeys("inq", 0.2),
            **dict.fromkeys("dom", 0.36), **dict.fromkeys("jpr", 0.568), **dict.fromkeys("ef", 0.744615384615)}
    assert homog == pytest.approx(want, abs=1e-9)
    assert 1 - (1 - 0.568 - 0.1) / 1.3 == pytest.approx(0.744615384615, abs=1e-12)  # not 0.7447
    theorem2 = optimal_mechanism(g, {"h": 1 / 13, "l": 1 / 13}, math.log(1.3), 0.1).probabilities()
    assert theorem2 == pytest.approx(homog, abs=1e-12)


def test_balanced_majority_vectors(graph_vectors) -> None:
    for case in (c for c in graph_vectors if c["kind"] == "graph_balanced"):
        i, want = case["inputs"], case["expected"]["R"]
        k = len(next(iter(want)))
        got = balanced_mechanism(majority_hypercube(k), i["eps"], i["delta"]).probabilities()
        # the vectors name votes 1 (YES, blue) and 2 (NO); the hypercube names them 1 and 0
        assert {name: got[name.replace("2", "0")] for name in want} == pytest.approx(want, abs=1e-9)
        assert balanced_boundary_value(i["eps"], i["delta"]) == pytest.approx(case["expected"]["boundary_R_blue"])


def test_paper_balanced_majority_of_three() -> None:
    got = balanced_mechanism(majority_hypercube(3), math.log(2), 0.1).probabilities()
    assert got == pytest.approx({"111": 0.1, "110": 0.3, "101": 0.3, "011": 0.3,
                                 "100": 0.7, "010": 0.7, "001": 0.7, "000": 0.9}, abs=1e-12)


@settings(max_examples=50, deadline=None)
@given(nb=st.integers(1, 9), nr=st.integers(1, 9), r=st.floats(0, 1), eps=st.floats(0, 3),
       delta=st.floats(0, 0.5))
def test_theorem4_equals_theorem2_and_the_lp(nb, nr, r, eps, delta) -> None:
    line = line_mechanism(nb, nr, r, eps, delta).red_probability
    g = line_graph(nb, nr)
    prop = optimal_mechanism(g, {str(nb): r}, eps, delta).red_probability
    # Theorem 2's propagation works through 1 - R: near R = 0 its absolute error is about
    # 1e-16 e^(eps n) after n steps (e.g. 3e-12 at eps = 3, n = 5, r = 2^-52); the closed form is exact
    growth = 1e-12 + 1e-15 * np.exp(eps * (nb + nr))
    np.testing.assert_allclose(line, prop, atol=growth)
    doubled = ColoredGraph(np.concatenate([g.edges, g.edges]), g.red, g.names)  # parallel edges
    np.testing.assert_allclose(optimal_mechanism(doubled, {str(nb): r}, eps, delta).red_probability, line,
                               atol=growth)
    np.testing.assert_allclose(line, lp_optimal(g, {nb - 1: r}, eps, delta), atol=1e-7)


@settings(max_examples=50, deadline=None)
@given(r=st.floats(0, 1), eps=st.floats(0.01, 3), delta=st.floats(0, 0.5))
def test_initial_and_terminal_behaviour(r, eps, delta) -> None:
    n_b = 12
    mech = line_mechanism(n_b, 2, r, eps, delta)
    tau, a = mech.transition, math.exp(eps)
    steps = np.arange(n_b)
    written = 1 - (a**steps * (1 - r) + delta * (a**steps - 1) / (a - 1))  # Theorem 4, initial
    early = steps <= tau + 1
    np.testing.assert_allclose(mech.red_probability[::-1][2:][early], written[early], atol=1e-12)
    np.testing.assert_allclose(initial_behaviour(r, steps[early], eps, delta), written[early], atol=1e-12)
    late = steps[~early]
    np.testing.assert_allclose(terminal_behaviour(r, late, eps, delta),
                               mech.red_probability[::-1][2:][~early], atol=1e-12)
    threshold = (a + delta) / (a + 1)  # tau = last i with R_{n_B - i} >= (a + delta)/(a + 1)
    blue_r = mech.red_probability[:n_b][::-1]
    assert tau == max([i for i in range(n_b) if blue_r[i] >= threshold - 1e-12], default=-1)
    if r <= 0.5:  # blue likelier at the boundary: only the terminal recurrence
        assert transition_parameter(r, eps, delta) == -1


@pytest.mark.parametrize("k", [3, 4, 5])
def test_hypercube_collapse_without_loss(k) -> None:
    # Theorem 3 on the full hypercube: homogeneous boundary value, Theorem 2 on 2^k vertices == pullback
    g = majority_hypercube(k)
    eps, delta, r = 0.7, 0.05, 0.3
    bnd = np.flatnonzero(g.blue_boundary)
    full = optimal_mechanism(g, (bnd, np.full(bnd.size, r)), eps, delta).red_probability
    np.testing.assert_allclose(boundary_homogeneous_mechanism(g, r, eps, delta).red_probability, full,
                               atol=1e-12)
    np.testing.assert_allclose(lp_optimal(g, dict.fromkeys(bnd.tolist(), r), eps, delta), full, atol=1e-7)


def test_line_mechanism_checks_its_shape_without_building_the_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The average-optimal boundary search calls line_mechanism ~40 times: building the (n_B, n_R)-line's
    names each time took 40 of 48 s for and:10^6; the shape is still checked."""
    import mpdp.protocols.colorings.line_mechanisms as lm

    monkeypatch.setattr(lm, "line_graph", lambda *_: pytest.fail("line graph built"))
    line = lm.line_mechanism(3, 2, 0.5, math.log(2.0), 0.0)
    assert line.red_probability.tolist() == [0.125, 0.25, 0.5, 0.75, 0.875]  # e^eps = 2: halves away from dB
    with pytest.raises(ParameterError, match="n_R=0"):
        lm.line_mechanism(3, 0, 0.5, 1.0, 0.0)
