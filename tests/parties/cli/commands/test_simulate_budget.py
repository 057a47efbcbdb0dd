"""``mpdp simulate --budget``: validated before anything starts; the results carry the spent privacy."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from mpdp.analysis.privacy.composition import optimal_epsilon
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main


@pytest.mark.parametrize(("argv", "needle"), [
    (["--budget", "abc"], "--budget='abc'"),
    (["--budget", "1;1e-5"], "'1;1e-5'"),
    (["--budget=-1,1e-5"], "-1"),
    (["--budget", "2,1e-9"], "2,1e-09"),  # below the default delta_slack 1e-6
    (["--delta-slack", "1"], "--delta-slack"),
])
def test_bad_budget_is_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    # the broker URL is unreachable: reaching it would be a transport error, so the check came first
    code = main(["simulate", "--parties", "3", "--broker", "mqtt://127.0.0.1:9", *argv])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("mpdp: error: ") and needle in err, err
    assert multiprocessing.active_children() == []


@pytest.mark.integration
@pytest.mark.timeout(60)
def test_simulate_reports_spent_budget(mosquitto: BrokerEndpoint, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    # 4 parties, epsilon 1, 5 repetitions: 5 releases per round; budget 12 allows two rounds of three
    out = tmp_path / "r.json"
    code = main(["simulate", "--parties", "4", "--rounds", "3", "--epsilon", "1", "--repetitions", "5",
                 "--budget", "12,1e-5", "--seed", "5", "--workers", "1", "--json", str(out), "--out", str(tmp_path / "run"),
                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"])
    assert code == 1  # round 3: every party abstained (budget-exhausted), not decided
    document = json.loads(out.read_text())
    assert [r["status"] for r in document["rounds"]] == ["complete", "complete", "no-answers"]
    privacy = document["privacy"]
    assert privacy["budget"] == {"epsilon": 12.0, "delta": 1e-5} and privacy["delta_slack"] == 1e-6
    assert optimal_epsilon(1.0, 10, 1e-6) <= 12 < optimal_epsilon(1.0, 15, 1e-6)
    for party in privacy["parties"]:
        assert (party["rounds_answered"], party["releases"], party["first_refused"]) == (2, 10, 2)
        assert party["epsilon_optimal"] == pytest.approx(optimal_epsilon(1.0, 10, 1e-6), rel=1e-12)
        assert party["epsilon_basic"] == pytest.approx(10.0)
    assert privacy["summary"]["parties_out_of_budget"] == 4
    captured = capsys.readouterr()
    last = captured.out.strip().splitlines()[-1]
    assert last.startswith("privacy spent per party") and "4/4 parties ran out" in last
    errors = [line for line in captured.err.splitlines() if line.startswith("mpdp:")]
    assert errors == ["mpdp: warning: 1 of 3 round(s) had no answer to decide from: every party heard from abstained "
                      "(nothing was decided, their decisions are recorded as -1; abstention reason and parties): "
                      "2 (round-3: budget-exhausted 0-3) (exit code 1)"]
