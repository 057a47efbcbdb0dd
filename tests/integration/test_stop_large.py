"""SIGTERM stops a long computation within a second (issue 23): the count engine at k = 10^7 identical
parties runs ~4.9 s of CPU on the 2-core machine (617 MB peak); it is killed in the middle, after 2.5 s of
CPU (past the imports, in the parties' grouping or the engine), and must exit with 143 (128 + SIGTERM) after
at most 1 s of its own CPU time. Every pass over the parties runs in blocks of a bounded number of items
(:mod:`mpdp.protocols.numerics.blocks`, whose test bounds one block's CPU; the engine's convolution in blocks
of 10^7 products), so the longest C call does not grow with k: 0.08-0.28 s to stop when signalled at 1-4.5 s
of CPU (load ~9), where one phase held the handler 0.9-1.1 s before (and at 3 x 10^6, the size this test
had meanwhile, the whole run now ends before 2.5 s of CPU). CPU time, not wall time: beside 8 CPU burners and
the rest of the suite the process gets a tenth of a core or less. Before the engine's convolution ran in
blocks, one numpy call held the signal handler for 3 s of CPU."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil

from tests.calibration import scaled


def test_sigterm_stops_the_count_engine_at_ten_million_parties_within_a_second() -> None:
    proc = subprocess.Popen([sys.executable, "-m", "mpdp", "accuracy", "--epsilon", "1*10000000", "--function",
                             "majority", "--rule", "average", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        watched = psutil.Process(proc.pid)
        while proc.poll() is None and sum(watched.cpu_times()[:2]) < 2.5:
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be stopped mid-computation"
        at_signal = sum(watched.cpu_times()[:2])
        proc.send_signal(signal.SIGTERM)
        cpu, deadline = at_signal, time.monotonic() + scaled(30.0)
        while proc.poll() is None and time.monotonic() < deadline:  # its CPU time until it is gone (20 ms stale)
            try:
                cpu = sum(watched.cpu_times()[:2])
            except psutil.NoSuchProcess:
                break
            time.sleep(0.02)
        _, err = proc.communicate(timeout=scaled(30.0))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:  # a failed check above must not leave the pipe to the next test's warnings
            proc.stderr.close()
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert err.strip().splitlines()[-1] == "mpdp: interrupted"
    assert cpu - at_signal < 1.0, f"SIGTERM took {cpu - at_signal:.2f} s of CPU to stop the run"
