"""Reproduce every value of ../shared/vectors/decision_rules.json (copied to tests/vectors/) to 1e-9."""

from __future__ import annotations

import itertools
import json
import pathlib

import numpy as np
import pytest

from mpdp.protocols.decision.closed_forms import corollary_3_1, xor_accuracy
from mpdp.protocols.decision.engines import build_problem
from mpdp.protocols.decision.worst_case import solve_worst_case
from mpdp.protocols.functions import TruthTable, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules

CASES = json.loads((pathlib.Path(__file__).parents[1] / "vectors" / "decision_rules.json").read_text())["cases"]
TOL = 1e-9


def _setup(case):
    i = case["inputs"]
    four = i["mechanism"] == "approx_rr"
    mechs = [RandomizedResponse(e, d, four_output=four) for e, d in zip(i["eps"], i["delta"])]
    observer = None if i["observer"] == "central" else int(i["observer"].split()[1])
    return mechs, np.array(i["w"], dtype=float), observer


@pytest.mark.parametrize("engine", ["general", "symmetric"])
@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_vector(case, engine):
    mechs, w, observer = _setup(case)
    inputs, expected = case["inputs"], case["expected"]
    named = parse_function(inputs["function_name"])
    assert named.truth_table(inputs["k"]).tolist() == inputs["truth_table"]
    function = named if engine == "symmetric" else TruthTable(tuple(inputs["truth_table"]))
    lp_heavy = engine == "general" and inputs["mechanism"] == "approx_rr" and inputs["k"] >= 6
    which = "average" if lp_heavy else "both"
    result = optimal_rules(mechs, function, w, observer, which, engine)
    assert result.engine == engine
    avg = result.average
    assert avg.average_accuracy == pytest.approx(expected["avg_optimal_accuracy"], abs=TOL)
    assert avg.worst_case_accuracy == pytest.approx(expected["avg_rule_worst_case_accuracy"], abs=TOL)
    if result.worst_case is not None and expected["worst_case_optimal_accuracy"] is not None:
        wc = result.worst_case
        assert wc.worst_case_accuracy == pytest.approx(expected["worst_case_optimal_accuracy"], abs=TOL)
        assert wc.upper_bound - wc.worst_case_accuracy < TOL
    taus = np.array(list(itertools.product(*[range(m.num_symbols) for m in mechs])), dtype=np.uint8)
    if "avg_rule_central" in expected:
        assert avg.rule.decide(taus).tolist() == expected["avg_rule_central"]
    for b in (0, 1):
        key = f"avg_rule_party_own_bit_{b}"
        if key in expected:
            # transcripts impossible given x_i = b (a revealing symbol of the other bit) have no
            # meaningful decision; compare where P(tau_i | x_i = b) > 0
            possible = mechs[observer].channel[b][taus[:, observer]] > 0
            got = avg.rule.decide(taus, own_bits=b)
            assert got[possible].tolist() == np.array(expected[key])[possible].tolist()


@pytest.mark.parametrize("case", [c for c in CASES if "worst_case_lp_per_own_bit" in c["expected"]],
                         ids=lambda c: c["id"])
def test_vector_party_lp_per_own_bit(case):
    mechs, w, observer = _setup(case)
    problem = build_problem(mechs, parse_function(case["inputs"]["function_name"]), w, observer)
    values = [solve_worst_case(v).value for v in problem.views]
    assert values == pytest.approx(case["expected"]["worst_case_lp_per_own_bit"], abs=TOL)


@pytest.mark.parametrize("case", [c for c in CASES if "closed_form_product" in c["expected"]],
                         ids=lambda c: c["id"])
def test_vector_closed_forms(case):
    mechs, _, observer = _setup(case)
    known = () if observer is None else (observer,)
    got = xor_accuracy([m.epsilon for m in mechs], [m.delta for m in mechs], known)
    assert got == pytest.approx(case["expected"]["closed_form_product"], abs=TOL)
    if "closed_form_corollary_3_1" in case["expected"]:
        value = corollary_3_1(len(mechs), mechs[0].epsilon)
        assert value == pytest.approx(case["expected"]["closed_form_corollary_3_1"], abs=TOL)
