"""Interactive protocols of k parties (002 §2, 000 eqs. (9)-(15)): transcripts, exact privacy, random draws.

A protocol runs ``rounds`` rounds; in each round parties 0..k-1 broadcast one symbol in turn (message t is
spoken by party ``t % k``). Party i's channel for message t may depend on its own bit and on everything
broadcast before (the *prefix*), never on the other parties' bits::

    channels[t][prefix, b, y] = P(message t = y | x_i = b, prefix)      float64 (m^t, 2, m)

so ``P(tau | x) = prod_t channels[t][tau_<t, x_{t mod k}, tau_t]`` (the rank-one structure of 002 §2).
Transcripts are integers in base m, message 0 most significant; inputs follow the bit order of
:mod:`mpdp.protocols.functions` (party 0 the most significant bit).

Privacy, checked exactly on the transcript matrix (000 eq. (15), set-wise): party i's view is
(eps, delta)-DP iff for every x_{-i} and both orders of (x_i, x_i'),
``sum_tau max(0, P(tau | x_i, x_{-i}) - e^eps P(tau | x_i', x_{-i})) <= delta`` (the worst set S is
where the difference is positive). :func:`view_epsilon` is the smallest eps with delta = 0,
:func:`view_delta` the smallest delta at a given eps.

Random private protocols (:func:`random_protocol`): every message of party i is the (eps, delta)
four-output randomized response (000 §5.1) at a share of party i's budget, garbled by a random channel
chosen afresh for every prefix (a post-processing, so the message stays DP; adaptive composition of the
shares keeps the view within the budget). :func:`repeated_response` is the deliberately non-private
competitor: each party publishes ``rounds`` independent randomized responses at its full epsilon.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError, SizeLimitError
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, check_delta, check_epsilon

__all__ = [
    "MAX_TRANSCRIPTS",
    "InteractiveProtocol",
    "random_protocol",
    "repeated_response",
    "view_delta",
    "view_epsilon",
]

#: Largest number of transcripts m^(k * rounds) a protocol may have (the 2^k x m^T matrix is dense).
MAX_TRANSCRIPTS = 1 << 16


@dataclass(frozen=True, slots=True, eq=False)
class InteractiveProtocol:
    """A k-party interactive protocol over a broadcast channel (see the module docstring).

    Attributes:
        k: number of parties, >= 1.
        symbols: m, the message alphabet size, >= 2.
        channels: one float64 array per message t = 0..T-1 of shape (m^t, 2, m), rows summing to 1.

    Raises:
        ParameterError: a channel of the wrong shape, negative, or with rows not summing to 1.
        SizeLimitError: more than :data:`MAX_TRANSCRIPTS` transcripts.
    """

    k: int
    symbols: int
    channels: tuple[NDArray[np.float64], ...]

    def __post_init__(self) -> None:
        if self.k < 1 or self.symbols < 2:
            raise ParameterError("k, symbols", (self.k, self.symbols), "k >= 1 parties and m >= 2 symbols")
        if not self.channels or len(self.channels) % self.k:
            raise ParameterError("channels", len(self.channels), f"a positive multiple of k = {self.k} messages")
        if self.symbols ** len(self.channels) > MAX_TRANSCRIPTS:
            raise SizeLimitError("transcripts", self.symbols ** len(self.channels), MAX_TRANSCRIPTS,
                                 "fewer rounds, parties or symbols")
        for t, c in enumerate(self.channels):
            shape = (self.symbols**t, 2, self.symbols)
            if c.shape != shape or (c < 0).any() or not np.allclose(c.sum(axis=2), 1.0, atol=1e-12):
                raise ParameterError(f"channels[{t}]", c.shape, f"a stochastic array of shape {shape}")

    @property
    def rounds(self) -> int:
        """Messages per party."""
        return len(self.channels) // self.k

    def transcript_matrix(self) -> NDArray[np.float64]:
        """P[x, tau] = P(tau | x), float64 of shape (2^k, m^T); rows sum to 1."""
        xs = np.arange(1 << self.k)
        p = np.ones((xs.size, 1))
        for t, c in enumerate(self.channels):
            bits = (xs >> (self.k - 1 - t % self.k)) & 1
            step = np.transpose(c[:, bits, :], (1, 0, 2))  # (2^k, m^t, m)
            p = (p[:, :, None] * step).reshape(xs.size, -1)
        return p


def _neighbours(p: NDArray[np.float64], k: int, i: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Rows of P with x_i = 0 and x_i = 1, paired on x_{-i}: two float64 (2^(k-1), |T|)."""
    if not 0 <= i < k:
        raise ParameterError("party", i, f"an index in 0..{k - 1}")
    xs = np.arange(1 << k)
    zero = xs[((xs >> (k - 1 - i)) & 1) == 0]
    return p[zero], p[zero | (1 << (k - 1 - i))]


