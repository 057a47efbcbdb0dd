"""The up-front estimate of a live run: CPU work linear in parties and rounds (cheaper per party with shared
connections) over the CPU the machine gives the run, within 2x of measured runs; checked inputs; the run's
waits from the same model; printed before a large simulate."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from mpdp.parties.session.estimate import (
    ANSWER_CPU,
    AUTO_SETUP_CPU,
    BASE_BYTES,
    FD_HEADROOM,
    PARTY_BYTES,
    REPETITION_CPU,
    ROUND_SECONDS,
    RUN_PARALLELISM,
    SETUP_CPU,
    START_CPU,
    Machine,
    choose_connections,
    estimate_run,
    ready_timeout_floor,
    resolve_connections,
    round_timeout_floor,
    runnable_load,
)
from mpdp.parties.session.sizing import SESSION_TIME_LIMIT, session_cost
from mpdp.protocols.errors import ParameterError

LOADED = Machine(cores=2, load=4.9, speed=1.0)


def test_the_estimate_is_cpu_work_over_the_cpu_the_run_gets() -> None:
    """CPU seconds (start, set-up per party, answers per party and round) times the speed, over the fair share
    of the run's one busy process on 2 cores beside 4.9 other runnable processes: 2 x 1 / 5.9 cores."""
    assert RUN_PARALLELISM == 1.0
    machine = Machine(cores=2, load=4.9, speed=1.5)
    got = estimate_run(5000, 3, 10, "per-party", machine=machine)
    cpu = START_CPU + 5000 * SETUP_CPU["per-party"] + 3 * 5000 * (ANSWER_CPU["per-party"] + 10 * REPETITION_CPU)
    assert got.cpu_seconds == pytest.approx(1.5 * cpu, rel=1e-12)
    assert got.seconds == pytest.approx(1.5 * cpu / (2 / 5.9) + 3 * ROUND_SECONDS, rel=1e-12)
    assert got.peak_bytes == BASE_BYTES + 5000 * PARTY_BYTES["per-party"]
    assert got.machine == machine
    # an idle machine gives it a core
    idle = estimate_run(5000, 3, 10, "per-party", machine=Machine(cores=8, load=0.5))
    assert idle.seconds == pytest.approx(cpu + 3 * ROUND_SECONDS, rel=1e-12)


@pytest.mark.parametrize(("cores", "load", "busy", "share"), [
    (2, 0.0, 3, 2.0),  # all cores, the processes fit
    (8, 2.0, 3, 3.0),  # 3 + 2 <= 8: each busy process has a core
    (2, 4.9, 3, 6 / 7.9),  # fair share: 3 of 7.9 runnable processes on 2 cores
    (8, 6.0, 3, 24 / 9),  # 3 + 6 > 8
    (1, 0.0, 1, 1.0),
    (2, 4.9, 1, 2 / 5.9),
])
def test_the_share_is_cfs_fair_share(cores: int, load: float, busy: int, share: float) -> None:
    assert Machine(cores, load).share(busy) == pytest.approx(share, rel=1e-12)


def test_the_machine_is_measured_here() -> None:
    """Its cores are this process's affinity; its speed is a positive ratio of CPU seconds; the same
    measurement is reused for a run's estimate and waits."""
    machine = Machine.measure()
    assert machine.cores == len(os.sched_getaffinity(0)) and machine.load >= 0 and 0 < machine.speed < math.inf
    assert Machine.now() is Machine.now()


def _stat(pid: int, name: str, state: str, nice: int) -> str:
    """A /proc/PID/stat line (fields as proc(5) lists them: state 3rd, nice 19th)."""
    return f"{pid} ({name}) {state} 1 1 1 0 -1 4194304 126 0 0 0 5 1 0 0 {20 + nice} {nice} 1 0 239293 3133440 380"


