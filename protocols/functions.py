"""Functions f: {0,1}^k -> Y = {0..|Y|-1} and accuracy measures w (a |Y| x |Y| matrix).

Bit order (DESIGN.md): the input x as an integer is sum_i x_i 2^(k-1-i), party 0 being the most
significant bit: the order of ``itertools.product([0, 1], repeat=k)``. A truth table lists f in that order.

Named functions (002 §2 and the CLI):

==================  =========================================  ===========
name                value                                      Y
==================  =========================================  ===========
``majority``        1 iff strictly more than k/2 ones           {0, 1}
``passed``          alias of ``majority`` (the House bills)     {0, 1}
``sum``             the number of ones                          {0..k}
``xor``             the parity of the number of ones            {0, 1}
``and`` / ``or``    all ones / at least one one                 {0, 1}
``threshold:T``     1 iff at least T ones                       {0, 1}
``table:V0,V1,..``  any truth table of length 2^k               {0..max V}
==================  =========================================  ===========

Symmetric functions (all but ``table:``) depend on x only through the number of ones s, and know their
values for every k (``count_values(k)``, shape (k+1,)): that is what the symmetric engine uses. A truth
table that happens to be symmetric is detected (its ``count_values``), and :func:`group_values` finds a
table symmetric within groups of parties (a function of the per-group counts of ones), so both reach
the symmetric engine.

Accuracy measures w[y_true, y_hat] (000 eq. (9)): ``zero-one`` (identity), ``absolute-error``
(-|y - y'|) and ``squared-error`` (-(y - y')^2), negative costs so that larger is better. The two error
measures can also be held as their formula (:class:`ErrorMeasure`, :func:`error_measure`), never the
|Y| x |Y| table (``sum`` of 10^5 parties: 80 GB): the engines then decide by the posterior mean or median
(:mod:`mpdp.protocols.decision.error_rules`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError, SizeLimitError

__all__ = [
    "FUNCTION_NAMES",
    "MEASURE_NAMES",
    "BooleanFunction",
    "ErrorMeasure",
    "Measure",
    "SymmetricFunction",
    "TruthTable",
    "accuracy_measure",
    "error_measure",
    "group_values",
    "measure_bounds",
    "parse_function",
]

#: Largest output alphabet |Y| of a truth table (w is a |Y| x |Y| matrix).
MAX_OUTPUTS = 1 << 12

#: Largest k for which a full truth table (2^k entries) is built.
TRUTH_TABLE_MAX_K = 26


class BooleanFunction:
    """Interface of a function f: {0,1}^k -> {0..|Y|-1}."""

    name: str

    def output_size(self, k: int) -> int:
        """|Y| for k parties."""
        raise NotImplementedError

    def truth_table(self, k: int) -> NDArray[np.int64]:
        """f in input order: int64 array of shape (2^k,).

        Raises:
            SizeLimitError: k > ``TRUTH_TABLE_MAX_K``.
            ParameterError: k not allowed for this function (a fixed-size table).
        """
        raise NotImplementedError

    def count_values(self, k: int) -> NDArray[np.int64] | None:
        """For a symmetric f, g with f(x) = g(|x|): int64 array of shape (k+1,); else None."""
        return None

    def __call__(self, bits: Sequence[int] | NDArray[np.integer]) -> int:
        """Evaluate f on one input (a sequence of k bits)."""
        x = np.asarray(bits, dtype=np.int64)
        g = self.count_values(x.size)
        if g is not None:
            return int(g[int(x.sum())])
        index = int(x @ (1 << np.arange(x.size - 1, -1, -1, dtype=np.int64))) if x.size else 0
        return int(self.truth_table(x.size)[index])


def _popcounts(k: int) -> NDArray[np.int64]:
    if k > TRUTH_TABLE_MAX_K:
        raise SizeLimitError(
            "k", k, TRUTH_TABLE_MAX_K, "a truth table has 2^k entries; use a symmetric function"
        )
    counts = np.zeros(1, dtype=np.int64)
    for _ in range(k):  # popcount of 0..2^(j+1)-1 from that of 0..2^j-1
        counts = np.concatenate([counts, counts + 1])
    return counts


def group_values(table: NDArray[np.int64], groups: Sequence[Sequence[int]]) -> NDArray[np.int64] | None:
    """The values of a truth table per vector of group counts, if it depends on nothing else.

    Args:
        table: f over n bits in input order (bit 0 most significant), int64 of shape (2^n,).
        groups: a partition of the bit positions 0..n-1 into groups.

    Returns:
        int64 array over count vectors (s_1, .., s_G), s_g = ones in group g, in mixed radix with the
        first group most significant (shape (prod (n_g + 1),)); None when f is not invariant under
        permutations of the bits within every group. One group of all bits: f = g(|x|), g's values.
    """
    t = np.asarray(table, dtype=np.int64)
    n = t.size.bit_length() - 1
    inputs = np.arange(t.size, dtype=np.int64)
    index = np.zeros(t.size, dtype=np.int64)
    for members in groups:
        ones = np.zeros(t.size, dtype=np.int64)
        for position in members:
            ones += (inputs >> (n - 1 - position)) & 1
        index = index * (len(members) + 1) + ones
    del inputs
    size = math.prod(len(m) + 1 for m in groups)
    values = np.zeros(size, dtype=np.int64)
    values[index] = t  # one of the inputs of each count vector (the last written)
    return values if np.array_equal(values[index], t) else None


@dataclass(frozen=True, slots=True)
class SymmetricFunction(BooleanFunction):
    """A function of the number of ones: f(x) = g_k(|x|).

    Args:
        name: the CLI name (``"majority"``, ``"threshold:3"``, ...).
        of_count: k -> int64 array g of shape (k+1,) with values in 0..output_size(k)-1.
        outputs: k -> |Y|.
    """

    name: str
    of_count: Callable[[int], NDArray[np.integer]] = field(repr=False)
    outputs: Callable[[int], int] = field(repr=False)

    def output_size(self, k: int) -> int:
        return self.outputs(k)

    def count_values(self, k: int) -> NDArray[np.int64]:
        return np.asarray(self.of_count(k), dtype=np.int64)

    def truth_table(self, k: int) -> NDArray[np.int64]:
        return self.count_values(k)[_popcounts(k)]


@dataclass(frozen=True, slots=True)
class TruthTable(BooleanFunction):
    """An arbitrary f given by its values in input order.

    Args:
        values: int sequence of length 2^k (k >= 0), values >= 0.

    Raises:
        ParameterError: a length that is not a power of two, or a negative value.
    """

    values: tuple[int, ...]
    name: str = "table"

    def __post_init__(self) -> None:
        vals = tuple(int(v) for v in self.values)
        n = len(vals)
        if n == 0 or n & (n - 1):
            raise ParameterError("table length", n, "a power of two 2^k (one value per input)")
        if min(vals) < 0 or max(vals) >= MAX_OUTPUTS:
            bad = min(vals) if min(vals) < 0 else max(vals)
            raise ParameterError("table value", bad, f"integers in 0..{MAX_OUTPUTS - 1} (outputs 0..|Y|-1)")
        object.__setattr__(self, "values", vals)

    @property
    def k(self) -> int:
        """The number of parties the table is for."""
        return len(self.values).bit_length() - 1

    def _check_k(self, k: int) -> None:
        if k != self.k:
            raise ParameterError("k", k, f"{self.k} (the truth table has {len(self.values)} entries; {k} "
                                 f"parties need 2^{k} = {2 ** k})")

    def output_size(self, k: int) -> int:
        self._check_k(k)
        return max(self.values) + 1

    def truth_table(self, k: int) -> NDArray[np.int64]:
        self._check_k(k)
        return np.array(self.values, dtype=np.int64)

    def count_values(self, k: int) -> NDArray[np.int64] | None:
        """g with f(x) = g(|x|) when the table is symmetric (it depends only on the number of ones) and
        k is its size, k >= 2; else None. (A one-party table stays a table: the live run asks
        ``count_values(1)`` whether f is a symmetric function of any number of parties, which a table of
        fixed size is not.)"""
        if k != self.k or k < 2:
            return None
        return _symmetric_table(self.values)


@lru_cache(maxsize=16)
def _symmetric_table(values: tuple[int, ...]) -> NDArray[np.int64] | None:
    table = np.array(values, dtype=np.int64)
    g = group_values(table, [range(table.size.bit_length() - 1)])
    if g is not None:
        g.setflags(write=False)
    return g


def _binary(name: str, rule: Callable[[NDArray[np.int64], int], NDArray[np.bool_ | np.int64]]) -> SymmetricFunction:
    return SymmetricFunction(
        name, lambda k: rule(np.arange(k + 1), k).astype(np.int64), lambda k: 2
    )


def _threshold(spec: str) -> SymmetricFunction:
    # named "function" (the whole spec), never "threshold": the CLI maps that name to mpc's --threshold
    try:
        t = int(spec)
    except ValueError:
        raise ParameterError("function", f"threshold:{spec}", "threshold:T with an integer T >= 0, as in "
                             "threshold:3") from None
    if t < 0:
        raise ParameterError("function", f"threshold:{spec}", "threshold:T with an integer T >= 0")
    return _binary(f"threshold:{t}", lambda s, k: s >= t)


def _table(spec: str) -> TruthTable:
    try:
        values = [int(v) for v in spec.replace(" ", "").split(",") if v != ""]
    except ValueError:
        raise ParameterError(
            "table", spec, "comma-separated integers, one per input in input order"
        ) from None
    return TruthTable(tuple(values), name=f"table:{','.join(map(str, values))}"
                      if len(values) <= 16 else f"table:<{len(values)} values>")


_NAMED: dict[str, SymmetricFunction] = {
    "majority": _binary("majority", lambda s, k: 2 * s > k),
    "xor": _binary("xor", lambda s, k: s % 2),
    "and": _binary("and", lambda s, k: s == k),
    "or": _binary("or", lambda s, k: s > 0),
    "sum": SymmetricFunction("sum", lambda k: np.arange(k + 1), lambda k: k + 1),
}
_ALIASES = {"passed": "majority", "parity": "xor", "count": "sum"}

#: Names ``parse_function`` accepts (``threshold:T`` and ``table:...`` take an argument).
FUNCTION_NAMES = (*_NAMED, *_ALIASES, "threshold:T", "table:V0,V1,...")


def parse_function(spec: str, name: str = "function") -> BooleanFunction:
    """Parse a function name as the CLI writes it.

    Args:
        spec: one of ``FUNCTION_NAMES``; ``table:@FILE`` is resolved by the caller (no file I/O here).
        name: how errors name the parameter (e.g. ``"--function"``).

    Raises:
        ParameterError: an unknown name or a malformed argument.
    """
    key = spec.strip().lower()
    if key.startswith("threshold:"):
        return _threshold(key.split(":", 1)[1])
    if key.startswith("table:"):
        return _table(spec.strip().split(":", 1)[1])
    key = _ALIASES.get(key, key)
    if key not in _NAMED:
        raise ParameterError(name, spec, "one of " + ", ".join(FUNCTION_NAMES))
    return _NAMED[key]


_MEASURES: dict[str, Callable[[NDArray[np.int64]], NDArray[np.float64]]] = {
    "zero-one": lambda d: (d == 0).astype(np.float64),
    "absolute-error": lambda d: -np.abs(d).astype(np.float64),
    "squared-error": lambda d: -(d.astype(np.float64) ** 2),
}
_MEASURE_ALIASES = {"zero_one": "zero-one", "neg_abs": "absolute-error",
                    "neg_sq": "squared-error", "absolute": "absolute-error",
                    "squared": "squared-error"}
#: The canonical names ``accuracy_measure`` accepts (it also takes the aliases ``zero_one``, ``neg_abs``, ``neg_sq``, ...).
MEASURE_NAMES = tuple(_MEASURES)


def _measure_key(name: str) -> str:
    """The canonical name of a measure name or alias.

    Raises:
        ParameterError: an unknown name."""
    key = _MEASURE_ALIASES.get(name.strip().lower(), name.strip().lower())
    if key not in _MEASURES:
        raise ParameterError("measure", name, "one of " + ", ".join(MEASURE_NAMES))
    return key


@dataclass(frozen=True, slots=True)
class ErrorMeasure:
    """``absolute-error`` or ``squared-error`` on the outputs 0..|Y|-1 held as its formula,
    ``w[y, y'] = -|y - y'|`` or ``-(y - y')^2``, never as its (|Y|, |Y|) table: what the engines read
    column by column (:mod:`mpdp.protocols.decision.engines`) or not at all (the posterior mean or median,
    :mod:`mpdp.protocols.decision.error_rules`). Build it with :func:`error_measure`.

    Attributes:
        name: the canonical measure name. num_outputs: |Y| >= 1.
    """

    name: str
    num_outputs: int

    @property
    def shape(self) -> tuple[int, int]:
        """(|Y|, |Y|), the shape of the table it stands for."""
        return self.num_outputs, self.num_outputs

    def gain(self, truth: NDArray[np.integer], guess: NDArray[np.integer]) -> NDArray[np.float64]:
        """float64, ``w[truth, guess]`` computed elementwise (numpy broadcasting: ``truth[:, None]`` and
        ``guess[None, :]`` give the table's block of those rows and columns)."""
        return _MEASURES[self.name](np.asarray(truth, dtype=np.int64) - np.asarray(guess, dtype=np.int64))


#: An accuracy measure as the engines take it: the table w, float64 (|Y|, |Y|), or an error measure's formula.
Measure = NDArray[np.float64] | ErrorMeasure


def error_measure(name: str, num_outputs: int) -> ErrorMeasure | None:
    """``name`` (or an alias) as an :class:`ErrorMeasure` on |Y| = ``num_outputs`` outputs; None for
    ``zero-one`` (its table, the identity, stays the one the engines read).

    Raises:
        ParameterError: an unknown name or |Y| < 1.
    """
    key = _measure_key(name)
    if num_outputs < 1:
        raise ParameterError("num_outputs", num_outputs, "an integer >= 1")
    return None if key == "zero-one" else ErrorMeasure(key, int(num_outputs))


def measure_bounds(measure: Measure) -> tuple[float, float]:
    """(min w, max w): the range every accuracy of the measure lies in (an error measure's without its
    table: -(|Y| - 1) or -(|Y| - 1)^2, and 0)."""
    if isinstance(measure, ErrorMeasure):
        return float(measure.gain(np.zeros(1, dtype=np.int64), np.full(1, measure.num_outputs - 1))[0]), 0.0
    w = np.asarray(measure, dtype=np.float64)
    return float(w.min()), float(w.max())


def accuracy_measure(name: str, num_outputs: int) -> NDArray[np.float64]:
    """The accuracy measure w as a float64 matrix of shape (|Y|, |Y|), ``w[y_true, y_hat]``.

    Args:
        name: ``zero-one``, ``absolute-error`` or ``squared-error`` (also ``zero_one``, ``neg_abs``).
        num_outputs: |Y| >= 1.

    Raises:
        ParameterError: an unknown name or |Y| < 1.
    """
    key = _measure_key(name)
    if num_outputs < 1:
        raise ParameterError("num_outputs", num_outputs, "an integer >= 1")
    y = np.arange(num_outputs)
    return _MEASURES[key](y[:, None] - y[None, :])