def view_epsilon(p: NDArray[np.float64], k: int, i: int) -> float:
    """The smallest eps for which party i's view of transcript matrix ``p`` (2^k, |T|) is eps-DP
    (delta = 0): ``max |log P(tau | 0, x_-i) - log P(tau | 1, x_-i)|``; inf if a transcript has
    probability 0 under one bit only. Raises ParameterError for a party index outside 0..k-1."""
    a, b = _neighbours(p, k, i)
    with np.errstate(divide="ignore", invalid="ignore"):
        gap = np.abs(np.log(a) - np.log(b))
    gap = np.where((a == 0) & (b == 0), 0.0, gap)
    return float(gap.max())


def view_delta(p: NDArray[np.float64], k: int, i: int, epsilon: float) -> float:
    """The smallest delta for which party i's view of ``p`` (2^k, |T|) is (epsilon, delta)-DP, by the
    set-wise criterion of 000 eq. (15): the largest hockey-stick divergence over x_{-i} and both
    orders. Raises ParameterError for a bad epsilon or party index."""
    lam = math.exp(min(check_epsilon(epsilon), 700.0))
    a, b = _neighbours(p, k, i)
    forward = np.clip(a - lam * b, 0.0, None).sum(axis=1)
    backward = np.clip(b - lam * a, 0.0, None).sum(axis=1)
    return float(max(forward.max(), backward.max(), 0.0))


def _check_budgets(epsilons: Sequence[float], deltas: Sequence[float] | None,
                   rounds: int, symbols: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    eps = np.array([check_epsilon(e) for e in epsilons], dtype=np.float64)
    if eps.size == 0 or np.isinf(eps).any():
        raise ParameterError("epsilons", list(epsilons), "one finite epsilon >= 0 per party (at least one)")
    dl = np.zeros(eps.size) if deltas is None else np.array([check_delta(d) for d in deltas], dtype=np.float64)
    if dl.size != eps.size:
        raise ParameterError("deltas", list(dl), f"one delta per party ({eps.size})")
    if rounds < 1 or symbols < 2:
        raise ParameterError("rounds, symbols", (rounds, symbols), "rounds >= 1 and symbols >= 2")
    if (dl > 0).any() and symbols < 4:
        raise ParameterError("symbols", symbols, "at least 4 when a delta is > 0 (the four-output response)")
    return eps, dl


def random_protocol(epsilons: Sequence[float], rng: np.random.Generator, *, deltas: Sequence[float] | None = None,
                    rounds: int = 2, symbols: int = 3) -> InteractiveProtocol:
    """A random interactive protocol in which party i's view is (epsilons[i], deltas[i])-DP.

    Party i's budget is split over its ``rounds`` messages by a Dirichlet draw (delta too); message t
    is the four-output randomized response at its share (two-output when delta = 0) followed by a
    random garbling matrix of shape (outputs, symbols), drawn for every prefix: rows from a Dirichlet
    of concentration 0.5, or with probability 1/4 a deterministic map (which keeps the response whole).

    Args:
        epsilons: per party, finite >= 0. deltas: per party in [0, 1), or None (pure DP).
        rng: the generator every draw comes from. rounds: messages per party. symbols: m (>= 4 with delta).

    Raises:
        ParameterError: bad budgets, rounds < 1, symbols < 2 (< 4 with a delta > 0).
        SizeLimitError: more than :data:`MAX_TRANSCRIPTS` transcripts.
    """
    eps, dl = _check_budgets(epsilons, deltas, rounds, symbols)
    k = eps.size
    eps_share = eps[:, None] * rng.dirichlet(np.ones(rounds), size=k)
    delta_share = dl[:, None] * rng.dirichlet(np.ones(rounds), size=k)
    channels = []
    for t in range(k * rounds):
        i, r = t % k, t // k
        base = RandomizedResponse(float(eps_share[i, r]), float(delta_share[i, r]),
                                  four_output=bool(dl[i] > 0)).channel
        outputs = base.shape[1]
        garble = rng.dirichlet(np.full(symbols, 0.5), size=(symbols**t, outputs))
        exact = rng.random(symbols**t) < 0.25  # outputs <= symbols (checked): an injective relabelling
        garble[exact] = np.eye(symbols)[rng.permutation(symbols)[:outputs]]
        channels.append(np.einsum("bo,pos->pbs", base, garble))
    return InteractiveProtocol(k, symbols, tuple(channels))


def repeated_response(epsilons: Sequence[float], rounds: int = 2) -> InteractiveProtocol:
    """Each party publishes ``rounds`` independent randomized responses at its full epsilon: its view is
    (rounds * eps_i)-DP, not eps_i-DP (the deliberately non-private protocol that beats randomized
    response at eps_i). ``rounds = 1`` is randomized response itself.

    Raises:
        ParameterError: an epsilon that is negative, NaN or infinite; rounds < 1.
    """
    eps, _ = _check_budgets(epsilons, None, rounds, 2)
    k = eps.size
    channels = tuple(np.broadcast_to(RandomizedResponse(float(eps[t % k])).channel, (2**t, 2, 2)).copy()
                     for t in range(k * rounds))
    return InteractiveProtocol(k, 2, channels)
