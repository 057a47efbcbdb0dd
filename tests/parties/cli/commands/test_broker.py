"""``mpdp broker config`` on the command line: what it writes for a roster, and its refusals (one line,
exit code 2). The configuration itself runs a real mosquitto in tests/broker/test_lockdown.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from mpdp.parties.cli.main import main


@pytest.fixture(scope="module")
def roster(tmp_path_factory: pytest.TempPathFactory) -> Path:
    keys = tmp_path_factory.mktemp("keys")
    assert main(["keys", "--parties", "5", "--split", "0-2", "--split", "3-4", "--session", "cli-1",
                 "--out", str(keys)]) == 0
    return keys / "roster.json"


def test_it_writes_one_login_per_split_and_the_observer(roster: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["broker", "config", "--roster", str(roster), "--split", "0-2", "--split", "3-4",
                 "--host", "broker.example", "--party-decisions", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "clients").iterdir()) == ["observer", "parties-0-2", "parties-3-4"]
    acl = (tmp_path / "broker" / "acl").read_text()
    assert "user parties-3-4\n" in acl and "topic write mpdp/cli-1/party/4\n" in acl
    assert "topic write mpdp/cli-1/decision/4\n" in acl
    out = capsys.readouterr().out
    assert "session cli-1" in out and "mosquitto -c" in out
    for folder in (tmp_path / "clients").iterdir():  # nothing secret on the terminal
        assert (folder / "password").read_text() not in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--split", "0-2"], "--split='0-2' is not allowed: ranges that cover each of the 5 parties once"),
        (["--split", "0-2", "--split", "2-4"], "--split"),
        (["--port", "8883", "--observer-port", "8883"], "--observer-port=8883"),
        (["--days", "0"], "--days=0"),
    ],
)
def test_bad_options_are_named(roster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                               args: list[str], message: str) -> None:
    assert main(["broker", "config", "--roster", str(roster), "--out", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("mpdp: error: ") and message in err[0]
    assert not any(tmp_path.iterdir())  # refused before anything was written


def test_an_earlier_configuration_needs_force(roster: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["broker", "config", "--roster", str(roster), "--out", str(tmp_path)]
    assert main(base) == 0
    assert main(base) == 2 and "--force" in capsys.readouterr().err
    assert main([*base, "--force"]) == 0


def test_an_mpc_roster_gets_a_login_per_compute_server(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    keys = tmp_path / "keys"
    assert main(["keys", "--parties", "3", "--protocol", "mpc", "--servers", "3", "--session", "cli-mpc",
                 "--out", str(keys)]) == 0
    assert main(["broker", "config", "--roster", str(keys / "roster.json"), "--out", str(tmp_path / "b")]) == 0
    assert sorted(p.name for p in (tmp_path / "b" / "clients").iterdir()) == [
        "mpc-server-0", "mpc-server-1", "mpc-server-2", "observer", "parties-0-2"]
    acl = (tmp_path / "b" / "broker" / "acl").read_text()
    assert "user mpc-server-2\ntopic read mpdp/cli-mpc/mpc/job/2\n" in acl
    out = capsys.readouterr().out
    assert "3 compute servers" in out and "-> compute server 2 only" in out
