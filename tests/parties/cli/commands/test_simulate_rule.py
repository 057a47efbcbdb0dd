"""``mpdp simulate --rule worst-case`` and ``--party-decisions``: JSON names the rule, the theory is the
worst-case rule's exact accuracy on the true input (recomputed here), sizes the LP cannot hold are refused."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mpdp.analysis.theory.accuracy import input_accuracy
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main
from mpdp.parties.session.datasets import random_dataset
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse
from mpdp.protocols.rules.optimal import optimal_rules
from tests.parties.cli.invoke import refused


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_worst_case_rule_with_party_decisions(mosquitto: BrokerEndpoint, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.json"
    code = main(["simulate", "--parties", "6", "--rounds", "2", "--epsilon", "1", "--repetitions", "40",
                 "--worst-case", "--party-decisions", "--seed", "3", "--workers", "1",
                 "--json", str(out), "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"])
    assert code == 0
    document = json.loads(out.read_text())
    assert document["rule"] == "worst-case" and document["party_decisions"] is True
    # the dataset the command drew: child 0 of SeedSequence(seed, spawn_key=(2**31,))
    dataset_seq = np.random.SeedSequence(3, spawn_key=(2**31,)).spawn(3)[0]
    bits = random_dataset(6, 2, np.random.default_rng(dataset_seq)).bits
    f, w = parse_function("majority"), accuracy_measure("zero-one", 2)
    mechs = [RandomizedResponse(1.0)] * 6
    for j, entry in enumerate(document["rounds"]):
        assert entry["theory_exact"] and "worst-case" in entry["theory_method"]
        rule = optimal_rules(mechs, f, w, rule="worst-case").worst_case.rule
        assert entry["theoretical_accuracy"] == pytest.approx(input_accuracy(rule, f, w, bits[:, j]), abs=1e-12)
        parties = [input_accuracy(optimal_rules(mechs, f, w, observer=i, rule="worst-case").worst_case.rule,
                                  f, w, bits[:, j]) for i in range(6)]
        assert entry["party_theoretical_accuracy"] == pytest.approx(np.mean(parties), abs=1e-12)
        assert 0.0 <= entry["party_accuracy"] <= 1.0 and entry["party_decisions_missing"] == 0
        assert entry["party_law_holds"] is True
    assert "parties' own decisions (worst-case rules)" in capsys.readouterr().out


@pytest.mark.parametrize("flag", [["--rule", "worst-case"], ["--worst-case"]])
def test_worst_case_refused_where_the_lp_cannot_be_built(flag: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # 20 parties with epsilons drawn from 0.5:2 are 20 distinct parameters: an LP over 2^20 input classes
    line = refused(capsys, "simulate", "--parties", "20", "--rounds", "1", "--epsilon", "0.5:2", *flag,
                   "--broker", "mqtt://127.0.0.1:1", "--quiet")
    assert "--rule average" in line and "GB of memory" in line and f"{2**20:,} input classes" in line


@pytest.mark.integration
@pytest.mark.timeout(90)
def test_worst_case_rule_with_a_round_nobody_takes_part_in(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    votes = tmp_path / "v.csv"
    votes.write_text("a,b\n1,?\n0,?\n1,?\n")
    out = tmp_path / "r.json"
    assert main(["simulate", "--dataset", str(votes), "--worst-case", "--repetitions", "5", "--seed", "2",
                 "--quiet", "--workers", "1", "--json", str(out),
                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]) == 1  # round b: nothing to decide from
    first, empty = json.loads(out.read_text())["rounds"]
    assert empty["n_parties"] == 0 and empty["status"] == "no-answers" and first["n_parties"] == 3
    assert first["status"] == "complete"
