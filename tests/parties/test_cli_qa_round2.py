"""Regressions from the second newcomer pass: sizes, empty rounds, unreadable files, plot scope."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main
from mpdp.protocols import RandomizedResponse, SizeLimitError
from mpdp.protocols.optimal import WORST_CASE_MAX_CLASSES, check_worst_case_size

UNREACHABLE = ["--broker", "mqtt://127.0.0.1:9"]


def test_worst_case_lp_size_is_refused_up_front(capsys: pytest.CaptureFixture[str]) -> None:
    # 20 distinct epsilons: 2^20 classes, an LP that ran out of 23 GB before this check
    code = main(["simulate", *UNREACHABLE, "--parties", "20", "--epsilon", "0.5:2", "--worst-case"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--rule average" in err and "2048" in err
    with pytest.raises(SizeLimitError):
        check_worst_case_size([RandomizedResponse(0.1 * i) for i in range(1, 13)])  # 4096 classes
    check_worst_case_size([RandomizedResponse(0.1 * i) for i in range(1, 12)])  # 2048: allowed
    check_worst_case_size([RandomizedResponse(1.0)] * 5000)  # one group: count classes, no extra limit
    assert WORST_CASE_MAX_CLASSES == 2**11


def test_accuracy_by_default_skips_a_worst_case_lp_that_does_not_fit(capsys: pytest.CaptureFixture[str]) -> None:
    eps = ",".join(str(0.1 * i) for i in range(1, 15))
    assert main(["accuracy", "--epsilon", eps, "--function", "majority", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert set(report["rules"]) == {"average"} and "2048" in report["worst_case_skipped"]
    assert main(["accuracy", "--epsilon", eps, "--function", "majority", "--rule", "worst-case"]) == 2


@pytest.mark.parametrize("argv", [
    ["accuracy", "--epsilon", "1,1", "--function", "table:@{bin}"],
    ["simulate", *UNREACHABLE, "--parties", "5", "--epsilon", "{bin}"],
    ["mechanism", "--graph", "{bin}", "--epsilon", "1"],
])
def test_binary_files_are_one_line_errors(argv: list[str], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "bin.txt"
    binary.write_bytes(bytes(range(256)) * 4)
    assert main([a.replace("{bin}", str(binary)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "UTF-8" in err


def test_truth_table_outputs_are_bounded(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["accuracy", "--epsilon", "1,1", "--function", "table:0,1,1,99999999999999999999999"]) == 2
    assert "0..4095" in capsys.readouterr().err


def test_compose_plot_draws_only_what_it_can(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compose", "--epsilon", "0.1,0.2", "--plot", str(tmp_path / "y.png")]) == 2
    assert "-k" in capsys.readouterr().err and not (tmp_path / "y.png").exists()
    assert main(["compose", "--epsilon", "0.2", "--delta", "0.001", "-k", "10",
                 "--plot", str(tmp_path / "b.png")]) == 0
    assert (tmp_path / "b.png").stat().st_size > 1000


@pytest.mark.integration
@pytest.mark.timeout(90)
def test_worst_case_rule_with_a_round_nobody_takes_part_in(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    votes = tmp_path / "v.csv"
    votes.write_text("a,b\n1,?\n0,?\n1,?\n")
    out = tmp_path / "r.json"
    assert main(["simulate", "--dataset", str(votes), "--worst-case", "--repetitions", "5", "--seed", "2",
                 "--quiet", "--workers", "1", "--json", str(out),
                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]) == 0
    first, empty = json.loads(out.read_text())["rounds"]
    assert empty["n_parties"] == 0 and empty["empirical_accuracy"] == 1.0 and first["n_parties"] == 3


@pytest.mark.parametrize("limit", ["-1", "0", "nan", "inf"])
def test_accuracy_time_limit_is_checked(limit: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["accuracy", "--epsilon", "1,1", "--function", "xor", f"--time-limit={limit}"]) == 2
    assert "--time-limit" in capsys.readouterr().err


def test_monte_carlo_interval_stays_within_the_gains() -> None:
    import numpy as np

    from mpdp.analysis.accuracy import monte_carlo_accuracy
    from mpdp.protocols import accuracy_measure, observer_average_rule, parse_function

    mechs = [RandomizedResponse(0.5 + 0.01 * i) for i in range(40)]
    f = parse_function("majority")
    rule = observer_average_rule(mechs, f, accuracy_measure("zero-one", 2))
    est = monte_carlo_accuracy(rule, f, np.eye(2), 1, np.random.default_rng(1))
    assert 0.0 <= est.interval[0] <= est.average <= est.interval[1] <= 1.0
