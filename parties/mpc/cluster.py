"""Start m MPyC compute servers as local processes, run one secure release, and leave no process behind.

:func:`secure_release` is the first slice of ``--protocol mpc`` (issue 14): the voters' bits are
Shamir-shared (:func:`mpdp.parties.mpc.sharing.share_bits`) and each share sealed to its server's X25519
key (:mod:`mpdp.parties.mpc.sealed_shares`; a fresh key pair per server and run, the private key handed to
that server's process only, as the runner does with the parties' keys), each server process
(:mod:`mpdp.parties.mpc.server`) gets only its own sealed shares and the public table, the servers talk over
MPyC's own loopback TCP links, only the releases are opened, and each server signs them (Ed25519, a
:class:`mpdp.broker.curator_messages.CuratorRelease`): the run returns them only if every server's
signature verifies and all agree. MPyC has no dropout tolerance: a server
that dies or never starts makes the others wait for it, so a server exiting with an error or the deadline
passing fails the whole run loudly (:class:`WorkerError`) after every server process has been ended.
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.ports import LOOPBACK
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.parties.mpc.sealed_shares import seal_shares
from mpdp.parties.mpc.server import ServerJob, write_job
from mpdp.parties.mpc.sharing import field_modulus, share_bits
from mpdp.protocols.errors import ParameterError, WorkerError
from mpdp.protocols.threshold_release import ReleaseTable

__all__ = ["DEFAULT_DEADLINE", "secure_release", "server_jobs"]

#: Seconds a secure release may take before the servers are ended and the run fails.
DEFAULT_DEADLINE = 120.0

_POLL = 0.05


def secure_release(bits: NDArray[np.uint8], table: ReleaseTable, releases: int, *, servers: int = 3,
                   threshold: int = 1, deadline: float = DEFAULT_DEADLINE,
                   missing: frozenset[int] = frozenset()) -> NDArray[np.uint8]:
    """Draw ``releases`` independent outputs of the release rule at the participants' count, securely.

    Args:
        bits: uint8 (k,), the participants' bits (abstainers already left out), k >= 1.
        table: the public integer table N(0..k) (:func:`mpdp.protocols.threshold_release.release_table`).
        releases: how many independent releases (>= 1) from the one count.
        servers, threshold: m compute servers, T < m/2 of them may collude.
        deadline: seconds before the run is abandoned.
        missing: server indices not started (to show that a missing server fails the run).

    Returns:
        uint8 (releases,): 1 with probability N(s) / 2^L each, s = sum(bits), independent.

    Raises:
        ParameterError: k = 0, a table not of k + 1 entries, releases < 1, or bad m/T/bits.
        WorkerError: a server failed, or the servers did not finish within the deadline.
    """
    keys = [generate_x25519_key_pair() for _ in range(servers)]
    signing = [generate_key_pair() for _ in range(servers)]
    jobs = server_jobs(bits, table, releases, threshold, keys, [private for private, _ in signing])
    with tempfile.TemporaryDirectory(prefix="mpdp-mpc-") as tmp:
        folder = Path(tmp)
        base_port = _free_port_block(servers)
        processes: dict[int, subprocess.Popen[bytes]] = {}
        try:
            for i, job in enumerate(jobs):
                write_job(folder / f"job{i}.json", job)
                if i not in missing:
                    processes[i] = _start_server(i, servers, threshold, base_port, folder)
            _wait(processes, deadline, folder)
        finally:
            for process in processes.values():
                if process.poll() is None:
                    process.kill()
                process.wait()
        outputs = {i: (folder / f"out{i}.json").read_text(encoding="utf-8") for i in processes}
    return _agreed(outputs, [public for _, public in signing])


def server_jobs(bits: NDArray[np.uint8], table: ReleaseTable, releases: int, threshold: int,
                keys: Sequence[tuple[bytes, bytes]], signing_keys: Sequence[bytes], *, session: str = "local",
                round_index: int = 0) -> list[ServerJob]:
    """Everything each server receives: its Shamir shares of the bits, each sealed to its X25519 key as
    party j would seal it, its private key, and the public release data.

    Args:
        bits, table, releases, threshold: as :func:`secure_release`.
        keys: per server, its raw X25519 (private, public) key pair; m = len(keys).
        signing_keys: per server, its raw Ed25519 private key (signs its copy of the release).
        session, round_index: the slot the shares are sealed to.

    Returns:
        m jobs; job i differs between two vote vectors of the same length only in its sealed shares.

    Raises:
        ParameterError: as :func:`secure_release`.
    """
    if releases < 1:
        raise ParameterError("releases", releases, "an integer >= 1")
    if len(bits) < 1 or table.scaled.size != len(bits) + 1:
        raise ParameterError("table", table.scaled.size, f"a table of k + 1 = {len(bits) + 1} entries "
                             "for k >= 1 participants")
    shares = share_bits(bits, len(keys), threshold)
    publics = [public for _, public in keys]
    sealed = [seal_shares([row[j] for row in shares], publics, session=session, round_index=round_index, party=j)
              for j in range(len(bits))]
    scaled = [int(n) for n in table.scaled]
    return [ServerJob(field_modulus(), session, round_index, i, private.hex(), signing_keys[i].hex(),
                      list(range(len(bits))),
                      [[e.hex(), c.hex()] for e, c in (party[i] for party in sealed)], scaled,
                      table.random_bits, int(releases))
            for i, (private, _) in enumerate(keys)]


def _start_server(index: int, servers: int, threshold: int, base_port: int,
                  folder: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "mpdp.parties.mpc.server", "-M", str(servers), "-I", str(index),
               "-T", str(threshold), "-B", str(base_port), "--no-log",
               str(folder / f"job{index}.json"), str(folder / f"out{index}.json")]
    with (folder / f"server{index}.log").open("wb") as log:  # the child keeps its own descriptor
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _wait(processes: dict[int, subprocess.Popen[bytes]], deadline: float, folder: Path) -> None:
    end = time.monotonic() + deadline
    pending = dict(processes)
    while pending:
        for i, process in list(pending.items()):
            code = process.poll()
            if code is None:
                continue
            if code != 0:
                log = (folder / f"server{i}.log").read_text(encoding="utf-8", errors="replace")
                raise WorkerError(f"mpc server {i} exited with code {code}; the round fails (MPyC has no "
                                  f"dropout tolerance); its last output: {log[-500:]!r}")
            del pending[i]
        if pending and time.monotonic() > end:
            raise WorkerError(f"mpc servers {sorted(pending)} did not finish within {deadline} s (a server "
                              "missing or stuck fails the round: MPyC has no dropout tolerance)")
        time.sleep(_POLL)


def _agreed(outputs: dict[int, str], signing_public: Sequence[bytes]) -> NDArray[np.uint8]:
    """The release every server signed (WorkerError: a bad signature, or servers that disagree)."""
    opened = []
    for i, text in outputs.items():
        release = CuratorRelease.model_validate_json(text)
        if not verify_message(release, signing_public[i]):
            raise WorkerError(f"mpc server {i}'s release does not verify with its signing key")
        opened.append(release.output_array())
    if any(not np.array_equal(o, opened[0]) for o in opened):
        raise WorkerError("mpc servers opened different releases")
    return opened[0].astype(np.uint8)


def _free_port_block(size: int, attempts: int = 50) -> int:
    """A base port b with b..b+size-1 free on loopback a moment ago (MPyC's party i listens on b + i)."""
    rng = random.Random()
    for _ in range(attempts):
        base = rng.randrange(20_000, 60_000 - size)
        try:
            sockets = []
            for port in range(base, base + size):
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(sock)
                sock.bind((LOOPBACK, port))
            return base
        except OSError:
            continue
        finally:
            for sock in sockets:
                sock.close()
    raise WorkerError(f"no block of {size} free loopback ports found in {attempts} attempts")