def test_the_load_counts_runnable_processes_weighted_by_nice(tmp_path: Path) -> None:
    """A nice-0 runnable process counts 1, a nice-19 one 1.25^-19 (~0.014, CFS: weight 15 against 1024); a
    sleeping one nothing; nor this process (its name has a ') ' to test the parse), nor non-process entries."""
    for pid, name, state, nice in [(11, "burner", "R", 0), (12, "nice job) R", "R", 19), (13, "idle", "S", 0),
                                   (os.getpid(), "me", "R", 0)]:
        (tmp_path / str(pid)).mkdir()
        (tmp_path / str(pid) / "stat").write_text(_stat(pid, name, state, nice))
    (tmp_path / "self").mkdir()
    assert runnable_load(tmp_path) == pytest.approx(1 + 1.25**-19, rel=1e-12)
    assert 1.25**-19 == pytest.approx(15 / 1024, rel=0.02)  # the kernel's sched_prio_to_weight[39] / [20]


@pytest.mark.parametrize("bad", [{"cores": 0}, {"cores": 1.5}, {"load": -1.0}, {"load": math.inf}, {"speed": 0.0}])
def test_bad_machines_are_named(bad: dict[str, float]) -> None:
    args: dict[str, float] = {"cores": 2, "load": 1.0, "speed": 1.0, **bad}
    with pytest.raises(ParameterError, match=next(iter(bad))):
        Machine(**args)  # type: ignore[arg-type]


#: Runs measured with benchmarks/bench_simulate_scale.py (whole command; docs/benchmarks.md): parties, repetitions,
#: the machine when it started, wall seconds measured. 2026-12-02 21:12: the 1-minute load average, speed not
#: measured (1); 2026-12-03 06:46: as measured (other jobs at nice 19 only).
MEASURED = [
    (100_000, 1, Machine(2, 4.9), 129.0),
    (100_000, 200, Machine(2, 4.9), 70.0),
    (100_000, 1, Machine(2, 0.0, 0.9), 50.1),
    (100_000, 200, Machine(2, 0.0, 0.9), 40.8),
    (1_000_000, 1, Machine(2, 0.1, 0.9), 567.5),  # 06:52, the estimate's first 10^6 run: round 1 closed
]


@pytest.mark.parametrize(("parties", "repetitions", "machine", "wall"), MEASURED)
def test_the_estimate_is_within_2x_of_measured_runs(parties: int, repetitions: int, machine: Machine,
                                                    wall: float) -> None:
    got = estimate_run(parties, 1, repetitions, "per-worker", machine=machine)
    assert wall / 2 < got.seconds < 2 * wall


def test_the_round_timeout_floor_is_thrice_a_rounds_estimate() -> None:
    per_party = ANSWER_CPU["per-worker"] + REPETITION_CPU
    assert round_timeout_floor(100_000, 1, "per-worker", machine=LOADED) == pytest.approx(
        3 * (ROUND_SECONDS + 100_000 * per_party / (2 / 5.9)), rel=1e-12)
    assert round_timeout_floor(435, 200, machine=LOADED) < 60.0  # the House keeps the default 60 s


def test_the_up_front_check_uses_the_printed_estimate() -> None:
    cost = session_cost(100_000, 1, 1, "per-worker", machine=LOADED)
    printed = estimate_run(100_000, 1, 1, "per-worker", machine=LOADED)
    assert (cost.seconds, cost.memory_bytes) == (printed.seconds, printed.peak_bytes)
    assert cost.seconds < SESSION_TIME_LIMIT  # 10^5 parties over 2 workers, one round: minutes, allowed
    assert session_cost(2_000_000, 1, machine=LOADED).seconds > SESSION_TIME_LIMIT  # refused


def test_describe_scales_its_unit() -> None:
    assert "GB peak memory" in estimate_run(10, 1, 1, machine=LOADED).describe()
    assert " s on the wire" in estimate_run(10, 1, 1, machine=LOADED).describe()
    assert " h on the wire" in estimate_run(1_000_000, 100, 200, machine=LOADED).describe()
    assert "2 cores, load 4.9, speed 1.0" in estimate_run(10, 1, 1, machine=LOADED).describe()


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"parties": 0}, "parties"), ({"rounds": 1.5}, "rounds"), ({"repetitions": True}, "repetitions"),
    ({"connections": "per-host"}, "connections"),
])
def test_bad_input_is_named(kwargs: dict[str, object], name: str) -> None:
    args: dict[str, object] = {"parties": 10, "rounds": 2, "repetitions": 1, **kwargs}
    with pytest.raises(ParameterError, match=name):
        estimate_run(**args)  # type: ignore[arg-type]


