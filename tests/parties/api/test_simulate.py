"""``mpdp.simulate`` live: the same document as ``mpdp simulate --json`` for the same seeded run, over the
embedded broker and over a real mosquitto; inside a running event loop (Jupyter); awaited; and refused,
with one line and no process started, from a script's top level without a ``__main__`` guard."""

from __future__ import annotations

import json
import re
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure

import mpdp
from mpdp.broker.endpoint import BrokerEndpoint
from mpdp.broker.ports import free_loopback_port
from mpdp.parties.api import simulation
from mpdp.parties.api.schemas import validate_document
from mpdp.parties.api.topology import Topology
from mpdp.parties.cli.main import main
from mpdp.parties.session.datasets import Dataset
from mpdp.parties.session.progress import Progress
from mpdp.protocols.errors import ParameterError
from tests.calibration import scaled
from tests.parties.cli.invoke import ok

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

VOTES = np.array([[1, 0, 1], [1, 1, 0], [0, -1, 1], [1, 0, 0], [0, 1, 1]], dtype=np.int8)
RUN = {"epsilon": 1.0, "repetitions": 30, "seed": 7, "workers": 1, "progress": False}
VOLATILE = ("session", "wall_time_s", "broker", "topology")  # where a run ran: its own broker, connections


def _stable(document: dict) -> dict:
    stable = {k: v for k, v in document.items() if k not in VOLATILE}
    return stable | {"run": {k: v for k, v in document["run"].items() if k != "folder"}}


def _csv(tmp_path: Path) -> Path:
    path = tmp_path / "votes.csv"
    path.write_text("\n".join(",".join("?" if v < 0 else str(v) for v in row) for row in VOTES) + "\n")
    return path


def _check_rounds(r: mpdp.Simulation) -> None:
    assert [x.n_parties for x in r.rounds] == [int((VOTES[:, j] >= 0).sum()) for j in range(VOTES.shape[1])]
    assert [x.yes_count for x in r.rounds] == [int((VOTES[:, j] == 1).sum()) for j in range(VOTES.shape[1])]
    for x in r.rounds:
        assert x.repetitions == 30 and x.correct == round(x.empirical_accuracy * 30)


def test_simulate_over_the_embedded_broker_is_the_cli_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = _csv(tmp_path)
    r = mpdp.simulate(str(csv), broker="embedded", out=tmp_path / "run", **RUN)
    _check_rounds(r)
    assert r.to_dict()["broker"]["kind"] == "embedded"
    # where it ran: the broker it started (the parties' and the observer's), this machine, auto's choice and why
    topology = r.to_dict()["topology"]
    assert re.fullmatch(r"5 parties: per-party up to 17,083 \(their set-up estimated within 45 CPU-s\)", topology.pop("connections_reason")), topology
    assert topology == {"party_broker": r.outcome.broker_url, "observer_broker": None, "executor": "local",
                        "connections": "per-party", "workers": 1, "validators": 0}
    assert r.topology == Topology.from_json(r.to_dict()["topology"]) and "topology" not in r.to_dict()["inputs"]
    cli = ok(capsys, "simulate", "--dataset", str(csv), "--epsilon", "1.0", "--repetitions", "30", "--seed", "7",
             "--workers", "1", "--broker", "embedded", "--quiet", "--json", "-")
    assert _stable(r.to_dict()) == _stable(cli)
    assert validate_document(cli).kind == "simulate" and cli["inputs"]["repetitions"] == 30
    assert {p.name for p in (tmp_path / "run").iterdir()} == {"transcripts.sqlite", "results.json", "accuracy.png"}
    assert r.out == tmp_path / "run" and json.loads((r.out / "results.json").read_text()) == r.to_dict()
    assert r.to_dict()["run"] == {
        "status": "complete", "folder": str(tmp_path / "run"), "error": None, "rounds_decided": 3,
        "rounds": [{"round": i, "name": f"round-{i + 1}", "status": "complete"} for i in range(3)],
        "resume": None, "data": r.to_dict()["run"]["data"]}
    # without --out: a new run folder under the temporary directory, named on stderr, kept
    cli_folder = Path(cli["run"]["folder"])
    assert cli_folder.parent == Path(tempfile.gettempdir()) and cli_folder.name.startswith("mpdp-run-")
    assert json.loads((cli_folder / "results.json").read_text()) == cli
    figure = r.plot()
    assert isinstance(figure, Figure)
    (measured,) = [line for line in figure.axes[0].get_lines() if line.get_gid() == "measured"
                   and line.get_marker() == "o"]
    assert list(measured.get_xdata()) == [x.empirical_accuracy for x in r.rounds]
    assert list(measured.get_ydata()) == [0, 1, 2]
    frame = r.to_frame()
    assert list(frame["round"]) == ["round-1", "round-2", "round-3"]
    # the transcript in long form: every participant released 30 symbols per round
    exported = ok(capsys, "export", str(tmp_path / "run"), "--json")
    assert exported["rows"] == 30 * sum(x.n_parties for x in r.rounds)
    assert exported["sessions"] == [r.to_dict()["session"]]


