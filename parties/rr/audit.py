"""A live privacy audit of a randomized-response party: its real publishing path, measured.

For each neighbouring input (bit 0, then bit 1) a :class:`mpdp.parties.rr.party.Party` answers signed round
announcements exactly as ``mpdp party`` does (:meth:`Party.respond`: policy, ledger, the sampler, signing);
each answer goes through the wire as the observer sees it: the message's JSON bytes parsed and verified
by the round engine's :class:`mpdp.parties.rounds.engine.SignedReader` against a roster holding the
*configured* mechanism, then checked by :func:`mpdp.parties.rr.observer.mechanism_symbols` (what the
observer records). The recorded symbols are scored and certified by :mod:`mpdp.analysis.privacy.audit`.

Batching: one answer carries ``B K`` repetitions (``B`` outputs of K releases each, up to
:data:`MESSAGE_SYMBOLS` symbols a message) and is cut back into B outputs. The releases of one bit are
independent draws, so the outputs have the distribution of B separate K-release answers; what a batch
does not exercise is per-message signing cost (N / B messages are signed and verified, not N).

Party paths: ``deployed`` is :func:`mpdp.parties.rr.party.secure_sampler` (exact, OS CSPRNG; 93,000 to
171,000 draws/s in pure Python, so N = 10^6 outputs of one release take 12-22 s for both inputs, of which the
wire and the certificate take about 0.5 s: ``benchmarks/bench_audit.py``); ``simulation`` is
the seeded ``RandomizedResponse.sample`` a simulated party calls.

Planted faults (for testing the audit; never in a real party):

* ``double-epsilon``: the party is configured (roster, audit) for epsilon but privatizes with 2 epsilon;
* ``leak:R``: in a fraction R of its outputs the party sends its bit in the clear (the true bit in the
  two-symbol alphabet, the revealing symbol 3 b in the four-symbol one), a leak the observer's checks
  cannot see (every symbol is in the alphabet).
"""

from __future__ import annotations

import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mpdp.analysis.privacy.audit import AuditEstimate, audit_estimate, release_scores, score_offset
from mpdp.analysis.privacy.composition import check_k
from mpdp.broker.messages import Announcement, decode_answer
from mpdp.broker.signing import generate_key_pair
from mpdp.broker.topics import Topics
from mpdp.broker.transport import InMemoryBroker
from mpdp.parties.rounds.engine import SignedReader
from mpdp.parties.rounds.party_spec import PartySpec
from mpdp.parties.rounds.roster import Roster
from mpdp.parties.rr.observer import mechanism_symbols
from mpdp.parties.rr.party import Party, Sampler, secure_sampler
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["FAULTS", "MESSAGE_SYMBOLS", "PARTY_PATHS", "AuditRun", "Fault", "audit_party", "parse_fault"]

#: The party paths an audit can drive.
PARTY_PATHS: tuple[str, str] = ("deployed", "simulation")
#: The planted faults (``leak:R`` with a rate R in (0, 1]).
FAULTS: tuple[str, str, str] = ("none", "double-epsilon", "leak:R")
#: Most symbols one audited message carries (a batch of outputs; see the module docstring).
MESSAGE_SYMBOLS = 50_000

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Fault:
    """A planted fault: ``kind`` in ``none``, ``double-epsilon``, ``leak``; ``rate`` the leak's fraction."""

    kind: str = "none"
    rate: float = 0.0

    def __str__(self) -> str:
        return f"leak:{self.rate:g}" if self.kind == "leak" else self.kind


def parse_fault(text: str) -> Fault:
    """``none``, ``double-epsilon`` or ``leak:R`` (R in (0, 1]) as a :class:`Fault`.

    Raises:
        ParameterError: anything else.
    """
    if text in ("none", "double-epsilon"):
        return Fault(text)
    kind, _, rate = text.partition(":")
    try:
        value = float(rate)
    except ValueError:
        value = math.nan
    if kind != "leak" or not 0.0 < value <= 1.0:
        raise ParameterError("--fault", text, "none, double-epsilon or leak:R with a rate R in (0, 1], e.g. leak:0.01")
    return Fault("leak", value)


@dataclass(frozen=True, slots=True)
class AuditRun:
    """An audit's measurement and what it cost.

    Attributes:
        estimate: the certified bound and verdict (:class:`mpdp.analysis.privacy.audit.AuditEstimate`).
        party_path: ``deployed`` or ``simulation``; fault: the planted fault.
        messages: signed messages built, parsed and verified (both inputs); seconds: wall time.
    """

    estimate: AuditEstimate
    party_path: str
    fault: Fault
    messages: int
    seconds: float