def test_the_ready_wait_follows_the_start_up_estimate() -> None:
    """60 s for small runs; 3x the estimated start-up (START_CPU + the per-party set-up, over the run's share)
    beyond: 10^5 parties with a connection each on the loaded machine, 3 (4 + 240) / (2 / 5.9) = 2,159 s (a
    fixed 60 s failed them, issue 23)."""
    assert ready_timeout_floor(1000, machine=LOADED) == 60.0
    assert ready_timeout_floor(100_000, machine=LOADED) == pytest.approx(
        3 * (START_CPU + 100_000 * SETUP_CPU["per-party"]) / (2 / 5.9))
    assert ready_timeout_floor(100_000, "per-worker", machine=LOADED) == pytest.approx(
        3 * (START_CPU + 100_000 * SETUP_CPU["per-worker"]) / (2 / 5.9))
    with pytest.raises(ParameterError, match="connections"):
        ready_timeout_floor(10, "per-host")


def test_auto_keeps_a_connection_per_party_up_to_the_setup_bound_then_shares() -> None:
    """The threshold is where the per-party start-up's CPU crosses AUTO_SETUP_CPU (independently: solve
    START + k x set-up = bound for k), checked one party either side, with no file-descriptor bound, whatever
    this machine's load."""
    edge = math.floor((AUTO_SETUP_CPU - START_CPU) / SETUP_CPU["per-party"])
    assert 10_000 < edge < 20_000  # about 17,000 with the measured constants, as the docstring says
    assert choose_connections(edge, nofile=10**9)[0] == "per-party"
    assert choose_connections(edge + 1, nofile=10**9)[0] == "per-worker"
    assert "set up" in choose_connections(edge + 1, nofile=10**9)[1]
    assert choose_connections(100_000)[0] == "per-worker"  # the run: 10^5 parties
    assert choose_connections(5) == ("per-party", f"5 parties: per-party up to {edge:,} (their set-up estimated "
                                                  "within 45 CPU-s)")


def test_auto_shares_when_the_sockets_exceed_the_file_descriptor_limit() -> None:
    limit = 1000
    assert choose_connections(limit - FD_HEADROOM, nofile=limit)[0] == "per-party"
    choice, why = choose_connections(limit - FD_HEADROOM + 1, nofile=limit)
    assert choice == "per-worker" and "file-descriptor limit 1000" in why


def test_resolve_keeps_what_was_asked_for_and_refuses_others() -> None:
    assert resolve_connections("per-party", 100_000, nofile=10**6) == ("per-party", "asked for")
    assert resolve_connections("per-worker", 5) == ("per-worker", "asked for")
    assert resolve_connections("auto", 5)[0] == "per-party"
    with pytest.raises(ParameterError, match="per-host"):
        resolve_connections("per-host", 5)
    with pytest.raises(ParameterError, match="parties"):
        choose_connections(0)


def test_per_party_asked_for_past_the_file_descriptor_limit_is_refused_naming_the_remedies() -> None:
    """auto's bound (k + FD_HEADROOM <= limit, checked one party either side) refuses an explicit per-party at
    once, instead of the workers' readiness failing after 60 s; per-worker has no such bound."""
    limit = 1000
    fits = limit - FD_HEADROOM  # 744 sockets + 256 = 1000
    assert resolve_connections("per-party", fits, nofile=limit) == ("per-party", "asked for")
    with pytest.raises(ParameterError) as refused:
        resolve_connections("per-party", fits + 1, nofile=limit)
    assert str(refused.value) == (
        "cannot run with connections per-party: a socket for each of 745 parties would exceed the "
        "file-descriptor limit 1000 (it needs about 1001); use --connections per-worker "
        "(connections='per-worker'), or raise the limit (ulimit -n 1001) and run again")
    assert resolve_connections("per-worker", 100, nofile=64) == ("per-worker", "asked for")
    assert resolve_connections("auto", 100, nofile=64) == (
        "per-worker", "a socket for each of 100 parties would exceed the file-descriptor limit 64")
    with pytest.raises(ParameterError, match="parties"):
        resolve_connections("per-party", 0, nofile=limit)