def test_a_resumed_runs_progress_starts_at_the_rounds_on_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every report of the resumed run counts the two recorded rounds and their messages (it said round 0 until
    the workers were ready); the bar starts there."""
    mpdp.simulate(votes=VOTES, broker="embedded", out=tmp_path, **RUN)
    with sqlite3.connect(tmp_path / "transcripts.sqlite") as db:  # as a run stopped after two rounds
        recorded = db.execute("SELECT SUM(messages_received) FROM rounds WHERE round < 2").fetchone()[0]
        for table in ("rounds", "messages", "decisions"):
            db.execute(f"DELETE FROM {table} WHERE round >= 2")  # noqa: S608 - fixed table names
    db.close()
    started: list[tuple[int, int]] = []
    reports: list[tuple[int, int]] = []

    class Recorded(Progress):
        def __init__(self, dataset: Dataset, enabled: bool = True, *, rounds_done: int = 0,
                     messages_done: int = 0) -> None:
            super().__init__(dataset, enabled, rounds_done=rounds_done, messages_done=messages_done)
            started.append((rounds_done, messages_done))

        def update(self, rounds_done: int, messages_received: int) -> None:
            reports.append((rounds_done, messages_received))
            super().update(rounds_done, messages_received)

    monkeypatch.setattr(simulation, "Progress", Recorded)
    # where it runs is no input: another number of workers resumes it, and the topology says so
    r = mpdp.simulate(votes=VOTES, broker="embedded", out=tmp_path, resume=True, **{**RUN, "workers": 2})
    assert (r.topology.workers, r.topology.party_broker) == (2, r.outcome.broker_url)
    assert recorded == 2 * len(VOTES) and started == [(2, recorded)]  # one message per party and round
    assert reports and all(rounds >= 2 and messages >= recorded for rounds, messages in reports), reports
    assert reports[-1] == (3, sum(o.messages_received for o in r.outcome.rounds)), reports


def test_resuming_a_complete_run_returns_its_result_and_starts_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The typed result read from the folder (its document byte for byte, the rounds evaluated from the store);
    no broker (an address nobody listens on), no session run, no file written."""
    r = mpdp.simulate(votes=VOTES, broker="embedded", out=tmp_path, **RUN)
    files = {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()}

    def no_session(*args: object, **kwargs: object) -> None:
        raise AssertionError("a complete run started a session")

    monkeypatch.setattr(simulation, "run_async", no_session)
    again = mpdp.simulate(votes=VOTES, broker=f"mqtt://127.0.0.1:{free_loopback_port()}", out=tmp_path, resume=True,
                          **{**RUN, "progress": True})
    assert capsys.readouterr().err == f"mpdp: the run in {tmp_path} is complete (3 of 3 rounds): nothing to run\n"
    assert {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in tmp_path.iterdir()} == files
    assert isinstance(again, mpdp.Simulation) and again.to_dict() == r.to_dict() and again.out == r.out
    assert again.rounds == r.rounds and again.title == r.title and again.consistent == r.consistent
    assert [o.decisions.tolist() for o in again.outcome.rounds] == [o.decisions.tolist() for o in r.outcome.rounds]
    assert [o.symbols.tolist() for o in again.outcome.rounds] == [o.symbols.tolist() for o in r.outcome.rounds]
    assert again.outcome.spent == r.outcome.spent and again.outcome.broker_url == r.outcome.broker_url
    assert again.to_dp_event(0) == r.to_dp_event(0)


