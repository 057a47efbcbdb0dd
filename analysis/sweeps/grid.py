"""The epsilon grid of a sweep and its points' seeds, as sequences whose items are made when read.

A sweep of ``--epsilon 0.1:2:10000000`` names ten million points by three numbers: :class:`EpsilonGrid`
holds those numbers and gives any stretch of the grid on demand (the values of :func:`numpy.geomspace` /
:func:`numpy.linspace` bit for bit: the same operations on the same indices), and :class:`SeedChildren`
gives point i's ``SeedSequence(seed).spawn(n)[i]`` without spawning the n - 1 others. A plan over them is
checked, estimated and refused in memory independent of its number of points.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mpdp.protocols.errors import ParameterError
from mpdp.protocols.numerics.lazy import LazySequence
from mpdp.protocols.randomization.mechanisms import check_epsilon

__all__ = ["SCALES", "EpsilonGrid", "SeedChildren", "epsilon_grid", "grid_of", "grid_range", "grid_text"]

#: Spacing of the epsilon grid.
SCALES = ("log", "linear")
#: Values made at once while a grid is iterated (512 KiB of float64).
_CHUNK = 65_536


@dataclass(frozen=True, slots=True)
class EpsilonGrid(LazySequence[float]):
    """``steps`` values of epsilon from ``low`` to ``high`` (both included), evenly spaced in ``scale``,
    made when read (:func:`grid_range` checks the arguments).

    Attributes:
        low, high: the ends, nats (finite, 0 <= low <= high; low > 0 on a log scale); steps: >= 1;
        scale: ``log`` or ``linear``.
    """

    low: float
    high: float
    steps: int
    scale: str

    def values(self, start: int = 0, stop: int | None = None) -> NDArray[np.float64]:
        """Values ``start`` to ``stop`` (exclusive; None: the end) of the grid, float64 (stop - start,),
        nats: those of ``numpy.geomspace(low, high, steps)`` (log) or ``numpy.linspace`` (linear), computed
        as numpy computes them (index x step + first, 10 ** that on a log scale, the ends exactly)."""
        stop = self.steps if stop is None else stop
        index = np.arange(start, stop, dtype=np.float64)
        if self.steps == 1:
            return np.full(index.size, self.low)
        log = self.scale == "log"
        first, last = (np.log10(np.float64(self.low)), np.log10(np.float64(self.high))) if log else (
            np.float64(self.low), np.float64(self.high))
        out = index * ((last - first) / (self.steps - 1)) + first
        if log:
            out = np.power(10.0, out)
        if start == 0 and out.size:
            out[0] = self.low
        if stop == self.steps and out.size:
            out[-1] = self.high
        return out

    def __len__(self) -> int:
        return self.steps

    def _item(self, index: int) -> float:
        return float(self.values(index, index + 1)[0])

    def __iter__(self) -> Iterator[float]:
        for start in range(0, self.steps, _CHUNK):
            yield from self.values(start, min(self.steps, start + _CHUNK)).tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        return self.values() if dtype is None else self.values().astype(dtype)


def grid_range(low: float, high: float, steps: int, scale: str = "log") -> EpsilonGrid:
    """The :class:`EpsilonGrid` of ``steps`` values from ``low`` to ``high`` in ``scale``, checked.

    Raises:
        ParameterError: epsilon not finite and >= 0, low > high, steps not an integer >= 1, a log scale
            starting at 0 (with more than one step), an unknown scale.
    """
    lo, hi = check_epsilon(low), check_epsilon(high)
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo > hi:
        raise ParameterError("epsilon range", f"{low}:{high}", "finite LO <= HI")
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
        raise ParameterError("steps", steps, "an integer >= 1")
    if scale not in SCALES:
        raise ParameterError("scale", scale, "one of " + ", ".join(SCALES))
    if scale == "log" and lo == 0.0:
        raise ParameterError("epsilon range", f"{low}:{high}", "LO > 0 on a log scale", hint="or scale='linear'")
    return EpsilonGrid(lo, hi, int(steps), scale)


def epsilon_grid(low: float, high: float, steps: int, scale: str = "log") -> NDArray[np.float64]:
    """``steps`` values of epsilon from ``low`` to ``high`` (both included), evenly spaced in ``scale``.

    Returns:
        float64 (steps,), in nats (:meth:`EpsilonGrid.values`).

    Raises:
        ParameterError: as :func:`grid_range`.
    """
    return grid_range(low, high, steps, scale).values()


def grid_of(text: str, scale: str = "log", name: str = "epsilon") -> EpsilonGrid:
    """The grid that ``"LO:HI:STEPS"`` names (:func:`grid_range` in ``scale``); one number ``"E"`` is (E,).
    Its values are made when read: ten million steps take no memory until they run.

    Raises:
        ParameterError: named ``name``: another shape, a value that is not a number, STEPS not an integer
            >= 1; or as :func:`grid_range`.
    """
    parts = text.strip().split(":")
    try:
        low, high, steps = ((float(parts[0]), float(parts[0]), 1) if len(parts) == 1
                            else (float(parts[0]), float(parts[1]), int(parts[2])) if len(parts) == 3
                            else (0.0, 0.0, 0))
    except ValueError:
        steps = 0
    if steps < 1:
        raise ParameterError(name, text, "LO:HI:STEPS (e.g. 0.05:2:20) or one value")
    return grid_range(low, high, steps, scale if steps > 1 else "linear")


def grid_text(values: Sequence[float]) -> str:
    """The grid ``values`` as it is typed: ``"0.05:2:20, log"`` (or ``", linear"``) when they are the
    :func:`epsilon_grid` of their ends (to 1e-9 relative), one value as itself, else the values to 4
    significant digits, comma-separated -- never 20 floats of 17 digits.

    Example:
        >>> grid_text(epsilon_grid(0.05, 2.0, 20)), grid_text([0.5]), grid_text([0.1, 0.2, 0.7])
        ('0.05:2:20, log', '0.5', '0.1, 0.2, 0.7')
    """
    if isinstance(values, EpsilonGrid):
        return f"{values.low:g}" if values.steps == 1 else f"{values.low:g}:{values.high:g}:{values.steps}, {values.scale}"
    v = np.asarray(values, dtype=np.float64)
    if v.size == 1:
        return f"{v[0]:g}"
    if v.size > 2 and np.all(np.diff(v) > 0):
        for scale in ("log", "linear") if v[0] > 0 else ("linear",):
            if np.allclose(epsilon_grid(v[0], v[-1], v.size, scale), v, rtol=1e-9, atol=0.0):
                return f"{v[0]:g}:{v[-1]:g}:{v.size}, {scale}"
    return ", ".join(f"{x:.4g}" for x in v)


@dataclass(frozen=True, slots=True)
class SeedChildren(LazySequence[np.random.SeedSequence]):
    """``SeedSequence(root).spawn(children)``, child i made when read: ``SeedSequence(root, spawn_key=(i,))``,
    the very child ``spawn`` gives (its entropy, its spawn key, the default pool size).

    Attributes:
        root: the root seed (>= 0); children: their number.
    """

    root: int
    children: int

    def __len__(self) -> int:
        return self.children

    def _item(self, index: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(self.root, spawn_key=(index,))

    def __iter__(self) -> Iterator[np.random.SeedSequence]:
        return (np.random.SeedSequence(self.root, spawn_key=(i,)) for i in range(self.children))
