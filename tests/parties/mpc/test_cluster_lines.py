"""The cluster reads one line per server per call; a server that wrote two lines that arrived in one read (the
acknowledgement of keys handed ahead, then its round's release) has its second line taken from the buffer.
Before, the second call waited on the descriptor for a line already read and failed the round at the deadline
(seen once in the full suite: "mpc servers [0] did not finish the round within 75.5 s")."""

from __future__ import annotations

import subprocess
from pathlib import Path

from mpdp.parties.mpc.cluster import ServerCluster


def _server(script: str) -> subprocess.Popen[bytes]:
    """A stand-in server process that writes ``script``'s lines and stays alive (as a server does)."""
    return subprocess.Popen(["sh", "-c", f"printf '{script}'; exec sleep 60"], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, bufsize=0)


def test_two_lines_in_one_read_are_two_calls_without_waiting(tmp_path: Path) -> None:
    cluster = ServerCluster(3, 1, deadline=30.0)
    both, one, other = (_server('{"expected": 3}\\n{"round": 0}\\n'), _server('{"expected": 3}\\n'),
                        _server('{"expected": 3}\\n'))
    try:
        assert both.stdout is not None
        chunk = b""
        while chunk.count(b"\n") < 2:  # server 0's two lines, read before the cluster looks (as in one read)
            chunk += both.stdout.read(64) or b""
        assert chunk == b'{"expected": 3}\n{"round": 0}\n'
        cluster._processes, cluster._buffers = {0: both, 1: one, 2: other}, {0: chunk, 1: b"", 2: b""}
        assert cluster._read_lines() == {i: '{"expected": 3}' for i in range(3)}
        cluster._processes = {0: both}  # the others have no second line: only server 0's is asked for
        assert cluster._read_lines() == {0: '{"round": 0}'}
        assert cluster._buffers[0] == b""
    finally:
        for process in (both, one, other):
            process.kill()
            process.wait()
            assert process.stdout is not None
            process.stdout.close()
        cluster._processes = {}
