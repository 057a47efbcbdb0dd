"""One compute server's process: the secure count and the central mechanism's release, in MPyC, for every
round of a session in one MPyC session.

Run as ``python -m mpdp.parties.mpc.server -M m -I i -T t -B base_port --no-log KEYS`` (the MPyC runtime
options first, then this program's); :class:`mpdp.parties.mpc.cluster.ServerCluster` starts m of them.
KEYS is a JSON file (:func:`write_keys`, readable by its owner only) with this server's X25519 private key
(it opens the shares sealed to it) and Ed25519 signing key. The m servers connect to each other once
(``mpc.start``) and then serve rounds until their standard input ends. A line ``{"expect": PATH}`` (written
ahead of the first round, :meth:`mpdp.parties.mpc.cluster.ServerCluster.expect`) names a JSON file of the
parties' session public keys ``{"parties": [ids], "keys": [hex]}``, which each party signed in its "ready":
the server derives its key with each of them then (:func:`expect_keys`) and answers ``{"expected": count,
"cpu": seconds}``. Every other line is a round: one JSON line
(:class:`RoundJob`) with this server's Shamir shares of the n participants' bits
(:mod:`mpdp.parties.mpc.sharing`), each sealed to its key (:mod:`mpdp.parties.mpc.sealed_shares`), and the
public table N(0..n) of the release rule (:mod:`mpdp.protocols.randomization.threshold_release`).

Inside the computation: s = sum of the shares (local, mod p: one secure integer), the secret unit vector e_s (MPyC ``unit_vector``:
bit decomposition of s), N(s) = <e_s, N> (local), per release a secret u from L secret random bits, and the
comparison u < N(s). For ``sum`` (:attr:`RoundJob.noise` set) each release is clamp(s + G1 - G2, 0, n)
with G = #{j : u < t_j} for two fresh secret u, found by bisection in bit length of J secure comparisons
(:func:`geometric_by_bisection`; the geometric mechanism of 000,
:class:`mpdp.protocols.randomization.threshold_release.GeometricTable`), a :class:`mpdp.broker.mpc_messages.SumRelease`.
Only the comparisons (or the noisy counts) are opened (to every server); each server signs them with its
Ed25519 key as the release message of the central mechanism
(:class:`mpdp.broker.curator_messages.CuratorRelease`, the same wire message whoever computed it) and
writes one JSON line to its standard output: ``{"release": <that JSON>, "sent": bytes it sent to the other
servers in the round, "cpu": its CPU seconds in the round}``. Anything else the process prints goes to standard
error. A share that does not open, or a malformed job, ends the process with an error (the cluster then
fails the round: MPyC has no dropout tolerance).
The MPyC runtime is imported inside :func:`main` only: it parses ``sys.argv`` on import. The round
computation itself is :func:`round_server`, which a deployed server (``mpdp mpc-server``,
:mod:`mpdp.parties.mpc.deployed_server`) runs on jobs from the broker instead of standard input.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.broker.mpc_messages import SumRelease
from mpdp.parties.mpc.listen import bind_own_address
from mpdp.parties.mpc.sealed_shares import ShareOpener
from mpdp.protocols.numerics.cost import noun

__all__ = ["RoundJob", "ServerKeys", "expect_keys", "geometric_by_bisection", "main", "open_shares", "read_keys",
           "round_server", "share_opener", "write_keys"]


@dataclass(frozen=True, slots=True)
class ServerKeys:
    """What one server holds for the whole session.

    Attributes:
        modulus: p of the field of the shares (:func:`mpdp.parties.mpc.sharing.field_modulus`).
        session: the session the shares are sealed to; server: this server's index i (0-based).
        private_key: this server's raw X25519 private key, hex (given to this server only).
        signing_key: this server's raw Ed25519 private key, hex (signs the releases).
    """

    modulus: int
    session: str
    server: int
    private_key: str
    signing_key: str


@dataclass(frozen=True, slots=True)
class RoundJob:
    """What one server receives for one round.

    Attributes:
        round: the round index (the slot the shares are sealed to).
        parties: the n >= 1 participants' ids.
        sealed: per participant, (the party's session public key, ciphertext) in hex: its share for this server.
        scaled: majority: the public table N(0..n), ints in 0..2^L; sum: empty.
        random_bits: L.
        releases: how many independent releases to draw from the one count (>= 1).
        noise: sum: the geometric mechanism's thresholds t_1..t_J, J >= 0
            (:class:`mpdp.protocols.randomization.threshold_release.GeometricTable`); majority: empty.
        function: ``"majority"`` (the central mechanism of 001) or ``"sum"`` (a noisy count).
    """

    round: int
    parties: list[int]
    sealed: list[list[str]]
    scaled: list[int]
    random_bits: int
    releases: int
    noise: list[int] = field(default_factory=list)
    function: str = "majority"

    def to_line(self) -> str:
        """The job as one JSON line (with its newline); the fields as they are (``asdict`` would deep-copy the
        k sealed shares first: 35 ms of 37 for k = 1,000, under load)."""
        return json.dumps({f.name: getattr(self, f.name) for f in fields(self)}) + "\n"

    @classmethod
    def from_line(cls, line: str) -> RoundJob:
        """Parse :meth:`to_line`.

        Raises:
            ValueError: not a job, or a table that does not have n + 1 entries for n shares, or no shares.
        """
        return cls.from_fields(json.loads(line))

    @classmethod
    def from_fields(cls, fields: dict[str, Any]) -> RoundJob:
        """:meth:`from_line` of the line already parsed (its errors)."""
        job = cls(**fields)
        n = len(job.parties)
        if job.function not in ("majority", "sum") or (job.noise and job.function != "sum"):
            raise ValueError(f"round {job.round}: function {job.function!r} with {len(job.noise)} noise thresholds")
        table = 0 if job.function == "sum" else n + 1
        if not n or len(job.sealed) != n or len(job.scaled) != table or job.releases < 1:
            raise ValueError(f"round {job.round}: for {n} {noun(n, 'party', 'parties')}, {n} sealed "
                             f"{noun(n, 'share')}, a table of {table} {noun(table, 'entry', 'entries')} and "
                             f"releases >= 1 expected, got {len(job.sealed)}, {len(job.scaled)}, {job.releases}")
        return job


def write_keys(path: Path, keys: ServerKeys) -> None:
    """Write ``keys`` as JSON to ``path``, readable and writable by the owner only."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(asdict(keys)))


def read_keys(path: Path) -> ServerKeys:
    """Read keys written by :func:`write_keys`."""
    return ServerKeys(**json.loads(path.read_text(encoding="utf-8")))


def share_opener(keys: ServerKeys) -> ShareOpener:
    """This server's opener of the session's shares (its X25519 key loaded once; one exchange per party)."""
    return ShareOpener(bytes.fromhex(keys.private_key), session=keys.session, server=keys.server)


def open_shares(opener: ShareOpener, job: RoundJob) -> list[int]:
    """This server's shares of one round, opened with its :func:`share_opener` (ints in 0..p-1, in party
    order; keep one opener for the session: later rounds then cost one AEAD call per share).

    Raises:
        ProtocolViolation: a share that does not open (``decrypt``/``plaintext``).
    """
    return [opener.open((bytes.fromhex(e), bytes.fromhex(c)), round_index=job.round, party=party)
            for party, (e, c) in zip(job.parties, job.sealed)]


def expect_keys(opener: ShareOpener, path: Path) -> dict[str, Any]:
    """Derive this server's key with each party of the file ``path`` (``{"parties": [ids], "keys": [hex raw
    X25519 public keys]}``, keys the parties signed in their "ready") before their first share: one X25519
    exchange each now (:meth:`mpdp.parties.mpc.sealed_shares.ShareOpener.expect`), none in the round.

    Returns:
        ``{"expected": keys cached, "cpu": CPU seconds spent}`` (a malformed or low-order key is not cached, nor
        evicts anything: its party's shares open as they would unannounced).

    Raises:
        ValueError, OSError: a file that is not such a table.
    """
    cpu = time.process_time()
    table = json.loads(path.read_text(encoding="utf-8"))
    expected = sum(opener.expect(int(party), bytes.fromhex(key))
                   for party, key in zip(table["parties"], table["keys"], strict=True))
    return {"expected": expected, "cpu": time.process_time() - cpu}


def geometric_by_bisection(less: Callable[[Any, Any], Any], u: Any, thresholds: Sequence[int]) -> Any:
    """G = #{j : u < t_j} for each u of an array by bisection: D = bit length of J secure comparisons
    (``less``, elementwise 0/1) per u instead of J (issue 23: J = 28 comparisons became 5).

    The thresholds t_1 >= ... >= t_J of :class:`mpdp.protocols.randomization.threshold_release.GeometricTable`
    (000, §4.2) are non-increasing, so {j : u < t_j} = {1..G} and G >= m iff u < t_m (t_m = 0, never, for
    m > J). Bit d of G (from the top, d = 1..D) is [u < t_m] at the midpoint m of the interval bits 1..d-1
    leave; the secret t_m is <e_p, t_mid(p)>, e_p the unit vector of those bits (2^(D-1) - 1 products per u).
    The same G as counting every comparison, for every u: the released distribution is exactly the table's.

    Args:
        less: elementwise [a < b] (MPyC ``np_less`` on secure arrays; ``numpy.less`` in plain ints).
        u: the uniforms, an array (secure or int64) of shape (r,), values in 0..2^L - 1.
        thresholds: t_1..t_J, J >= 0, non-increasing.

    Returns:
        G per u, the array type of ``u``'s arithmetic, shape (r,).
    """
    depth = len(thresholds).bit_length()  # 2^D >= J + 1
    table = [*thresholds, *[0] * ((1 << depth) - 1 - len(thresholds))]  # t_1..t_{2^D - 1}
    ones = np.ones(u.shape, dtype=np.int64)
    units: list[Any] = [ones]  # e_p over the prefixes p = (b_1 .. b_{d-1}) of the bits found so far
    g: Any = 0 * ones
    for d in range(1, depth + 1):
        step = 1 << (depth - d)
        chosen = units[0] * table[step - 1]
        for p, e in enumerate(units[1:], start=1):
            chosen = chosen + e * table[2 * p * step + step - 1]
        bit = less(u, chosen)
        g = g + bit * step
        if d < depth:
            units = [part for e in units for part in (e - e * bit, e * bit)]
    return g


def round_server(mpc: Any, keys: ServerKeys,
                 opener: ShareOpener | None = None) -> Callable[[RoundJob], Awaitable[dict[str, Any]]]:
    """This server's round computation in the MPyC runtime ``mpc`` (already started, or started before the
    first call): a coroutine function job -> ``{"release": signed release JSON, "sent": bytes sent to the
    other servers in the round, "cpu": CPU seconds in the round}`` (module docstring). ``opener``: this
    server's :func:`share_opener` for the session (the one :func:`expect_keys` fed); None: a new one.

    Raises (from the returned coroutine):
        ProtocolViolation: a share that does not open with this server's key.
    """
    from mpdp.parties.mpc.sharing import SECURE_INTEGER_BITS

    signing_key = bytes.fromhex(keys.signing_key)
    opener = share_opener(keys) if opener is None else opener
    secint = mpc.SecInt(SECURE_INTEGER_BITS, p=keys.modulus)

    def uniform(job: RoundJob) -> Any:
        """A secret u uniform on 0..2^L - 1 from L secret random bits."""
        bits = mpc.random_bits(secint, job.random_bits)
        return mpc.sum([b * (1 << j) for j, b in enumerate(bits)])

    async def noisy_counts(job: RoundJob, count: Any) -> list[int]:
        """clamp(s + G1 - G2, 0, n) per release, G = #{j : u < t_j} (:func:`geometric_by_bisection`), all 2 x releases
        draws vectorized in MPyC."""
        n, reps, bits = len(job.parties), job.releases, job.random_bits
        if not job.noise:  # no threshold >= 1: the noise is 0 with certainty as drawn
            return [int(v) for v in await mpc.output([count] * reps)]
        random = mpc.np_reshape(mpc.np_random_bits(secint, bits * 2 * reps), (2 * reps, bits))
        u = random @ np.array([1 << j for j in range(bits)], dtype=object)
        g = geometric_by_bisection(mpc.np_less, u, job.noise)
        y = g[:reps] - g[reps:] + count
        y = mpc.np_where(y < 0, 0, y)
        y = mpc.np_where(y > n, n, y)
        return [int(v) for v in await mpc.output(y)]

    async def release(job: RoundJob) -> list[int]:
        # this server's share of s is the sum of its shares of the bits mod p (Shamir sharing is linear): one
        # secure integer, not k of them summed in MPyC
        count = secint(secint.field(sum(open_shares(opener, job)) % keys.modulus))
        if job.function == "sum":
            return await noisy_counts(job, count)
        unit = mpc.unit_vector(count, len(job.scaled))
        scaled = mpc.sum([e * n for e, n in zip(unit, job.scaled)])
        draws = [uniform(job) < scaled for _ in range(job.releases)]
        return [int(r) for r in await mpc.output(draws)]

    def sent() -> int:
        return sum(peer.protocol.nbytes_sent for peer in mpc.parties if peer.pid != mpc.pid)

    async def serve_job(job: RoundJob) -> dict[str, Any]:
        cpu, before = time.process_time(), sent()
        outputs = await release(job)
        message = SumRelease if job.function == "sum" else CuratorRelease
        signed = message.signed(signing_key, session=keys.session, round=job.round, voters=len(job.parties),
                                outputs=np.array(outputs, dtype=np.int64))
        return {"release": signed.model_dump_json(), "sent": sent() - before, "cpu": time.process_time() - cpu}

    return serve_job


def main() -> None:
    """The server process: connect to the other servers, serve every round on stdin, then shut down."""
    results = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # only the releases go to the real standard output

    from mpyc.runtime import mpc  # parses and strips MPyC's own options from sys.argv
    bind_own_address(mpc)  # localhost (``-B``) only, not every interface

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("keys", type=Path)
    args = parser.parse_args()
    keys = read_keys(args.keys)
    opener = share_opener(keys)
    serve_job = round_server(mpc, keys, opener)

    async def serve() -> None:
        await mpc.start()
        loop = asyncio.get_running_loop()
        while line := await loop.run_in_executor(None, sys.stdin.readline):
            fields = json.loads(line)
            report = (expect_keys(opener, Path(fields["expect"])) if "expect" in fields
                      else await serve_job(RoundJob.from_fields(fields)))
            results.write(json.dumps(report) + "\n")
            results.flush()
        await mpc.shutdown()

    mpc.run(serve())


if __name__ == "__main__":
    main()
