"""m MPyC compute servers as local processes for a whole session: one MPyC session, one round per job,
and no process left behind.

:class:`ServerCluster` makes each server's X25519 key pair (the parties seal their shares to the public
keys; each private key goes to its server's process only, in a file readable by the owner) and Ed25519
signing key, starts the m processes (:mod:`mpdp.parties.mpc.server`; they talk over MPyC's own loopback
TCP links, connected once for the session), and per round hands each server its :class:`RoundJob` on its
standard input and reads its signed release from its standard output. A release is returned only if every
server's signature verifies and all agree. Ahead of the first round, :meth:`ServerCluster.expect` hands the
servers the parties' session sealing keys (signed in their "ready"): each server derives its key with each
party then, not inside the round. :func:`secure_release` is the one-round library call
(shares made here, as the parties would make them).

MPyC has no dropout tolerance: a server that dies or never starts makes the others wait for it, so a
server exiting with an error or the deadline passing fails the round loudly (:class:`WorkerError`), and
the cluster ends every server process (also on any error or interrupt: servers exit when their standard
input closes, and :meth:`ServerCluster.close` kills what is left).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.control import FreshnessGuard
from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.mpc_messages import SumRelease
from mpdp.broker.ports import LOOPBACK
from mpdp.broker.sealed import generate_x25519_key_pair
from mpdp.broker.signing import generate_key_pair, verify_message
from mpdp.parties.mpc.sealed_shares import ShareSealer, seal_shares
from mpdp.parties.mpc.server import RoundJob, ServerKeys, write_keys
from mpdp.parties.mpc.sharing import check_servers, field_modulus, share_bits
from mpdp.protocols.errors import ParameterError, ProtocolViolation, WorkerError
from mpdp.protocols.numerics.cost import noun
from mpdp.protocols.randomization.threshold_release import GeometricTable, ReleaseTable

__all__ = ["DEFAULT_DEADLINE", "ServerCluster", "ServerCost", "agreed_release", "free_port_block", "round_jobs",
           "secure_release", "server_jobs"]

#: Seconds a secure round (including the servers' start) may take before the run fails.
DEFAULT_DEADLINE = 120.0

_STOP_GRACE = 5.0


@dataclass(frozen=True, slots=True)
class ServerCost:
    """What one round cost one server.

    Attributes:
        received: bytes of its job (its sealed shares and the public table, as JSON) from the coordinator.
        sent: bytes it sent to the other servers over MPyC's links (MPyC's message headers included).
        cpu: its process's CPU seconds in the round.
    """

    received: int
    sent: int
    cpu: float


class ServerCluster:
    """m compute servers for one session (a context manager: ``with ServerCluster(...) as cluster``).

    Args:
        servers, threshold: m >= 1 compute servers, T < m/2 of them may collude.
        session: the session the parties seal their shares to.
        deadline: seconds one round may take (the first includes the servers' start).
        missing: server indices not started (to show that a missing server fails the round).

    Raises:
        ParameterError: m or T out of range.
    """

    def __init__(self, servers: int = 3, threshold: int = 1, *, session: str = "local",
                 deadline: float = DEFAULT_DEADLINE, missing: frozenset[int] = frozenset()) -> None:
        check_servers(servers, threshold)
        if not deadline > 0:
            raise ParameterError("deadline", deadline, "a number of seconds > 0")
        self.servers, self.threshold, self.session, self.deadline = servers, threshold, session, deadline
        self._keys = [generate_x25519_key_pair() for _ in range(servers)]
        self._signing = [generate_key_pair() for _ in range(servers)]
        self._missing = missing
        self._folder: Path | None = None
        self._processes: dict[int, subprocess.Popen[bytes]] = {}
        self._buffers: dict[int, bytes] = {}
        self._fresh = FreshnessGuard()
        self._expected = 0  # key files handed to the servers ("expect" lines)
        self._unanswered = 0  # of them, not yet acknowledged by every server
        self._busy = threading.Lock()  # held by a round (run in a worker thread) while it talks to the servers
        #: Per server, what the last round cost it (empty before the first round).
        self.last_costs: tuple[ServerCost, ...] = ()

    @property
    def public_keys(self) -> list[bytes]:
        """The m servers' raw X25519 public keys, in server order (the parties seal to them)."""
        return [public for _, public in self._keys]

    @property
    def signing_keys(self) -> list[bytes]:
        """The m servers' raw Ed25519 public keys (their releases verify with them)."""
        return [public for _, public in self._signing]

    @property
    def running(self) -> bool:
        """Whether the servers were started and not yet closed."""
        return self._folder is not None

    def __enter__(self) -> ServerCluster:
        self.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self.close()

    def start(self) -> None:
        """Start the server processes (they connect to each other while the caller goes on).

        Raises:
            WorkerError: no free block of loopback ports.
        """
        if self.running:
            return
        self._folder = Path(tempfile.mkdtemp(prefix="mpdp-mpc-"))
        try:
            base_port = free_port_block(self.servers)
            for i, ((private, _), (signing, _)) in enumerate(zip(self._keys, self._signing)):
                path = self._folder / f"keys{i}.json"
                write_keys(path, ServerKeys(field_modulus(), self.session, i, private.hex(), signing.hex()))
                if i not in self._missing:
                    self._processes[i] = self._spawn(i, base_port, path)
                    self._buffers[i] = b""
        except BaseException:
            self.close()
            raise

    def _spawn(self, index: int, base_port: int, keys: Path) -> subprocess.Popen[bytes]:
        assert self._folder is not None
        command = [sys.executable, "-m", "mpdp.parties.mpc.server", "-M", str(self.servers), "-I", str(index),
                   "-T", str(self.threshold), "-B", str(base_port), "--no-log", str(keys)]
        with (self._folder / f"server{index}.log").open("wb") as log:  # the child keeps its own descriptor
            return subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                    bufsize=0)

    def expect(self, keys: Mapping[int, bytes]) -> None:
        """Hand every server the parties' session public keys ahead of their first round (starting the
        servers if not yet): each derives its key with each party when it reads them
        (:meth:`mpdp.parties.mpc.sealed_shares.ShareOpener.expect`), while the caller goes on. The caller
        vouches for the keys (each party signed its own in its "ready"). The keys go in a file of the
        cluster's private folder; the servers' input gets one short line (nothing here blocks on a server).
        While a round is with the servers (:meth:`run_round` in its thread) nothing is handed: those parties'
        keys are derived at their first share, as without this call.

        Args:
            keys: party id -> its raw 32-byte X25519 session public key.

        Raises:
            WorkerError: no free block of loopback ports to start the servers.
        """
        if not self._busy.acquire(blocking=False):
            return
        try:
            self.start()
            assert self._folder is not None
            path = self._folder / f"party-keys-{self._expected}.json"
            path.write_text(json.dumps({"parties": [int(p) for p in keys], "keys": [k.hex() for k in keys.values()]}),
                            encoding="utf-8")
            self._expected += 1
            self._unanswered += 1
            line = (json.dumps({"expect": str(path)}) + "\n").encode()
            for process in self._processes.values():
                assert process.stdin is not None
                try:
                    process.stdin.write(line)
                except BrokenPipeError:
                    pass  # the server is gone: the next round fails, naming it
        finally:
            self._busy.release()

    def wait_expected(self) -> list[float]:
        """Wait until every server derived the keys of every :meth:`expect` so far.

        Returns:
            Per server (in order; 0 for one not started), the CPU seconds it spent on them since the last call.

        Raises:
            WorkerError: a server exited, or did not answer within the deadline.
        """
        with self._busy:
            return self._wait_expected()

    def _wait_expected(self) -> list[float]:
        cpu = [0.0] * self.servers
        while self._unanswered:
            for i, line in self._read_lines().items():
                cpu[i] += float(json.loads(line)["cpu"])
            self._unanswered -= 1
        return cpu

    def release(self, jobs: Sequence[RoundJob]) -> tuple[NDArray[np.int64], list[str]]:
        """Run one round: job i to server i; the agreed outputs and every server's signed release JSON.

        Args:
            jobs: m jobs of the same round (:func:`round_jobs`).

        Returns:
            int64 (releases,) (majority: 0/1; sum: counts in 0..n), and the m signed release JSON texts
            (:class:`CuratorRelease`, or :class:`mpdp.broker.mpc_messages.SumRelease`) in server order.

        Raises:
            WorkerError: a server exited, is missing, or did not answer within the deadline; a bad
                signature; servers that disagree.
        """
        if len(jobs) != self.servers:
            raise ParameterError("jobs", len(jobs), f"one job per server ({self.servers})")
        with self._busy:
            return self._release(jobs)

    def _release(self, jobs: Sequence[RoundJob]) -> tuple[NDArray[np.int64], list[str]]:
        self.start()
        lines = [job.to_line().encode() for job in jobs]
        for i, process in self._processes.items():
            assert process.stdin is not None
            try:
                process.stdin.write(lines[i])
            except BrokenPipeError:
                raise self._failure(i, process.wait()) from None
        self._wait_expected()  # the servers answer in order: the keys handed ahead first
        # a missing server: the others wait for it until the deadline
        reports = {i: json.loads(line) for i, line in self._read_lines().items()}
        message = SumRelease if jobs[0].function == "sum" else CuratorRelease
        self.last_costs = tuple(ServerCost(len(lines[i]), int(reports[i]["sent"]), float(reports[i]["cpu"]))
                                for i in range(self.servers))
        releases = {i: str(report["release"]) for i, report in reports.items()}
        outputs = agreed_release(releases, self.signing_keys, message, session=self.session, round=jobs[0].round,
                                 fresh=self._fresh)
        return outputs, [releases[i] for i in range(self.servers)]

    async def run_round(self, jobs: Sequence[RoundJob]) -> tuple[NDArray[np.int64], list[str]]:
        """:meth:`release` in a worker thread (the caller's event loop goes on receiving meanwhile).

        Raises:
            ParameterError, WorkerError: as :meth:`release`.
        """
        return await asyncio.to_thread(self.release, jobs)

    def _read_lines(self) -> dict[int, str]:
        """One line from each running server, within the deadline (WorkerError otherwise). A line already
        read with the one before it (an "expect" acknowledgement and the round's release in one read) is
        taken from the buffer, not waited for."""
        end = time.monotonic() + self.deadline
        lines: dict[int, str] = {}
        while True:
            for i in self._processes:
                if i not in lines and b"\n" in self._buffers[i]:
                    line, self._buffers[i] = self._buffers[i].split(b"\n", 1)
                    lines[i] = line.decode("utf-8")
            if len(lines) == len(self._processes):
                return lines
            pending = {process.stdout.fileno(): i for i, process in self._processes.items()
                       if i not in lines and process.stdout is not None}
            ready, _, _ = select.select(list(pending), [], [], max(0.0, min(0.5, end - time.monotonic())))
            for fd in ready:
                i = pending[fd]
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    raise self._failure(i, self._processes[i].wait())
                self._buffers[i] += chunk
            if time.monotonic() > end and not any(b"\n" in self._buffers[i] for i in self._processes if i not in lines):
                late = sorted(set(self._processes) - set(lines) | self._missing)
                raise WorkerError(f"mpc servers {late} did not finish the round within {self.deadline:g} s "
                                  "(a server missing or stuck fails the round: MPyC has no dropout tolerance)")

    def _failure(self, index: int, code: int) -> WorkerError:
        assert self._folder is not None
        log = (self._folder / f"server{index}.log").read_text(encoding="utf-8", errors="replace")
        return WorkerError(f"mpc server {index} exited with code {code}; the round fails (MPyC has no dropout "
                           f"tolerance); its last output: {log[-500:]!r}")

    def close(self) -> None:
        """End the session: close the servers' input (they shut MPyC down and exit), kill any left after a
        grace period, remove the key files. Safe to call twice."""
        for process in self._processes.values():
            if process.stdin is not None and not process.stdin.closed:
                try:
                    process.stdin.close()
                except BrokenPipeError:
                    pass
        end = time.monotonic() + _STOP_GRACE
        for process in self._processes.values():
            try:
                process.wait(max(0.01, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
            if process.stdout is not None:
                process.stdout.close()
        self._processes.clear()
        if self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def round_jobs(round_index: int, parties: Sequence[int], sealed: Sequence[Sequence[tuple[bytes, bytes]]],
               table: ReleaseTable | GeometricTable, releases: int) -> list[RoundJob]:
    """Every server's job of one round, from the participants' sealed shares.

    Args:
        round_index: the round; parties: the n >= 1 participants' ids.
        sealed: per participant, its m (ephemeral key, ciphertext) pairs in server order.
        table: majority: the public table N(0..n); sum: the geometric mechanism's thresholds.
        releases: independent releases (>= 1).

    Returns:
        m jobs; job i differs between two vote vectors of the same length only in its sealed shares.

    Raises:
        ParameterError: no participants, a table not of n + 1 entries, releases < 1, or ragged shares.
    """
    if releases < 1:
        raise ParameterError("releases", releases, "an integer >= 1")
    if not parties or (isinstance(table, ReleaseTable) and table.scaled.size != len(parties) + 1):
        n = len(parties)
        raise ParameterError("table", n, f"a table of n + 1 = {n + 1} {noun(n + 1, 'entry', 'entries')} "
                             "for n >= 1 participants")
    servers = {len(shares) for shares in sealed}
    if len(sealed) != len(parties) or len(servers) != 1:
        raise ParameterError("sealed", f"{len(sealed)} {noun(len(sealed), 'party', 'parties')}, {sorted(servers)} shares each",
                             "one share per server for every participant")
    scaled = [int(n) for n in table.scaled] if isinstance(table, ReleaseTable) else []
    noise = [int(t) for t in table.thresholds] if isinstance(table, GeometricTable) else []
    return [RoundJob(int(round_index), [int(p) for p in parties],
                     [[e.hex(), c.hex()] for e, c in (shares[i] for shares in sealed)], scaled,
                     table.random_bits, int(releases), noise,
                     "sum" if isinstance(table, GeometricTable) else "majority")
            for i in range(servers.pop())]


def server_jobs(bits: NDArray[np.uint8], table: ReleaseTable | GeometricTable, releases: int, threshold: int,
                server_keys: Sequence[bytes], *, session: str = "local", round_index: int = 0,
                sealers: Sequence[ShareSealer] | None = None) -> list[RoundJob]:
    """The jobs of one round for the votes ``bits``, each voter's shares sealed as its party would seal them.

    Args:
        bits: uint8 (k,), the participants' bits (parties 0..k-1), k >= 1.
        table, releases: as :func:`round_jobs`; threshold: T.
        server_keys: the m servers' raw X25519 public keys.
        session, round_index: the slot the shares are sealed to.
        sealers: the k parties' session sealers, kept over the rounds of a session as the parties keep
            theirs; None: fresh ones (a session of one round).

    Raises:
        ParameterError: as :func:`round_jobs` and :func:`mpdp.parties.mpc.sharing.share_bits`; not k
            sealers.
    """
    if sealers is not None and len(sealers) != len(bits):
        raise ParameterError("sealers", len(sealers), f"one sealer per participant ({len(bits)})")
    shares = share_bits(bits, len(server_keys), threshold)
    sealed = [seal_shares(ShareSealer() if sealers is None else sealers[j], [row[j] for row in shares], server_keys,
                          session=session, round_index=round_index, party=j) for j in range(len(bits))]
    return round_jobs(round_index, list(range(len(bits))), sealed, table, releases)


def secure_release(bits: NDArray[np.uint8], table: ReleaseTable | GeometricTable, releases: int, *, servers: int = 3,
                   threshold: int = 1, deadline: float = DEFAULT_DEADLINE,
                   missing: frozenset[int] = frozenset()) -> NDArray[np.int64]:
    """Draw ``releases`` independent outputs of the release rule at the participants' count, securely
    (one round of a fresh :class:`ServerCluster`).

    Args:
        bits: uint8 (k,), the participants' bits (abstainers already left out), k >= 1.
        table: majority: the public integer table N(0..k) (:func:`mpdp.protocols.randomization.threshold_release.release_table`);
            sum: the geometric mechanism's (:func:`mpdp.protocols.randomization.threshold_release.geometric_table`).
        releases: how many independent releases (>= 1).
        servers, threshold, deadline, missing: as :class:`ServerCluster`.

    Returns:
        int64 (releases,), independent: majority: 1 with probability N(s) / 2^L each, s = sum(bits); sum:
        clamp(s + Z, 0, k) with Z as drawn from the geometric table (``GeometricTable.release_pmf``).

    Raises:
        ParameterError: k = 0, a table not of k + 1 entries, releases < 1, or bad m/T/bits.
        WorkerError: a server failed, or the servers did not finish within the deadline.
    """
    with ServerCluster(servers, threshold, deadline=deadline, missing=missing) as cluster:
        outputs, _ = cluster.release(server_jobs(bits, table, releases, threshold, cluster.public_keys))
    return outputs


def agreed_release(outputs: dict[int, str], signing_public: Sequence[bytes],
                   message: type[CuratorRelease] | type[SumRelease], *, session: str, round: int,
                   fresh: FreshnessGuard) -> NDArray[np.int64]:
    """The release every server signed: ``outputs`` maps server i to its release JSON, verified with
    ``signing_public[i]``, of ``session`` and ``round``, and fresh (``fresh`` remembers each server's last
    accepted release: an expired or replayed one is refused); int64 (releases,).

    Raises:
        WorkerError: a bad signature, another session or round, an expired or replayed release (the
            reason named), or servers that disagree.
    """
    opened = []
    for i, text in sorted(outputs.items()):
        release = message.model_validate_json(text)
        if not verify_message(release, signing_public[i]):
            raise WorkerError(f"mpc server {i}'s release does not verify with its signing key")
        if (release.session, release.round) != (session, round):
            raise WorkerError(f"mpc server {i} released session {release.session!r} round {release.round} "
                              f"for round {round}")
        try:
            fresh.check(release, i, f"mpc server {i}'s release of round {round}")
        except ProtocolViolation as exc:
            raise WorkerError(f"refused ({exc.reason}) {exc.detail}") from None
        opened.append(release.output_array())
    if any(not np.array_equal(o, opened[0]) for o in opened):
        raise WorkerError("mpc servers opened different releases")
    return opened[0]


def free_port_block(size: int, attempts: int = 50) -> int:
    """A base port b with b..b+size-1 free on loopback a moment ago (MPyC's party i listens on b + i).

    Raises:
        WorkerError: no such block found in ``attempts`` random tries.
    """
    rng = random.Random()
    for _ in range(attempts):
        base = rng.randrange(20_000, 60_000 - size)
        sockets: list[socket.socket] = []
        try:
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