def _base_sampler(party_path: str, rng: np.random.Generator) -> Sampler:
    if party_path == "deployed":
        return secure_sampler()
    if party_path == "simulation":
        return lambda mechanism, bit, size: mechanism.sample(bit, size, rng)
    raise ParameterError("--party-path", party_path, " or ".join(PARTY_PATHS))


def _leaky(sampler: Sampler, rate: float, releases: int, rng: np.random.Generator) -> Sampler:
    """``sampler`` whose outputs (rows of ``releases`` symbols) carry the bit in the clear with probability ``rate``."""

    def sample(mechanism: RandomizedResponse, bit: int, size: int) -> NDArray[np.uint8]:
        rows = sampler(mechanism, bit, size).reshape(-1, releases).copy()
        rows[rng.random(rows.shape[0]) < rate] = 3 * bit if mechanism.four_output else bit
        return rows.ravel()

    return sample


def audit_party(epsilon: float, delta: float = 0.0, samples: int = 100_000, *, releases: int = 1,
                party_path: str = "deployed", fault: Fault = Fault(), alpha: float = 0.05,
                seed: int | None = None, progress: Progress | None = None) -> AuditRun:
    """Drive one party's publishing path on bit 0 and bit 1 and certify a lower bound on its epsilon.

    Args:
        epsilon, delta: the party's configured level per release (nats; delta in [0, 1)).
        samples: N >= 1 outputs per input.
        releases: K >= 1 releases (repetitions) per output.
        party_path: ``deployed`` (CSPRNG sampler) or ``simulation`` (seeded generator).
        fault: a planted fault (:func:`parse_fault`).
        alpha: family-wise level of the certificate, in (0, 1).
        seed: seeds the simulation path and the planted leak (None: fresh entropy).
        progress: called with (outputs done, 2 N) after every message.

    Returns:
        :class:`AuditRun`.

    Raises:
        ParameterError: a value outside its domain.
        ProtocolViolation: the observer's checks rejected one of the party's messages (its reason).
    """
    configured = RandomizedResponse(epsilon, delta)
    releases = check_k(releases)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ParameterError("samples", samples, "an integer >= 1")
    if not 0.0 < alpha < 1.0:
        raise ParameterError("alpha", alpha, "a level in (0, 1)")
    rng = np.random.default_rng(seed)
    sampler = _base_sampler(party_path, rng)
    if fault.kind == "leak":
        sampler = _leaky(sampler, fault.rate, releases, rng)
    used = configured if fault.kind != "double-epsilon" else RandomizedResponse(
        2.0 * configured.epsilon, configured.delta, four_output=configured.four_output)
    party_key, public_key = generate_key_pair()
    coordinator_key, coordinator_public = generate_key_pair()
    topics = Topics(f"audit-{secrets.token_hex(6)}")
    reader = SignedReader(topics.session, Roster((configured,), (public_key,)))
    batch = max(1, MESSAGE_SYMBOLS // releases)
    sizes = [min(batch, samples - start) for start in range(0, samples, batch)]
    four = bool(configured.four_output)
    offset = score_offset(releases, four)
    counts: list[NDArray[np.int64]] = []
    started, done = time.perf_counter(), 0
    for bit in (0, 1):
        spec = PartySpec(party=0, bits=np.full(len(sizes), bit, dtype=np.int8), mechanism=used,
                         private_key=party_key)
        party = Party(spec, InMemoryBroker(), topics, coordinator_public, idle_timeout=1.0, sampler=sampler)
        histogram = np.zeros(2 * offset + 1, dtype=np.int64)
        for index, size in enumerate(sizes):
            announcement = Announcement.signed(coordinator_key, session=topics.session, kind="round", round=index,
                                               repetitions=size * releases)
            wire = party.respond(announcement).to_wire()
            message, where = reader.read(decode_answer, topics.party(0), wire, 0, "round")
            symbols = mechanism_symbols(message, configured, where).reshape(size, releases)
            histogram += np.bincount(release_scores(symbols, four) + offset,
                                     minlength=histogram.size)
            done += size
            if progress is not None:
                progress(done, 2 * samples)
        counts.append(histogram)
    estimate = audit_estimate(counts[0], counts[1], epsilon=configured.epsilon, delta=configured.delta,
                              releases=releases, alpha=alpha)
    return AuditRun(estimate, party_path, fault, 2 * len(sizes), time.perf_counter() - started)
