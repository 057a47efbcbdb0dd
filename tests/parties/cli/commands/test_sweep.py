"""``mpdp sweep`` end to end: the issue's check, JSON, --jobs bit for bit, errors, help."""

from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
import tracemalloc

import pytest

import mpdp
from mpdp.parties.api import sweep_pool
from mpdp.parties.cli.main import main
from tests.parties.cli.invoke import ok, refused


@pytest.mark.slow
def test_majority_101_every_point_consistent_with_theory(capsys, tmp_path) -> None:
    """The issue's done-when check (20,000 samples a point instead of 100,000): alpha = 0.05 family-wise."""
    out = tmp_path / "sweep"
    assert main(["sweep", "--function", "majority", "--parties", "101", "--epsilon", "0.05:2:20",
                 "--samples", "20000", "--out", str(out), "--quiet"]) == 0
    doc = json.loads((out / "sweep.json").read_text())
    assert len(doc["points"]) == 20 * 2 * 2 and all(p["consistent"] for p in doc["points"])
    assert doc["inputs"]["epsilon"][0] == 0.05 and doc["inputs"]["epsilon"][-1] == pytest.approx(2.0)
    with open(out / "sweep.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 80 and {r["consistent"] for r in rows} == {"True"}
    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    assert capsys.readouterr().out == ""


def test_json_to_stdout_and_same_result_with_two_jobs(capsys, tmp_path) -> None:
    argv = ["sweep", "--epsilon", "0.5:1.5:2", "--parties", "7", "--rule", "worst-case", "--samples", "2000",
            "--seed", "5", "--json"]
    one = ok(capsys, *argv)
    two = ok(capsys, *argv, "--jobs", "2")
    assert one["points"] == two["points"] and len(one["points"]) == 4
    assert main([*argv, str(tmp_path / "s.json"), "--quiet"]) == 0
    assert capsys.readouterr().out == ""
    assert json.loads((tmp_path / "s.json").read_text())["points"] == one["points"]


@pytest.mark.parametrize(("argv", "match"), [
    (["--epsilon", "1:2"], "LO:HI:STEPS"),
    (["--epsilon", "0:2:5"], "log scale"),
    (["--epsilon", "1:2:3", "--rule", "median"], "rule"),
    (["--epsilon", "1", "--parties", "101", "--delta", "0.1"], "at most 60"),
])
def test_bad_options_are_one_line_errors(capsys, argv, match) -> None:
    assert match in refused(capsys, "sweep", *argv)


def test_help_teaches(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = capsys.readouterr().out
    assert "examples:\n  mpdp sweep --function majority" in text and "Bonferroni" in text


def test_dask_scheduler_gives_the_same_points(capsys) -> None:
    """--executor dask://HOST:PORT against a real local scheduler (threads, loopback TCP): bit for bit."""
    distributed = pytest.importorskip("distributed")
    argv = ["sweep", "--epsilon", "0.5:1.5:2", "--parties", "7", "--observer", "party", "--samples", "2000",
            "--seed", "9", "--json"]
    here = ok(capsys, *argv)
    # the scheduler's HTTP server always listens (dashboard_address=None means Dask's fixed port 8787, which
    # another job on the machine may hold): a free loopback port
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False, protocol="tcp",
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as cluster:
        address = cluster.scheduler_address.removeprefix("tcp://")
        there = ok(capsys, *argv, "--executor", f"dask://{address}")
    assert there["points"] == here["points"] and len(here["points"]) == 4


@pytest.mark.parametrize("url", ["tcp://127.0.0.1:8786", "dask://nohost", "dask://:8786"])
def test_executor_must_be_a_dask_address(capsys, url) -> None:
    assert "dask://HOST:PORT" in refused(capsys, "sweep", "--epsilon", "1", "--executor", url)


@pytest.mark.parametrize(("argv", "match"), [
    (["--live", "--executor", "dask://127.0.0.1:8786"], "--live='--executor dask://127.0.0.1:8786'"),
    (["--live", "--jobs", "2"], "--live without --jobs or --executor"),
    (["--workers", "2"], "--workers=2 is not allowed: only with --live"),
    (["--broker", "embedded"], "--broker='embedded' is not allowed: only with --live"),
    (["--round-timeout", "5"], "--round-timeout=5.0"),
    (["--reconnect-window", "30"], "--reconnect-window=30.0 is not allowed: only with --live"),
    (["--protocol", "curator", "--rule", "average"], "--rule='average' is not allowed: none with protocol curator"),
    (["--protocol", "curator", "--function", "sum"], "--function='sum' is not allowed: a binary function"),
    (["--protocol", "curator", "--function", "sum", "--live", "--parties", "1"],  # binary for one voter
     "--function='sum' is not allowed: one of majority (or passed), and, or, xor (or parity), threshold:T for "
     "the curator protocol live"),
])
def test_live_and_curator_options_are_checked(capsys, argv, match) -> None:
    parties = [] if "--parties" in argv else ["--parties", "3"]  # an option is given once
    assert match in refused(capsys, "sweep", "--epsilon", "1", *parties, *argv)


def test_help_says_live_points_run_one_after_another(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["sweep", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "Live points run one after another (no --jobs, no --executor)" in text and "--protocol" in text


@pytest.mark.integration
@pytest.mark.slow
def test_live_sweep_end_to_end_with_estimate_and_files(capsys, tmp_path, mosquitto) -> None:
    out = tmp_path / "live"
    assert main(["sweep", "--epsilon", "0.5:2:2", "--parties", "3", "--rule", "average", "--observer", "central",
                 "--live", "--samples", "15", "--seed", "3", "--workers", "1", "--broker", mosquitto.url,
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "mpdp sweep --live: 2 points x 15 rounds" in text and "estimate: about" in text
    assert "every point consistent with theory" in text
    doc = json.loads((out / "sweep.json").read_text())
    assert doc["source"] == "live" and [p["samples"] for p in doc["points"]] == [15, 15]
    assert "live runs over a broker" in _figure_title(out)
    files = mpdp.report(out)  # the report page of the live sweep says how it was measured
    assert files.kind == "sweep" and files.rows == 2
    assert "per point: exact theory against live runs over a broker" in files.markdown.read_text()


def _figure_title(out) -> str:
    """The PNG is there; the title of the figure the same document gives says how it was measured."""
    from mpdp.analysis.sweeps.sweep import SweepPoint, SweepResult

    assert (out / "sweep.png").read_bytes()[:4] == b"\x89PNG"
    doc = json.loads((out / "sweep.json").read_text())
    figure = SweepResult(tuple(SweepPoint(**p) for p in doc["points"]), doc["inputs"], doc["alpha"],
                         doc["source"]).plot()
    return figure.axes[0].get_title()


def test_one_point_is_one_point(capsys) -> None:
    text = ok(capsys, "sweep", "--epsilon", "1", "--parties", "5", "--rule", "average", "--observer", "central",
              "--samples", "500", "--seed", "2")
    assert "1 point," in text and "Bonferroni over 1 point)" in text and "1 points" not in text


def test_a_sweep_over_its_time_limit_is_refused_up_front_with_its_estimate(capsys, tmp_path, monkeypatch) -> None:
    """A 20,000-step grid (80,000 points of 100,000 samples: hours on one core by the model; the newcomer's
    100,000 steps started that many hours of work unannounced) is refused before any point runs or --out is
    made; --jobs divides the estimate where a pool pays, and is suggested only while it could; --time-limit
    is checked like every command's."""
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)
    out = tmp_path / "never"
    line = refused(capsys, "sweep", "--epsilon", "0.1:2:20000", "--out", str(out))
    assert re.fullmatch(r"mpdp: error: the sweep \(80,000 points x 100,000 samples\) would take about [\d.]+ h and "
                        r"\S+ MB, over the 30 min time limit: fewer points or samples, --jobs N, or --time-limit "
                        r"SECONDS", line), line
    assert not out.exists()
    argv = ["sweep", "--epsilon", "0.5:1:2", "--parties", "7", "--rule", "average", "--observer", "central",
            "--samples", "20000"]
    from mpdp.analysis.sweeps.sweep import plan_sweep
    seconds = plan_sweep([0.5, 1.0], parties=7, rule="average", observer="central", samples=20000).estimate().seconds
    assert "time limit" in refused(capsys, *argv, "--time-limit", f"{seconds / 1.5:.6g}")
    line = refused(capsys, *argv, "--jobs", "2", "--time-limit", f"{seconds / 1.5:.6g}")  # run here: no faster
    assert re.search(r"over the [\d.]+ s time limit: fewer points or samples, or --time-limit SECONDS$", line), line
    assert "2 points" in ok(capsys, *argv, "--jobs", "2", "--time-limit", f"{seconds * 1.5:.6g}")
    assert "--time-limit=0.0 is not allowed" in refused(capsys, *argv, "--time-limit", "0")


def test_jobs_past_the_cores_say_so_and_small_work_runs_here(capsys, monkeypatch) -> None:
    """``--jobs 1000`` started a process per point (20 on 2 cores: 34 s against 5.5 s with ``--jobs 1``) under a
    header that said "1000 job(s)": the header says where the points run and why not --jobs, once."""
    monkeypatch.setattr(sweep_pool, "usable_cores", lambda: 2)
    argv = ["sweep", "--epsilon", "0.1:2:5", "--parties", "101", "--samples", "200"]
    text = " ".join(ok(capsys, *argv, "--jobs", "1000").split())
    assert text.startswith("mpdp sweep: 20 points x 200 samples, here (--jobs 1000: the points' work, about "), text
    assert text.count("--jobs") == 1 and "does not pay for a pool's start-up, about 3 s); about" in text
    monkeypatch.setattr(sweep_pool, "POOL_START_SECONDS", 0.0)  # a pool that always pays
    header = " ".join(ok(capsys, *argv, "--jobs", "1000").split())
    assert header.startswith("mpdp sweep: 20 points x 200 samples, 2 worker processes (--jobs 1000: capped at "
                             "the 2 usable cores); about"), header


def test_ten_million_epsilons_are_refused_at_once_in_bounded_memory(capsys) -> None:
    """``--epsilon 0.1:2:10000000`` grew to 16.9 GB before its refusal: its points are now estimated from the
    axes (one estimate per setting, 10^7 epsilons each) and refused well under 100 MB of allocations."""
    main(["sweep", "--epsilon", "0.1:2:2", "--parties", "101", "--rule", "average", "--samples", "1",
          "--quiet"])  # the imports and caches of a first sweep are not what is measured
    capsys.readouterr()
    tracemalloc.start()
    try:
        line = refused(capsys, "sweep", "--epsilon", "0.1:2:10000000", "--parties", "101")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert "the sweep (40,000,000 points x 100,000 samples) would take about" in line, line
    assert peak < 20e6, peak


def test_jobs_work_under_a_long_temporary_directory(tmp_path) -> None:
    """The forkserver's AF_UNIX socket lived under TMPDIR: a TMPDIR of 90 characters failed with 'OSError:
    AF_UNIX path too long'. Now the socket's directory is a short one under /tmp (multiprocessing removes it
    at exit), and the long TMPDIR is left empty."""
    long_dir = tmp_path / ("t" * max(1, 90 - len(str(tmp_path))))
    long_dir.mkdir()
    assert len(str(long_dir)) >= 90
    argv = ["sweep", "--epsilon", "0.5:1:2", "--parties", "7", "--rule", "average", "--observer", "central",
            "--samples", "2000", "--jobs", "2", "--json", "--quiet"]
    pooled = ("from mpdp.parties.api import sweep_pool; sweep_pool.POOL_START_SECONDS = 0.0  # points this small "
              f"run here else\nfrom mpdp.parties.cli.main import main; raise SystemExit(main({argv!r}))")
    run = subprocess.run([sys.executable, "-c", pooled],
                         env={**os.environ, "TMPDIR": str(long_dir)}, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    assert len(json.loads(run.stdout)["points"]) == 2
    assert list(long_dir.iterdir()) == []
