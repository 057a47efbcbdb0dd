"""The API's keyword arguments made into the library's objects: each party's randomized response, f."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.parties.api.value_lists import parse_list
from mpdp.protocols.errors import ParameterError
from mpdp.protocols.functions import BooleanFunction, parse_function
from mpdp.protocols.numbers import refuse_bool
from mpdp.protocols.numerics.blocks import block_slices, float_array
from mpdp.protocols.randomization.mechanisms import RandomizedResponse

__all__ = ["check_count", "function_of", "per_party_values", "randomized_responses"]


def check_count(name: str, value: Any, low: int = 1) -> int:
    """An integer keyword of the API (a count, an index, a seed) as an ``int``: an ``int`` or numpy integer
    ``>= low``; a float is refused even when whole (``k=1e3``: ``1e3`` is the float 1000.0), as are a bool
    and text.

    Raises:
        ParameterError: named ``name``, saying ``an integer >= low`` (and, for a whole float, the integer to
            write instead).

    Example:
        >>> check_count("k", 30), check_count("seed", np.int64(0), low=0)
        (30, 0)
    """
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)) and value >= low:
        return int(value)
    whole = isinstance(value, (float, np.floating)) and float(value).is_integer() and value >= low
    raise ParameterError(name, value, f"an integer >= {low}",
                         hint=f"a float; write {int(value)}" if whole else None)


def per_party_values(value: float | str | Sequence[float], name: str) -> list[float]:
    """``epsilon=`` or ``delta=`` of the API as a list of floats: a number as one value, a text as the
    command line reads ``--epsilon`` (:func:`mpdp.parties.api.value_lists.parse_list`: ``"0.5,1"``,
    ``"1*3"``), a sequence value by value.

    Raises:
        ParameterError: (named ``name``) a text that is not such a list (``"0.5:2"``, ``"a"``), an item that
            is not a number, or a bool (``epsilon=True`` is not epsilon = 1).

    Example:
        >>> per_party_values("0.5,1*2", "epsilon"), per_party_values(2, "epsilon"), per_party_values([1, 3], "delta")
        ([0.5, 1.0, 1.0], [2.0], [1.0, 3.0])
    """
    if isinstance(value, str):
        return parse_list(value, name)
    refuse_bool(name, value, "a number, a text such as '0.5,1*3', or a sequence of numbers")
    if isinstance(value, (int, float)):
        return [float(value)]
    try:
        values = list(value)
        numbers = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ParameterError(name, value, "a number, a text such as '0.5,1*3', or a sequence of numbers") from None
    if {bool, np.bool_} & set(map(type, values)):  # one pass over the types: 0.4 s at 10^7 values
        i = next(i for i, v in enumerate(values) if isinstance(v, bool | np.bool_))
        refuse_bool(f"{name}[{i}]", values[i], "a number")
    return numbers


def randomized_responses(epsilon: float | str | Sequence[float], delta: float | str | Sequence[float] = 0.0,
                         parties: int | None = None) -> list[RandomizedResponse]:
    """One randomized response per party: four-output for every party if any delta > 0.

    Args:
        epsilon: one epsilon (nats, in [0, inf]) for ``parties`` parties, or one per party; a text is read as
            ``--epsilon`` (:func:`per_party_values`: ``"0.5,1"``, ``"1*3"``).
        delta: one delta in [0, 1) for all, or one per party (a text as ``epsilon``).
        parties: k with a single epsilon; with a list, None or its length.

    Raises:
        ParameterError: a bad epsilon or delta, lists of different lengths, a missing or mismatching k.

    Example:
        >>> [(m.epsilon, m.num_symbols) for m in randomized_responses([0.5, 1.0], delta=[0.0, 0.1])]
        [(0.5, 4), (1.0, 4)]
    """
    epsilons = per_party_values(epsilon, "epsilon")
    parties = None if parties is None else check_count("parties", parties)
    if len(epsilons) == 1 and parties is not None:
        epsilons = epsilons * parties
    elif parties is not None and parties != len(epsilons):
        raise ParameterError("parties", parties, f"omitted or the number of epsilon values ({len(epsilons)})")
    if not epsilons:
        raise ParameterError("epsilon", epsilon, "one value per party (or one value and parties=K)")
    deltas = per_party_values(delta, "delta")
    if len(deltas) not in (1, len(epsilons)):
        raise ParameterError("delta", f"{len(deltas)} values", f"1 or {len(epsilons)} (one per party)")
    # two (k,) arrays converted in blocks, no (k, 2) copy (160 MB at 10^7: 0.4 s of page faults in one call)
    eps = float_array(epsilons)
    dels = np.broadcast_to(float_array(deltas), eps.shape)
    four = bool((dels > 0).any())
    if (eps == eps[0]).all() and (dels == dels[0]).all() and not np.isnan([eps[0], dels[0]]).any():  # one pair
        return [RandomizedResponse(float(eps[0]), float(dels[0]), four_output=four)] * eps.size

    def keys(s: slice) -> NDArray[np.complex128]:  # (epsilon, delta) as one number, ordered as the pairs
        return eps[s] + 1j * dels[s]

    distinct = np.unique(np.concatenate([np.unique(keys(s)) for s in block_slices(eps.size)]))
    shared = [RandomizedResponse(e.real, e.imag, four_output=four) for e in distinct.tolist()]  # one frozen object each
    out: list[RandomizedResponse] = []
    for s in block_slices(eps.size):  # in blocks, as the conversion above: a signal is handled in milliseconds
        out.extend(map(shared.__getitem__, np.searchsorted(distinct, keys(s)).tolist()))
    return out


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

