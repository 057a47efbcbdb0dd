"""Shamir shares of the voters' bits over the prime field of the servers' secure integers (MPyC).

A voter splits its bit b into m shares f(1), ..., f(m) of a random polynomial f of degree T with f(0) = b
over GF(p) (Shamir; :func:`mpyc.thresha.random_split`, coefficients from the OS CSPRNG). Server i (0-based)
holds f(i + 1), the point MPyC's runtime assigns to party i, so the server can use the share as its share
of a secure integer as is. Any T shares are uniform on GF(p)^T whatever b is; any T + 1 recombine b.

The field: the secure integers are ``SECURE_INTEGER_BITS``-bit; MPyC's comparisons need a prime of more than
l + kappa + 1 bits (kappa = 30, MPyC's default statistical security parameter), and its default prime for
that size is :func:`field_modulus` (``mpyc.finfields.find_prime_root``, deterministic), so voters and servers
agree on p without talking. This module imports no MPyC runtime (that one parses ``sys.argv`` on import),
and imports the ``mpyc`` package itself with an empty command line and the root logger restored: on
import it parses ``sys.argv`` (it would read, or choke on, mpdp's own options) and configures logging.
"""

from __future__ import annotations

import functools
import logging
import sys
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from mpdp.broker.mpc_messages import MAX_SERVERS
from mpdp.protocols.errors import ParameterError

__all__ = ["SECURE_INTEGER_BITS", "STATISTICAL_SECURITY", "check_servers", "field_modulus", "recombine", "share_bits"]



def _import_mpyc() -> tuple[ModuleType, ModuleType]:
    """``mpyc.finfields`` and ``mpyc.thresha``, imported as the module docstring says."""
    argv, root = sys.argv, logging.getLogger()
    handlers, level = list(root.handlers), root.level
    sys.argv = [argv[0] if argv else "mpdp", "--no-log"]
    try:
        from mpyc import finfields, thresha
    finally:
        sys.argv = argv
        root.handlers[:] = handlers
        root.setLevel(level)
    return finfields, thresha


finfields, thresha = _import_mpyc()

#: l, the bit length of the servers' secure integers: holds u < 2^L and N(s) <= 2^L for L <= 60, plus sign.
SECURE_INTEGER_BITS = 62

#: kappa, MPyC's default statistical security parameter (``--sec-param``); the servers run with it.
STATISTICAL_SECURITY = 30


@functools.cache
def field_modulus() -> int:
    """p: the prime of GF(p) that the servers' ``SecInt(SECURE_INTEGER_BITS, p)`` computes over."""
    prime, _, _ = finfields.find_prime_root(SECURE_INTEGER_BITS + STATISTICAL_SECURITY + 2, n=2)
    return int(prime)


def share_bits(bits: NDArray[np.uint8], servers: int, threshold: int) -> list[list[int]]:
    """Shamir shares of every bit for every server.

    Args:
        bits: uint8 (n,), values 0/1 (one voter's bit each, or one voter's bits over rounds).
        servers: m >= 1; threshold: T with 0 <= T and 2T < m (MPyC's honest-majority requirement).

    Returns:
        ``shares[i][j]``: server i's share of bit j, an int in 0..p-1.

    Raises:
        ParameterError: a bit other than 0/1, m < 1, or T outside 0..(m-1)//2.
    """
    check_servers(servers, threshold)
    values = np.asarray(bits)
    if values.ndim != 1 or not bool(np.all((values == 0) | (values == 1))):
        raise ParameterError("bits", bits, "a 1-D array of 0/1 values")
    field = finfields.GF(field_modulus())
    rows = thresha.random_split(field, [field(int(b)) for b in values], threshold, servers)
    return [[int(share) for share in row] for row in rows]


def recombine(points: dict[int, list[int]]) -> list[int]:
    """The secrets from shares of T + 1 or more servers: Lagrange interpolation at 0 over GF(p).

    Args:
        points: server index i (0-based) -> its shares (equal lengths).

    Returns:
        the secrets, ints in 0..p-1 (with fewer than T + 1 servers: a value unrelated to the secrets).

    Raises:
        ParameterError: no servers, or share lists of different lengths.
    """
    if not points or len({len(v) for v in points.values()}) != 1:
        raise ParameterError("points", points, "share lists of one length from at least one server")
    field = finfields.GF(field_modulus())
    pairs = [(i + 1, [field(v) for v in shares]) for i, shares in sorted(points.items())]
    return [int(value) for value in thresha.recombine(field, pairs)]


def check_servers(servers: int, threshold: int, servers_name: str = "servers",
                  threshold_name: str = "threshold") -> None:
    """Check m >= 1 servers and T in 0..(m-1)//2 colluders (MPyC's honest majority, T < m/2); the names
    are what errors call them (``--servers`` on the command line).

    Raises:
        ParameterError: m or T out of range (named, with what is allowed).
    """
    if not isinstance(servers, int) or not 1 <= servers <= MAX_SERVERS:
        raise ParameterError(servers_name, servers, f"an integer in 1..{MAX_SERVERS}")
    if not isinstance(threshold, int) or not 0 <= threshold <= (servers - 1) // 2:
        raise ParameterError(threshold_name, threshold, f"an integer in 0..{(servers - 1) // 2} (T < m/2)",
                             hint=f"{threshold} colluding servers need at least {2 * threshold + 1} servers, "
                                  f"not {servers}" if isinstance(threshold, int) and threshold > 0 else None)