def test_a_cli_run_resumes_with_its_epsilon_spelled_otherwise_on_the_cli_or_in_python(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--epsilon 1`` resumed with ``--epsilon 1.0``/``1.00``/``1e0`` or ``epsilon=1``/``1.0`` was refused
    (``epsilon: 1 -> 1.0``): the same epsilon now resumes (the complete run's own document, nothing run);
    ``--epsilon 2`` is still refused, one line naming it."""
    argv = ["simulate", "--parties", "5", "--rounds", "2", "--repetitions", "5", "--seed", "5", "--workers", "1",
            "--quiet", "--out", str(tmp_path), "--json", "-"]
    first = ok(capsys, *argv, "--broker", "embedded", "--epsilon", "1")
    assert first["inputs"]["epsilon"] == "1" and first["run"]["status"] == "complete"
    nowhere = ["--broker", f"mqtt://127.0.0.1:{free_loopback_port()}"]  # a complete run needs no broker
    for spelling in ("1.0", "1.00", "1e0"):
        assert ok(capsys, *argv, *nowhere, "--resume", "--epsilon", spelling) == first
    for epsilon in (1, 1.0):
        again = mpdp.simulate(parties=5, rounds=2, repetitions=5, seed=5, workers=1, out=tmp_path, resume=True,
                              epsilon=epsilon, progress=False, broker=nowhere[1])
        assert again.to_dict() == first
    capsys.readouterr()
    assert main([*argv, *nowhere, "--resume", "--epsilon", "2"]) == 2
    assert capsys.readouterr().err == (
        f"mpdp: error: cannot resume the run in {tmp_path}: its inputs changed (only round_timeout may change): "
        "epsilon: 1 -> 2; the votes or the parties' epsilon/delta (their SHA-256 differs); resume with the "
        "recorded inputs, or start a new run in another folder\n")


def test_simulate_over_mosquitto_with_a_votes_array(mosquitto: BrokerEndpoint) -> None:
    r = mpdp.simulate(votes=VOTES, broker=mosquitto.url, **RUN)
    _check_rounds(r)
    assert r.to_dict()["broker"] == {"kind": "external", "url": mosquitto.url}
    # party 2 (votes 0, -, 1) answered rounds 0 and 2: 60 releases of epsilon 1, as dp_accounting's DpEvent
    dp_accounting = pytest.importorskip("dp_accounting")
    from mpdp.analysis.privacy.composition import optimal_epsilon

    rr = dp_accounting.RandomizedResponseDpEvent(noise_parameter=2 / (1 + np.e), num_buckets=2)
    event = r.to_dp_event(2)
    assert event.events == [rr] * 60
    pld = dp_accounting.pld.PLDAccountant(dp_accounting.NeighboringRelation.REPLACE_ONE).compose(event)
    exact = optimal_epsilon(1.0, 60, r.outcome.delta_slack)
    assert exact * (1 - 1e-12) <= pld.get_epsilon(r.outcome.delta_slack) <= 1.01 * exact
    with pytest.raises(ParameterError, match="party.*0..4"):
        r.to_dp_event(5)


def test_a_large_run_prints_its_estimate_first_and_per_worker_gives_the_same_document(
        mosquitto: BrokerEndpoint, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The estimate goes to stderr before the run (here "large" is lowered to this run's 15 party-rounds);
    --connections per-worker changes how parties connect, not what they send: the same seeded document."""
    monkeypatch.setattr("mpdp.parties.api.simulation.LARGE_RUN", VOTES.size)
    shared = mpdp.simulate(votes=VOTES, broker=mosquitto.url, connections="per-worker", **{**RUN, "progress": True})
    assert "estimate: about " in capsys.readouterr().err
    own = mpdp.simulate(votes=VOTES, broker=mosquitto.url, **RUN)
    assert _stable(shared.to_dict()) == _stable(own.to_dict())
    with pytest.raises(ParameterError, match="connections"):
        mpdp.simulate(votes=VOTES, broker=mosquitto.url, connections="per-host", **RUN)


def test_a_small_default_run_keeps_a_connection_per_party(
        mosquitto: BrokerEndpoint, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """connections defaults to auto, which for 5 parties is the deployed shape, said on the estimate line."""
    monkeypatch.setattr("mpdp.parties.api.simulation.LARGE_RUN", VOTES.size)
    mpdp.simulate(votes=VOTES, broker=mosquitto.url, **{**RUN, "progress": True})
    assert "; connections per-party (5 parties: per-party up to" in capsys.readouterr().err


async def test_simulate_inside_a_running_loop_runs_on_a_thread_and_async_awaits() -> None:
    # a notebook cell runs inside the kernel's event loop: mpdp.simulate must still return the result
    r = mpdp.simulate(votes=VOTES, broker="embedded", **RUN)
    _check_rounds(r)
    awaited = await mpdp.simulate_async(votes=VOTES, broker="embedded", **RUN)
    assert _stable(awaited.to_dict()) == _stable(r.to_dict())


SCRIPT = """\
import mpdp
r = mpdp.simulate(parties=3, repetitions=5, seed=1, broker="embedded", workers=1, progress=False)
print("done", len(r.rounds))
"""


def _run_script(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text(text)
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=scaled(100), cwd=tmp_path)


def test_a_script_without_main_guard_is_refused_before_any_process(tmp_path: Path) -> None:
    done = _run_script(tmp_path, SCRIPT)
    assert done.returncode == 1 and "done" not in done.stdout
    [line] = done.stderr.splitlines()  # the one line, no traceback (and no worker ever spawned)
    assert line.startswith("UnguardedMainError: mpdp.simulate starts worker processes")
    assert 'if __name__ == "__main__"' in line and "line 2" in line


def test_the_refusal_is_an_exception_code_can_catch(tmp_path: Path) -> None:
    caught = """\
import mpdp
from mpdp.protocols.errors import MpdpError
try:
    mpdp.simulate(parties=3, repetitions=5, seed=1, broker="embedded", workers=1, progress=False)
except MpdpError as exc:
    print(type(exc).__name__, "caught")
print("after")
"""
    done = _run_script(tmp_path, caught)
    assert (done.returncode, done.stdout.split(), done.stderr) == (0, ["UnguardedMainError", "caught", "after"], "")


def test_the_same_script_under_the_guard_runs(tmp_path: Path) -> None:
    guarded = "import mpdp\n\nif __name__ == \"__main__\":\n" + textwrap.indent(SCRIPT.split("\n", 1)[1], "    ")
    done = _run_script(tmp_path, guarded)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "done 1"
