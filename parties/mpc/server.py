"""One compute server's process: the secure count and the central mechanism's release, in MPyC.

Run as ``python -m mpdp.parties.mpc.server -M m -I i -T t -B base_port --no-log JOB OUT`` (the MPyC
runtime options first, then this program's); :mod:`mpdp.parties.mpc.cluster` starts m of them. JOB is a
JSON file (:func:`write_job`) with this server's Shamir shares of the k participants' bits
(:mod:`mpdp.parties.mpc.sharing`), each sealed to this server's X25519 key
(:mod:`mpdp.parties.mpc.sealed_shares`), the server's private key, the public table N(s) of the release rule
(:mod:`mpdp.protocols.threshold_release`), L and the number of releases. Inside the computation:
s = sum of the shares (local), the secret unit vector e_s (MPyC ``unit_vector``: bit decomposition of s),
N(s) = <e_s, N> (local), per release a secret u from L secret random bits, and the comparison u < N(s).
Only the comparisons are opened (to every server); each server signs them with its Ed25519 key as the
release message of the central mechanism (:class:`mpdp.broker.curator_messages.CuratorRelease`, the same
wire message whoever computed it) and writes that JSON to OUT.
The MPyC runtime is imported inside :func:`main` only: it parses ``sys.argv`` on import.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mpdp.broker.curator_messages import CuratorRelease
from mpdp.parties.mpc.sealed_shares import open_share

__all__ = ["ServerJob", "main", "open_shares", "read_job", "write_job"]


@dataclass(frozen=True, slots=True)
class ServerJob:
    """What one server receives.

    Attributes:
        modulus: p of the field of the shares (:func:`mpdp.parties.mpc.sharing.field_modulus`).
        session, round, server: the slot the shares are sealed to (server: this server's index i).
        private_key: this server's raw X25519 private key, hex (given to this server only).
        signing_key: this server's raw Ed25519 private key, hex (signs the release).
        parties: the k >= 1 participants' ids.
        sealed: per participant, (ephemeral public key, ciphertext) in hex: its share for this server.
        scaled: the public table N(0..k), ints in 0..2^L.
        random_bits: L.
        releases: how many independent releases to draw from the one count (>= 1).
    """

    modulus: int
    session: str
    round: int
    server: int
    private_key: str
    signing_key: str
    parties: list[int]
    sealed: list[list[str]]
    scaled: list[int]
    random_bits: int
    releases: int


def write_job(path: Path, job: ServerJob) -> None:
    """Write ``job`` as JSON to ``path``."""
    path.write_text(json.dumps(asdict(job)), encoding="utf-8")


def read_job(path: Path) -> ServerJob:
    """Read a job written by :func:`write_job`.

    Raises:
        ValueError: the table does not have k + 1 entries for k shares, or no shares.
    """
    job = ServerJob(**json.loads(path.read_text(encoding="utf-8")))
    k = len(job.parties)
    if not k or len(job.sealed) != k or len(job.scaled) != k + 1:
        raise ValueError(f"job {path}: {k} parties need {k} sealed shares and a table of {k + 1} entries, "
                         f"got {len(job.sealed)} and {len(job.scaled)}")
    return job


def open_shares(job: ServerJob) -> list[int]:
    """This server's shares, opened with its private key (ints in 0..p-1, in party order).

    Raises:
        ProtocolViolation: a share that does not open (``decrypt``/``plaintext``).
    """
    key = bytes.fromhex(job.private_key)
    return [open_share(key, (bytes.fromhex(e), bytes.fromhex(c)), session=job.session, round_index=job.round,
                       party=party, server=job.server)
            for party, (e, c) in zip(job.parties, job.sealed)]


def main() -> None:
    """The server process: read the job, compute with the other servers, write the opened releases."""
    from mpyc.runtime import mpc  # parses and strips MPyC's own options from sys.argv

    from mpdp.parties.mpc.sharing import SECURE_INTEGER_BITS

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("job", type=Path)
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    job = read_job(args.job)
    shares = open_shares(job)
    secint = mpc.SecInt(SECURE_INTEGER_BITS, p=job.modulus)

    async def compute() -> list[int]:
        await mpc.start()
        votes = [secint(secint.field(share)) for share in shares]
        count = mpc.sum(votes)
        unit = mpc.unit_vector(count, len(job.scaled))
        scaled = mpc.sum([e * n for e, n in zip(unit, job.scaled)])
        releases = []
        for _ in range(job.releases):
            bits = mpc.random_bits(secint, job.random_bits)
            u = mpc.sum([b * (1 << j) for j, b in enumerate(bits)])
            releases.append(u < scaled)
        opened = await mpc.output(releases)
        await mpc.shutdown()
        return [int(r) for r in opened]

    releases = mpc.run(compute())
    release = CuratorRelease.signed(bytes.fromhex(job.signing_key), session=job.session, round=job.round,
                                    voters=len(job.parties), outputs=np.array(releases, dtype=np.uint8))
    args.out.write_text(release.model_dump_json(), encoding="utf-8")


if __name__ == "__main__":
    main()
