"""What the central observer believes after a round: the posterior of f(x) and of the number of ones.

Under the uniform prior of 002 eq. (1) the parties' bits are independent given the transcript tau, with
p_i = P(x_i = 1 | tau_i) = M_i[1, tau_i] / (M_i[0, tau_i] + M_i[1, tau_i]); the number of ones s is
Poisson-binomial, pi_tau(s) = P(sum_i x_i = s | tau) (:func:`mpdp.protocols.rules.symmetric.count_posterior`), and
for a symmetric f(x) = g(|x|)

    P(f(x) = y | tau) = sum_{s : g(s) = y} pi_tau(s),        E[s | tau] = sum_s s pi_tau(s).

The optimal zero-one rule of 002 eq. (2) decides argmax_y P(f(x) = y | tau); the first quantity at the
decision is the observer's posterior probability of being right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction
from mpdp.protocols.randomization.mechanisms import RandomizedResponse, posterior_table
from mpdp.protocols.rules.symmetric import count_posterior

__all__ = ["RoundPosterior", "round_posterior"]


@dataclass(frozen=True, slots=True, eq=False)
class RoundPosterior:
    """The observer's posterior for each transcript of a round.

    Attributes:
        output: float64 (repetitions, |Y|): ``output[r, y] = P(f(x) = y | tau_r)``; rows sum to 1.
        expected_ones: float64 (repetitions,): ``E[sum_i x_i | tau_r]``, in [0, k].
    """

    output: NDArray[np.float64]
    expected_ones: NDArray[np.float64]

    def of(self, decisions: NDArray[np.integer[Any]]) -> NDArray[np.float64]:
        """float64 (repetitions,): the posterior probability of each repetition's decision."""
        decisions = np.asarray(decisions, dtype=np.intp)
        chosen: NDArray[np.float64] = self.output[np.arange(decisions.size), decisions]
        return chosen


def round_posterior(
    mechanisms: Sequence[RandomizedResponse], function: BooleanFunction, symbols: NDArray[np.uint8]
) -> RoundPosterior:
    """The posterior of f(x) and of the number of ones given each transcript (module docstring).

    Args:
        mechanisms: the k participants' randomized responses, in the order of ``symbols``' columns.
        function: a symmetric function (``count_values(k)`` is not None).
        symbols: uint8 (repetitions, k), participant j's symbol in column j.

    Raises:
        ParameterError: a function that is not symmetric, a shape mismatch, or a symbol outside a
            party's alphabet.
    """
    k = len(mechanisms)
    g = function.count_values(k)
    if g is None:
        raise ParameterError("function", function.name, "a symmetric function (majority, sum, xor, ...)")
    symbols = np.asarray(symbols)
    if symbols.ndim != 2 or symbols.shape[1] != k:
        raise ParameterError("symbols", symbols.shape, f"shape (repetitions, {k})")
    alphabet = np.array([m.num_symbols for m in mechanisms], dtype=np.int64)
    if symbols.size and ((symbols < 0) | (symbols >= alphabet)).any():
        raise ParameterError("symbols", int(symbols.max()), "each party's symbols in 0..m_i-1")
    p = posterior_table(mechanisms)[np.arange(k), symbols.astype(np.intp)]
    counts = count_posterior(p)
    indicator = np.zeros((k + 1, function.output_size(k)))
    indicator[np.arange(k + 1), g] = 1.0
    return RoundPosterior(counts @ indicator, counts @ np.arange(k + 1, dtype=np.float64))
