"""``mpdp simulate --protocol curator``: refusals before anything starts (exit 2), and a small run
through a real mosquitto whose JSON carries the protocol and the rr comparison."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpdp.analysis.theory.theory import observer_accuracy_on_input
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main
from mpdp.protocols.functions import accuracy_measure, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse


@pytest.mark.parametrize(("extra", "needle"), [
    (["--function", "sum"], "other functions: protocol rr"),
    (["--function", "sum"], "--function='sum' is not allowed: one of majority (or passed), and, or, xor (or parity), "
                            "threshold:T for the curator protocol"),
    (["--epsilon", "0.5:2"], "--epsilon='0.5:2' is not allowed: one value with protocol curator"),
    # a bad T named the function, not mpc's --threshold (it said "--threshold=1 is not allowed")
    (["--function", "threshold:x"], "--function='threshold:x' is not allowed: threshold:T with an integer T >= 0"),
    (["--function", "threshold:-1"], "--function='threshold:-1' is not allowed: threshold:T with an integer T >= 0"),
])
def test_curator_refusals_exit_2(capsys: pytest.CaptureFixture[str], extra: list[str], needle: str) -> None:
    argv = ["simulate", "--parties", "5", "--protocol", "curator", "--broker", "mqtt://127.0.0.1:1", *extra]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("mpdp: error:") and needle in err and err.count("\n") == 1


def test_curator_refuses_an_epsilon_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    levels = tmp_path / "eps.txt"
    levels.write_text("1\n2\n1\n")
    argv = ["simulate", "--parties", "3", "--protocol", "curator", "--epsilon", str(levels)]
    assert main(argv) == 2 and "per-party levels: protocol rr" in capsys.readouterr().err


@pytest.mark.integration
@pytest.mark.timeout(90)
def test_cli_runs_both_protocols(capsys: pytest.CaptureFixture[str], mosquitto: BrokerEndpoint,
                                 tmp_path: Path) -> None:
    common = ["simulate", "--parties", "7", "--rounds", "2", "--seed", "5", "--repetitions", "40",
              "--workers", "1", "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]
    assert main([*common, "--protocol", "curator", "--epsilon", "inf", "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert "curator releases" in out and "rr theory" in out
    curator = json.loads((tmp_path / "c.json").read_text())
    assert curator["protocol"] == "curator"
    for entry in curator["rounds"]:
        assert entry["empirical_accuracy"] == 1.0 and entry["theoretical_accuracy"] == 1.0
        assert entry["rr_theoretical_accuracy"] == 1.0  # at eps = inf randomized response is exact too
    assert main([*common, "--epsilon", "0.5", "--json", str(tmp_path / "r.json")]) == 0
    rr = json.loads((tmp_path / "r.json").read_text())
    assert rr["protocol"] == "rr" and all("rr_theoretical_accuracy" not in r for r in rr["rounds"])
    assert main([*common, "--protocol", "curator", "--epsilon", "0.5", "--json", str(tmp_path / "c2.json")]) == 0
    curator = json.loads((tmp_path / "c2.json").read_text())
    for mine, theirs in zip(curator["rounds"], rr["rounds"], strict=True):
        assert mine["rr_theoretical_accuracy"] == pytest.approx(theirs["theoretical_accuracy"], abs=1e-12)
    one = curator["rounds"][0]
    # the rr figure is observer_accuracy_on_input on the same votes at the same epsilon
    ones = one["yes_count"]
    x = [1] * ones + [0] * (one["n_parties"] - ones)
    expected = observer_accuracy_on_input([RandomizedResponse(0.5)] * len(x), x, parse_function("majority"),
                                          accuracy_measure("zero-one", 2)).value
    assert one["rr_theoretical_accuracy"] == pytest.approx(expected, abs=1e-12)
