"""Likelihood factors: one party, or a group of parties with equal parameters, seen through counts.

A factor is a set of parties (``members``) that share one randomized response. Its *input classes* are
j = the number of ones among its members (0..n); its *transcript classes* c are the members' symbols up to
permutation (a single party: its symbol; a pure group: the number of 1-symbols; a four-output group: the
counts (c0, c1, c2, c3)). Because P(tau | x) = prod_i M_i[x_i, tau_i] (002 eq. (8)), the whole protocol's
class likelihood is the Kronecker product of its factors' matrices, and for a function of the number of
ones (and parties with equal parameters) the optimal rules can be taken constant on classes: permuting the
members of a group maps the problem onto itself (002 eqs. (4)-(6) are invariant; average the LP solution
over the group to get a symmetric one of the same value).

Each factor carries
  * ``forward`` F[j, c] = P(class c | j ones among the members), rows sum to one (002 eq. (9), 000 §5.1);
  * ``posterior`` B[j, c] = P(j ones | class c) under the uniform prior of 002 eq. (1), columns sum to one
    (a class of probability zero gets the prior);
  * ``prior`` pi[j] = C(n, j) / 2^n.

For a pure group F[j, c] = (Binomial(j, p) * Binomial(n - j, q))[c] (the reported-1 count is a sum of
two binomials), computed by the recurrence F[j + 1] = F[j] (q + p z) / (p + q z) on generating functions,
restarted from an exact convolution every ``_RESTART`` rows; by Bayes with the uniform prior
B = F^T. Every row is a proper distribution, so nothing underflows where it matters (k up to 10^4).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray
from scipy.special import logsumexp

from mpdp.protocols.errors import SizeLimitError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.numerics.binomial import log_binomial_pmf
from mpdp.protocols.numerics.blocks import block_slices, object_ids, stable_group_order
from mpdp.protocols.numerics.kron import Matrix
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, truth_and_flip

__all__ = ["FOUR_OUTPUT_GROUP_MAX", "PURE_GROUP_DENSE_MAX", "Factor", "band_uses_filter",
           "banded_count_likelihood", "banded_rows", "check_group_size", "compositions", "group_members", "group_parties", "lazy_imports",
           "likelihood_nonzeros", "pure_count_likelihood", "symmetric_groups"]

_RESTART = 32
_FFT_MIN = 512  # convolutions and bands at least this wide go through numpy's FFT
_BAND = 1e-30
#: Largest pure group held as a dense (n+1) x (n+1) likelihood; larger ones are banded sparse.
PURE_GROUP_DENSE_MAX = 2000
#: Largest four-output group (its classes are the compositions of n into 4 parts, ~n^3/6).
FOUR_OUTPUT_GROUP_MAX = 60


def _binom_pmf(n: int, p: float, q: float, lo: int = 0, hi: int | None = None) -> NDArray[np.float64]:
    """Binomial(n, p) pmf at lo..hi (default 0..n), q = 1 - p given separately (no cancellation), in log
    space (:func:`mpdp.protocols.numerics.binomial.log_binomial_pmf`): ~1e-14 relative, and no overflow where p or
    q is subnormal (epsilon near 709, where ``scipy.stats.binom.pmf`` raises OverflowError)."""
    if n == 0:
        return np.ones(1)
    with np.errstate(divide="ignore"):  # log 0 = -inf: a degenerate Bernoulli
        log_p, log_q = float(np.log(p)), float(np.log(q))
    return np.exp(log_binomial_pmf(np.arange(lo, n + 1 if hi is None else hi + 1), n, log_p, log_q))


def _fft_size(size: int) -> int:
    """The power of two >= size (numpy's FFT is fastest there)."""
    return 1 << max(0, size - 1).bit_length()


def _convolve(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """a * b: directly below 512 entries, else by numpy's FFT (absolute error ~1e-16 of the largest
    entry, clipped at 0; as scipy.signal.fftconvolve, without its import: ~50 MB and a second)."""
    if min(a.size, b.size) < _FFT_MIN:
        return np.convolve(a, b)
    size = a.size + b.size - 1
    fft = _fft_size(size)
    return np.clip(np.fft.irfft(np.fft.rfft(a, fft) * np.fft.rfft(b, fft), fft)[:size], 0.0, None)


def _advanced_rows(row: NDArray[np.float64], p: float, q: float, steps: int) -> NDArray[np.float64]:
    """:func:`_next_row` applied 1..steps times at once: row k - 1 of the result (its first ``row.size + k``
    entries) is the count pmf with k more holders of 1. In the Fourier domain each step multiplies by
    H = (q + p z) / (p + q z), of modulus 1 on the unit circle (an all-pass filter): the powers H^k neither
    grow nor shrink, so the rows carry the FFT's absolute error ~1e-16 of the largest entry, as the
    restart rows (:func:`_convolve`); the series' wrap-around is the band's dropped mass (< 1e-30)."""
    fft = _fft_size(row.size + steps + 64)
    z = np.exp(-2j * np.pi * np.arange(fft // 2 + 1) / fft)
    h = np.ones(z.size) if p == q else (q + p * z) / (p + q * z)
    spectra = np.fft.rfft(row, fft) * np.cumprod(np.broadcast_to(h, (steps, h.size)), axis=0)
    out: NDArray[np.float64] = np.clip(np.fft.irfft(spectra, fft, axis=1)[:, : row.size + steps], 0.0, None)
    return out


def _next_row(row: NDArray[np.float64], p: float, q: float) -> NDArray[np.float64]:
    """The count pmf with one more holder of 1 from the current one: multiply by (q + p z), divide by
    (p + q z) (one step of the recursive filter; length + 1)."""
    from scipy.signal import lfilter  # imported here: scipy.signal costs seconds, small groups skip it

    g = np.zeros(row.size + 1)
    g[:-1] = q * row
    g[1:] += p * row
    return np.clip(lfilter([1.0], [p, q], g), 0.0, None)


def pure_count_likelihood(n: int, epsilon: float) -> NDArray[np.float64]:
    """F[j, c] = P(c parties report 1 | j of the n parties hold 1) under pure randomized response.

    Args:
        n: group size >= 0. epsilon: the common privacy level (0..inf).

    Returns:
        float64 array of shape (n + 1, n + 1); every row sums to one. Source: 002 eq. (9).
    """
    p, q = truth_and_flip(epsilon)
    if q == 0.0:
        return np.eye(n + 1)
    out = np.empty((n + 1, n + 1))
    row = np.empty(0)
    for j in range(n + 1):
        if j % _RESTART == 0 or n < _RESTART:  # small n: every row exact (and no scipy.signal import)
            row = _convolve(_binom_pmf(j, p, q), _binom_pmf(n - j, q, p))
        else:
            row = _next_row(row, p, q)[: n + 1]
        out[j] = row
    return out


@lru_cache(maxsize=64)
def compositions(n: int) -> NDArray[np.int64]:
    """The classes of a four-output group: all (c0, c1, c2, c3) >= 0 summing to n, int64 (C(n+3, 3), 4),
    ordered by c0, then c3, then c2."""
    return np.array([(c0, n - c0 - c3 - c2, c2, c3) for c0 in range(n + 1)
                     for c3 in range(n + 1 - c0) for c2 in range(n + 1 - c0 - c3)], dtype=np.int64)


def _trimmed_pmf(n: int, p: float, q: float) -> tuple[int, NDArray[np.float64]]:
    """Binomial(n, p) pmf restricted to where it exceeds ``_BAND`` times its maximum: (start, values)."""
    if n == 0:
        return 0, np.ones(1)
    sd = np.sqrt(n * p * q)
    mean = n * p
    lo = max(0, int(np.floor(mean - 14 * sd - 2)))
    hi = min(n, int(np.ceil(mean + 14 * sd + 2)))
    vals = _binom_pmf(n, p, q, lo, hi)
    keep = np.flatnonzero(vals > _BAND * vals.max())
    return lo + int(keep[0]), vals[keep[0]: keep[-1] + 1]


def lazy_imports(n: int, mechanism: RandomizedResponse) -> tuple[str, ...]:
    """The modules building the likelihood of a group of n parties sharing ``mechanism`` imports on first
    use (their cost: :func:`mpdp.protocols.numerics.cost.import_seconds`): scipy.stats for a four-output group,
    scipy.signal where rows follow by the recursive filter (a dense pure group of at least ``_RESTART``,
    or a banded one whose band is narrower than ``_FFT_MIN``: the middle restart row's width, measured)."""
    if n < 2:
        return ()
    if mechanism.four_output:
        return ("scipy.stats", "scipy.signal") if n >= _RESTART else ("scipy.stats",)
    p, q = truth_and_flip(mechanism.epsilon)
    if q == 0.0 or n < _RESTART:
        return ()
    return ("scipy.signal",) if n <= PURE_GROUP_DENSE_MAX or band_uses_filter(n, mechanism.epsilon) else ()


def likelihood_nonzeros(n: int, mechanism: RandomizedResponse) -> int:
    """About how many nonzero entries the likelihood F (n + 1 input classes x the group's transcript classes)
    of n parties sharing ``mechanism`` has, without building it: a four-output group's all, a pure group's
    band (the middle restart row's width, :func:`banded_rows`, and the rows' growth between restarts) per
    row. What an LP over it carries, and what the symmetric engine's cost model scales a band's with
    (:mod:`mpdp.protocols.decision.engine_cost`)."""
    if mechanism.four_output:
        return math.comb(n + 3, 3) * (n + 1)
    p, q = truth_and_flip(mechanism.epsilon)
    if q == 0.0:
        return n + 1
    if n < _RESTART:
        return (n + 1) ** 2
    # every row after a restart is one entry wider than the one before it: (_RESTART - 1) / 2 on average,
    # the bulk of a narrow band (epsilon 8: ~25 wide at its restarts, 62,525 modelled without this against
    # 98,312 built at n = 2,500)
    width = _restart_row(n, n // 2 - n // 2 % _RESTART, p, q)[1].size + (_RESTART - 1) // 2
    return (n + 1) * min(n + 1, width)


def band_uses_filter(n: int, epsilon: float) -> bool:
    """Whether :func:`banded_rows` of n parties at ``epsilon`` steps its rows by the recursive filter (and so
    imports scipy.signal): its band, the middle restart row's width, is narrower than ``_FFT_MIN``."""
    p, q = truth_and_flip(epsilon)
    return q > 0.0 and n >= _RESTART and _restart_row(n, n // 2 - n // 2 % _RESTART, p, q)[1].size < _FFT_MIN


def _restart_row(n: int, j: int, p: float, q: float) -> tuple[int, NDArray[np.float64]]:
    """(first count, row j of the banded likelihood), exact: the convolution of the two trimmed binomials,
    trimmed to its entries above ``_BAND`` times its maximum."""
    a0, a = _trimmed_pmf(j, p, q)
    b0, b = _trimmed_pmf(n - j, q, p)
    row = _convolve(a, b)
    keep = np.flatnonzero(row > _BAND * row.max())
    return a0 + b0 + int(keep[0]), row[keep[0]: keep[-1] + 1]


def banded_rows(n: int, epsilon: float) -> Iterator[tuple[int, NDArray[np.float64]]]:
    """The rows of :func:`banded_count_likelihood`, one at a time: (first count c, F[j, c:c + len]) for
    j = 0..n (epsilon = inf: the identity's), each row's band of entries above ``_BAND`` times its maximum, every
    ``_RESTART``-th row exact and the rows between from it: by FFT where the band is at least ``_FFT_MIN``
    wide (:func:`_advanced_rows`; absolute error ~1e-16, as the FFT-made restart rows of that width; no
    scipy.signal import, ~50 MB), else by the recursive filter (relative ~1e-15 down to the band's edge)."""
    p, q = truth_and_flip(epsilon)
    if q == 0.0:  # epsilon = inf: the reports are the bits
        yield from ((j, np.ones(1)) for j in range(n + 1))
        return
    for j in range(0, n + 1, _RESTART):
        lo, row = _restart_row(n, j, p, q)
        yield lo, row
        steps = min(_RESTART - 1, n - j)
        if row.size >= _FFT_MIN:  # a wide band: all the rows to the next restart at once, by FFT
            for k, advanced in enumerate(_advanced_rows(row, p, q, steps), start=1):
                yield lo, advanced[: min(row.size + k, n + 1 - lo)]
            continue
        for _ in range(steps):  # a narrow band: the recursive filter, each entry to a relative ~1e-15
            row = _next_row(row, p, q)
            if lo + row.size > n + 1:
                row = row[: n + 1 - lo]
            yield lo, row


def banded_count_likelihood(n: int, epsilon: float) -> sp.csr_matrix[np.float64]:
    """:func:`pure_count_likelihood` as a sparse band: entries below ``_BAND`` times their row's
    maximum are dropped (each row keeps ~25 standard deviations around its mode; the dropped mass is
    below 1e-25 per row). Memory O(n^1.5) instead of n^2: the engine for groups of thousands.

    Returns:
        scipy.sparse CSR float64 of shape (n + 1, n + 1).
    """
    if truth_and_flip(epsilon)[1] == 0.0:
        return sp.identity(n + 1, format="csr")
    starts = np.empty(n + 1, dtype=np.int64)
    data = []
    for j, (lo, row) in enumerate(banded_rows(n, epsilon)):
        starts[j] = lo
        data.append(row)
    indptr = np.concatenate([[0], np.cumsum([r.size for r in data])])
    index = np.int32 if indptr[-1] < 2**31 else np.int64  # scipy keeps int32 indices where they fit
    values: NDArray[np.float64] = np.empty(int(indptr[-1]))
    indices: NDArray[np.integer[Any]] = np.empty(int(indptr[-1]), dtype=index)
    for j in range(n + 1):  # row by row, each freed once copied: no one call over all ~16 n^1.5 entries
        values[indptr[j]: indptr[j + 1]] = data[j]
        indices[indptr[j]: indptr[j + 1]] = np.arange(starts[j], starts[j] + data[j].size, dtype=index)
        data[j] = data[j][:0]
    return sp.csr_matrix((values, indices, indptr.astype(index)), shape=(n + 1, n + 1))


def _four_output_group(n: int, mech: RandomizedResponse) -> NDArray[np.float64]:
    """log F[j, class] for a four-output group, classes as in :func:`compositions` (000 §5.1)."""
    from scipy.stats import binom  # imported here: scipy.stats costs seconds, pure groups skip it

    comps = compositions(n)
    pure = [pure_count_likelihood(m, mech.epsilon) for m in range(n + 1)]
    j = np.arange(n + 1)[:, None]
    c0, c2, c3 = comps[:, 0][None, :], comps[:, 2][None, :], comps[:, 3][None, :]
    unrevealed = n - c0 - c3
    ones_hidden = j - c3
    ok = (ones_hidden >= 0) & (ones_hidden <= unrevealed)
    with np.errstate(divide="ignore"):
        logf = binom.logpmf(c3, j, mech.delta) + binom.logpmf(c0, n - j, mech.delta)
        hidden = np.zeros(np.shape(logf))
        for idx in np.argwhere(ok):
            jj, cc = idx
            hidden[jj, cc] = pure[unrevealed[0, cc]][ones_hidden[jj, cc], c2[0, cc]]
        logf = np.where(ok, logf + np.log(hidden), -np.inf)
    return logf


def check_group_size(n: int, mechanism: RandomizedResponse) -> None:
    """Refuse a group of n parties sharing ``mechanism`` larger than a likelihood factor holds: a four-output
    group's classes are the compositions of n into four parts (~n^3 / 6). A pure group of any size is a
    factor (its banded likelihood); whether building it fits is the cost model's to say
    (:func:`mpdp.protocols.decision.engine_cost.symmetric_rule_cost`, time and memory).

    Raises:
        SizeLimitError: a four-output group above ``FOUR_OUTPUT_GROUP_MAX``."""
    if mechanism.four_output and n > FOUR_OUTPUT_GROUP_MAX:
        raise SizeLimitError("four-output group size", n, FOUR_OUTPUT_GROUP_MAX,
                             "split the group or use pure randomized response")


@dataclass(frozen=True, slots=True)
class Factor:
    """A group of parties with one shared mechanism, as a likelihood factor.

    Args:
        members: party indices (0-based, increasing) of the group.
        mechanism: their common randomized response.

    Raises:
        SizeLimitError: a four-output group (n >= 2) above ``FOUR_OUTPUT_GROUP_MAX``.
    """

    members: tuple[int, ...]
    mechanism: RandomizedResponse
    _tables: dict[str, Matrix] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_group_size(len(self.members), self.mechanism)

    @property
    def n(self) -> int:
        """Number of members."""
        return len(self.members)

    @property
    def singleton(self) -> bool:
        """True for a single party (its classes are its symbols)."""
        return self.n == 1

    def _build(self) -> None:
        mech, n = self.mechanism, self.n
        forward: Matrix
        posterior: Matrix
        if self.singleton:
            forward = mech.channel
            post1 = mech.posterior_one
            posterior = np.vstack([1.0 - post1, post1])
        elif not mech.four_output and n > PURE_GROUP_DENSE_MAX:
            forward = banded_count_likelihood(n, mech.epsilon)
            posterior = forward.T  # CSC view; B = F^T as for the dense case
        elif not mech.four_output:
            forward = pure_count_likelihood(n, mech.epsilon)
            posterior = forward.T.copy()
        else:
            logf = _four_output_group(n, mech)
            forward = np.exp(logf)
            logpost = logf + log_binomial_pmf(np.arange(n + 1), n, math.log(0.5), math.log(0.5))[:, None]
            norm = logsumexp(logpost, axis=0)
            impossible = ~np.isfinite(norm)
            posterior = np.exp(logpost - np.where(impossible, 0.0, norm))
            posterior[:, impossible] = _binom_pmf(n, 0.5, 0.5)[:, None]
        self._tables.update(forward=forward, posterior=posterior)

    @property
    def forward(self) -> Matrix:
        """F[j, c] = P(class c | j ones), float64 (n + 1, num_classes); rows sum to one (sparse band for
        a pure group above ``PURE_GROUP_DENSE_MAX``)."""
        if not self._tables:
            self._build()
        return self._tables["forward"]

    @property
    def posterior(self) -> Matrix:
        """B[j, c] = P(j ones | class c) under the uniform prior, float64 (n + 1, num_classes)."""
        if not self._tables:
            self._build()
        return self._tables["posterior"]

    @property
    def prior(self) -> NDArray[np.float64]:
        """pi[j] = C(n, j) / 2^n, float64 (n + 1,)."""
        return _binom_pmf(self.n, 0.5, 0.5)

    @property
    def num_classes(self) -> int:
        """Number of transcript classes: m (one party), n + 1 (pure group), C(n + 3, 3) (four-output)."""
        m = self.mechanism.num_symbols
        if self.singleton:
            return m
        return self.n + 1 if m == 2 else (self.n + 1) * (self.n + 2) * (self.n + 3) // 6

    def class_of(self, symbols: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
        """Transcript class of the members' symbols.

        Args:
            symbols: uint8/int array of shape (N, n), the members' symbols in member order.

        Returns:
            int64 array of shape (N,), class indices in 0..num_classes-1.
        """
        s = np.asarray(symbols, dtype=np.int64)
        if self.singleton:
            column: NDArray[np.int64] = s[:, 0]
            return column
        if not self.mechanism.four_output:
            return self.input_class_of(s)
        comps = compositions(self.n)
        n = self.n
        lookup = np.full((n + 1, n + 1, n + 1), -1, dtype=np.int64)
        lookup[comps[:, 0], comps[:, 3], comps[:, 2]] = np.arange(comps.shape[0])
        counts = np.stack([(s == v).sum(axis=1) for v in range(4)], axis=1)
        classes: NDArray[np.int64] = lookup[counts[:, 0], counts[:, 3], counts[:, 2]]
        return classes

    def input_class_of(self, bits: NDArray[np.integer[Any]]) -> NDArray[np.int64]:
        """Input class (number of ones) of the members' bits: (N, n) -> int64 (N,)."""
        ones: NDArray[np.int64] = np.asarray(bits, dtype=np.int64).sum(axis=1)
        return ones


def group_members(mechanisms: Sequence[RandomizedResponse], parties: Sequence[int] | NDArray[np.int64] | None = None
                  ) -> list[tuple[RandomizedResponse, NDArray[np.int64]]]:
    """The parties (default all) grouped by equal mechanism: (mechanism, int64 party indices ascending) per
    group, groups in the order of their first member. Parties sharing one mechanism object (as
    :func:`mpdp.parties.api.params.randomized_responses` makes them) are grouped by identity in numpy,
    so 10^6 parties of a few objects cost ~0.1 s, not a Python loop over 10^6 hashes; every pass over the
    parties runs in blocks (:mod:`mpdp.protocols.numerics.blocks`: a stop signal is handled within
    milliseconds, even at 10^7 parties)."""
    idx = np.arange(len(mechanisms)) if parties is None else np.asarray(parties, dtype=np.int64)
    ids = object_ids(mechanisms)
    if parties is not None:
        ids = ids[idx]
    if idx.size == 0:
        return []
    if (ids == ids[0]).all():  # one object: no sort
        return [(mechanisms[int(idx[0])], idx)]
    distinct = np.unique(np.concatenate([np.unique(ids[s]) for s in block_slices(ids.size)]))
    inverse = np.empty(ids.size, dtype=np.int64)  # position -> its object's index in distinct
    first = np.full(distinct.size, ids.size, dtype=np.int64)  # each object's first position
    for s in block_slices(ids.size):
        inverse[s] = np.searchsorted(distinct, ids[s])
        seen, at = np.unique(inverse[s], return_index=True)
        first[seen] = np.minimum(first[seen], at + s.start)
    label = np.empty(first.size, dtype=np.int64)  # each distinct object -> its group (equal mechanisms merge)
    groups: dict[RandomizedResponse, int] = {}
    for u in np.argsort(first, kind="stable"):
        label[u] = groups.setdefault(mechanisms[int(idx[first[u]])], len(groups))
    for s in block_slices(ids.size):
        inverse[s] = label[inverse[s]]
    order, sizes = stable_group_order(inverse, len(groups))
    members = order if parties is None else idx[order]
    return list(zip(groups, np.split(members, np.cumsum(sizes)[:-1]), strict=True))


def group_parties(
    mechanisms: tuple[RandomizedResponse, ...], parties: Sequence[int] | NDArray[np.int64], grouped: bool
) -> tuple[Factor, ...]:
    """Factors for the given parties: one per party, or one per distinct mechanism (``grouped``).

    Groups appear in the order of their first member; members keep party order."""
    if not grouped:
        return tuple(Factor((i,), mechanisms[i]) for i in parties)
    groups = group_members(mechanisms, parties)
    for mech, members in groups:  # before any member tuple: 10^6 parties' would hold ~90 MB
        check_group_size(members.size, mech)
    return tuple(Factor(tuple(members.tolist()), mech) for mech, members in groups)


def symmetric_groups(mechanisms: Sequence[RandomizedResponse], function: BooleanFunction,
                     observer: int | None = None) -> tuple[Factor, ...] | None:
    """The symmetric engine's groups of parties with equal parameters (:func:`group_parties`, grouped) other
    than ``observer``, or None for a function that is not symmetric (``count_values(k)`` None): what its cost
    estimates start from, nothing else built.

    Raises:
        SizeLimitError: a group larger than a likelihood factor holds."""
    k = len(mechanisms)
    if function.count_values(k) is None:
        return None
    parties = np.arange(k) if observer is None else np.delete(np.arange(k), observer)
    return group_parties(tuple(mechanisms), parties, grouped=True)
