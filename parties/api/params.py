"""The API's keyword arguments made into the library's objects: each party's randomized response, f."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction, parse_function
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["function_of", "randomized_responses"]


def randomized_responses(epsilon: float | Sequence[float], delta: float | Sequence[float] = 0.0,
                         parties: int | None = None) -> list[RandomizedResponse]:
    """One randomized response per party: four-output for every party if any delta > 0.

    Args:
        epsilon: one epsilon (nats, in [0, inf]) for ``parties`` parties, or one per party.
        delta: one delta in [0, 1) for all, or one per party.
        parties: k with a single epsilon; with a list, None or its length.

    Raises:
        ParameterError: a bad epsilon or delta, lists of different lengths, a missing or mismatching k.

    Example:
        >>> [(m.epsilon, m.num_symbols) for m in randomized_responses([0.5, 1.0], delta=[0.0, 0.1])]
        [(0.5, 4), (1.0, 4)]
    """
    epsilons = [epsilon] if isinstance(epsilon, (int, float)) else list(epsilon)
    if parties is not None and (isinstance(parties, bool) or not isinstance(parties, int) or parties < 1):
        raise ParameterError("parties", parties, "an integer >= 1")
    if len(epsilons) == 1 and parties is not None:
        epsilons = epsilons * parties
    elif parties is not None and parties != len(epsilons):
        raise ParameterError("parties", parties, f"omitted or the number of epsilon values ({len(epsilons)})")
    if not epsilons:
        raise ParameterError("epsilon", epsilon, "one value per party (or one value and parties=K)")
    deltas = [delta] if isinstance(delta, (int, float)) else list(delta)
    if len(deltas) == 1:
        deltas = deltas * len(epsilons)
    if len(deltas) != len(epsilons):
        raise ParameterError("delta", f"{len(deltas)} values", f"1 or {len(epsilons)} (one per party)")
    pairs = np.array([list(map(float, epsilons)), list(map(float, deltas))]).T  # (k, 2): 10^6 parties in numpy
    four = bool((pairs[:, 1] > 0).any())
    if (pairs == pairs[0]).all() and not np.isnan(pairs[0]).any():  # one pair: no sort
        return [RandomizedResponse(float(pairs[0, 0]), float(pairs[0, 1]), four_output=four)] * len(pairs)
    distinct, inverse = np.unique(pairs, axis=0, return_inverse=True)
    shared = [RandomizedResponse(e, d, four_output=four) for e, d in distinct.tolist()]  # one frozen object each
    return list(map(shared.__getitem__, inverse.ravel().tolist()))


def function_of(function: str | BooleanFunction) -> BooleanFunction:
    """``function`` parsed (``majority``, ``xor``, ``threshold:T``, ``table:...``) or as given.

    Raises:
        ParameterError: an unknown function name.

    Example:
        >>> import numpy as np
        >>> function_of("threshold:2")(np.array([1, 1, 0]))
        1
    """
    return parse_function(function) if isinstance(function, str) else function

