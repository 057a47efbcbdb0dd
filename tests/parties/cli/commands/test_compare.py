"""``mpdp compare``: rr, curator and mpc live on one real mosquitto, same data and seed; refusals first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.parties.cli.main import main


@pytest.mark.parametrize(("extra", "needle"), [
    (["--threshold", "2"], "--threshold"),
    (["--servers", "0"], "--servers"),
    (["--epsilon", "-1"], "--epsilon"),
    (["--repetitions", "0"], "--repetitions"),
])
def test_refusals_exit_2_before_anything_starts(capsys: pytest.CaptureFixture[str], extra: list[str],
                                                needle: str) -> None:
    assert main(["compare", "--broker", "mqtt://127.0.0.1:1", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mpdp: error:") and needle in err and err.count("\n") == 1


@pytest.mark.integration
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_three_models_on_the_same_votes(mosquitto: BrokerEndpoint, tmp_path: Path) -> None:
    """eps = inf: every model is exact (theory 1 and measured 1 on every round, the tie included: the
    majority of 1, 0 is 0 for all three); costs are measured, and only mpc has servers."""
    votes = tmp_path / "v.csv"
    votes.write_text("a,b,c\n1,0,1\n1,1,0\n0,1,?\n1,0,0\n0,0,1\n")
    out, figure = tmp_path / "c.json", tmp_path / "c.png"
    assert main(["compare", "--dataset", str(votes), "--epsilon", "inf", "--repetitions", "10", "--seed", "2",
                 "--quiet", "--workers", "1", "--json", str(out), "--plot", str(figure),
                 "--broker", f"mqtt://127.0.0.1:{mosquitto.port}"]) == 0
    document = json.loads(out.read_text())
    assert [p["protocol"] for p in document["protocols"]] == ["rr", "curator", "mpc"]
    for protocol in document["protocols"]:
        assert [(r["voting"], r["yes"]) for r in protocol["rounds"]] == [(5, 3), (5, 2), (4, 2)]
        assert all(r["theory"] == 1.0 and r["measured"] == 1.0 for r in protocol["rounds"])
        cost = protocol["cost"]
        assert cost["seconds_per_round"] > 0 and cost["party_bytes_per_round"] > 100
        has_servers = protocol["protocol"] == "mpc"
        assert (cost["server_bytes_out_per_round"] is not None) == has_servers
    mpc = document["protocols"][2]["cost"]
    assert mpc["server_bytes_out_per_round"] > 0 and mpc["server_cpu_s_per_round"] > 0
    assert figure.stat().st_size > 10_000
